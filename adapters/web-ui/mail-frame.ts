// HTML mail in a frame that cannot act: viewer.html (same origin, its own CSP that allows
// the inline styles mail relies on, sandboxed without scripts) holds an inner
// `<iframe sandbox="">`, and the email's HTML becomes that frame's `srcdoc`, after a
// Content-Security-Policy of its own that blocks every remote load until the person
// asks. The sandbox stops scripts, forms, popups, plugins and navigation of the page;
// the CSPs stop remote images, styles and fonts (the viewer's own policy allows what
// "load remote content" then allows, since the policies of a srcdoc frame intersect).

import { el } from './dom';
import { withoutRemoteHosts } from './mail-html';

/** The policy of a mail frame: inline styles and data: images only, or remote ones too once asked. */
export function mailCsp(remote: boolean): string {
    const far = remote ? ' http: https:' : '';
    return [
        'default-src \'none\'',
        `style-src 'unsafe-inline'${far}`,
        `img-src data:${far}`,
        `font-src data:${far}`,
        'base-uri \'none\'',
        'form-action \'none\''
    ].join('; ');
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/**
 * The frame's document: our policy, referrer policy and base target first (the parser
 * puts them in the head, and the first of each wins), then the mail without the URLs
 * that would connect to its hosts (mail-html.ts; the mail's own meta and base go). The base
 * target sends a clicked link to a new window, which the sandbox refuses, so the mail
 * stays in view (links are in their own tab, to copy or open).
 */
export function mailSrcdoc(html: string, remote: boolean): string {
    const head = `<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="${escapeAttribute(mailCsp(remote))}"><meta name="referrer" content="no-referrer"><base target="_blank">`;
    return withoutRemoteHosts(head, html, remote);
}

/** A viewer frame for one email's HTML; `show(remote)` (re)writes the mail into it. */
export function mailFrame(html: string): { frame: HTMLIFrameElement; show(remote: boolean): void } {
    // allow-same-origin only, so this page can reach the inner frame; no scripts run in either.
    const frame = el('iframe', { src: 'viewer.html', class: 'mail-frame', title: 'The email as HTML', sandbox: 'allow-same-origin', referrerpolicy: 'no-referrer' });
    let remote = false;
    const write = () => {
        const inner = frame.contentDocument?.getElementById('mail') as HTMLIFrameElement | null;
        if (inner) {
            inner.srcdoc = mailSrcdoc(html, remote);
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
