// HTML mail in a frame that cannot act: viewer.html (same origin, its own CSP that allows
// the inline styles mail relies on, sandboxed without scripts) holds an inner
// `<iframe sandbox="">`, and the email's HTML becomes that frame's `srcdoc`, after a
// Content-Security-Policy of its own that blocks every remote load until the person
// asks. The sandbox stops scripts, forms, popups, plugins and navigation of the page;
// the CSPs stop remote images, styles and fonts (the viewer's own policy allows what
// "load remote content" then allows, since the policies of a srcdoc frame intersect).
// Inline (`cid:`) images are the email's own attachments: their `cid:` URLs become the
// attachments' signed links, whose origin alone the frame's policy adds.

import { el } from './dom';
import { parserOf, withoutRemoteHosts, type CleanMail } from './mail-html';

/**
 * The policy of a mail frame: inline styles and data: images only, or remote ones too once
 * asked. `ownImages`: the origins of the email's own inline (`cid:`) images, its attachments'
 * signed links, which load without asking: they are the message, not a tracker.
 */
export function mailCsp(remote: boolean, ownImages: string[] = []): string {
    const far = remote ? ' http: https:' : '';
    const own = ownImages.map((origin) => ` ${origin}`).join('');
    return [
        'default-src \'none\'',
        `style-src 'unsafe-inline'${far}`,
        `img-src data:${own}${far}`,
        `font-src data:${far}`,
        'base-uri \'none\'',
        'form-action \'none\''
    ].join('; ');
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** The email's own inline images, as withInlineImages() put them in: their links, and the links' origins. */
export interface InlineImages {
    urls: string[];
    origins: string[];
}

const NO_INLINE_IMAGES: InlineImages = { urls: [], origins: [] };

/**
 * The frame's document: our policy, referrer policy and base target first (the parser
 * puts them in the head, and the first of each wins), then the mail without the URLs
 * that would connect to its hosts (mail-html.ts; the mail's own meta and base go), its
 * inline images' links kept. The base target sends a clicked link to a new window, which
 * the sandbox refuses, so the mail stays in view (links are in their own tab, to copy or open).
 */
export function mailSrcdoc(html: string, remote: boolean, inline: InlineImages = NO_INLINE_IMAGES, parser?: DOMParser): CleanMail {
    const head = `<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="${escapeAttribute(mailCsp(remote, inline.origins))}"><meta name="referrer" content="no-referrer"><base target="_blank">`;
    return withoutRemoteHosts(head, html, remote, new Set(inline.urls), parser);
}

/**
 * The HTML with each `cid:` URL that names one of `links` (by Content-ID, as written or
 * percent-decoded) replaced by that link, attribute-escaped; any other `cid:` stays (and
 * loads nothing). Answers the links it put in and their origins.
 */
export function withInlineImages(html: string, links: Map<string, string>): { html: string } & InlineImages {
    const origins = new Set<string>();
    const urls = new Set<string>();
    const replaced = html.replace(/cid:([^"'\s>)]+)/gi, (whole, id: string) => {
        const link = links.get(id) ?? links.get(decoded(id));
        if (!link) {
            return whole;
        }

        origins.add(new URL(link).origin);
        urls.add(link);
        return escapeAttribute(link);
    });
    return { html: replaced, urls: [...urls], origins: [...origins] };
}

function decoded(id: string): string {
    try {
        return decodeURIComponent(id);
    }
    catch {
        return id;
    }
}

/**
 * A viewer frame for one email's HTML; `show(remote)` (re)writes the mail into it, with its
 * inline images. `written(blocked)` says, each time, whether remote content stays blocked.
 */
export function mailFrame(html: string, inline: InlineImages = NO_INLINE_IMAGES, written: (blocked: boolean) => void = () => undefined): { frame: HTMLIFrameElement; show(remote: boolean): void } {
    // allow-same-origin only, so this page can reach the inner frame; no scripts run in either.
    const frame = el('iframe', { src: 'viewer.html', class: 'mail-frame', title: 'The email as HTML', sandbox: 'allow-same-origin', referrerpolicy: 'no-referrer' });
    let remote = false;
    const write = () => {
        const inner = frame.contentDocument?.getElementById('mail') as HTMLIFrameElement | null;
        const view = frame.contentWindow;
        if (inner && view) {
            // Parsed in the viewer's realm, whose policy allows the mail's inline styles (parserOf()).
            const mail = mailSrcdoc(html, remote, inline, parserOf(view));
            inner.srcdoc = mail.html;
            written(mail.blocked);
        }
    };

    frame.addEventListener('load', write);
    return {
        frame,
        show(allowRemote) {
            remote = allowRemote;
            write();
        }
    };
}
