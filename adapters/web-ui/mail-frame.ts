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

/**
 * The frame's document: our policy, referrer policy and base target first (the parser
 * puts them in the head, and the first of each wins), then the mail as sent. The base
 * target sends a clicked link to a new window, which the sandbox refuses, so the mail
 * stays in view (links are in their own tab, to copy or open).
 */
export function mailSrcdoc(html: string, remote: boolean, ownImages: string[] = []): string {
    return `<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="${escapeAttribute(mailCsp(remote, ownImages))}"><meta name="referrer" content="no-referrer"><base target="_blank">${html}`;
}

/**
 * The HTML with each `cid:` URL that names one of `links` (by Content-ID, as written or
 * percent-decoded) replaced by that link, attribute-escaped; any other `cid:` stays (and
 * loads nothing). Answers the origins of the links it put in.
 */
export function withInlineImages(html: string, links: Map<string, string>): { html: string; origins: string[] } {
    const origins = new Set<string>();
    const replaced = html.replace(/cid:([^"'\s>)]+)/gi, (whole, id: string) => {
        const link = links.get(id) ?? links.get(decoded(id));
        if (!link) {
            return whole;
        }

        origins.add(new URL(link).origin);
        return escapeAttribute(link);
    });
    return { html: replaced, origins: [...origins] };
}

function decoded(id: string): string {
    try {
        return decodeURIComponent(id);
    }
    catch {
        return id;
    }
}

/** A viewer frame for one email's HTML; `show(remote)` (re)writes the mail into it. `ownImages` as for mailCsp(). */
export function mailFrame(html: string, ownImages: string[] = []): { frame: HTMLIFrameElement; show(remote: boolean): void } {
    // allow-same-origin only, so this page can reach the inner frame; no scripts run in either.
    const frame = el('iframe', { src: 'viewer.html', class: 'mail-frame', title: 'The email as HTML', sandbox: 'allow-same-origin', referrerpolicy: 'no-referrer' });
    let remote = false;
    const write = () => {
        const inner = frame.contentDocument?.getElementById('mail') as HTMLIFrameElement | null;
        if (inner) {
            inner.srcdoc = mailSrcdoc(html, remote, ownImages);
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
