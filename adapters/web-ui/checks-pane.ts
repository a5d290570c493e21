// The Checks tab of one email: its HTML against email clients and its authentication
// verdicts (both asked when the tab opens), its links (asked only on a click: the service
// then sends HEAD requests to other hosts). Everything of the answers enters the page as text.

import { InboxCaptureApiError, type Email, type HtmlCheck, type HtmlFinding, type LinkCheck } from '../client/index';
import { describeError, withApi } from './api';
import { authVerdicts } from './auth-verdicts';
import { el, replaceChildren } from './dom';

const isWebUrl = (href: string) => /^https?:/i.test(href);

// The worst findings shown at once; the rest behind a "more" that the keyboard opens too.
const FINDINGS_SHOWN = 5;

// The link results of the open email, kept while it stays open (a tab switch keeps them).
const linkResults = new WeakMap<Email, LinkCheck[]>();

/** A section: its heading, and a body that says "Checking…" until `fill` replaces it. */
function section(id: string, title: string, ...intro: Node[]): { node: HTMLElement; body: HTMLElement } {
    const body = el('div', { class: 'check-body', 'aria-live': 'polite' });
    return { node: el('section', { class: 'check', id, 'aria-labelledby': `${id}-title` }, el('h3', { id: `${id}-title` }, title), ...intro, body), body };
}

/**
 * Client ids grouped by family, shorter to read: `gmail (all), outlook: ios, windows`;
 * "all" is every client of that family the check covered.
 */
function clientFamilies(ids: string[], checked: string[]): string {
    if (ids.length === 0) {
        return '—';
    }

    const family = (id: string) => id.split('.')[0];
    const groups = new Map<string, string[]>();
    for (const id of ids) {
        groups.set(family(id), [...groups.get(family(id)) ?? [], id.slice(family(id).length + 1)]);
    }

    return Array.from(groups, ([name, members]) => members.length === checked.filter((id) => family(id) === name).length
        ? `${name} (all)`
        : `${name}: ${members.join(', ')}`).join('; ');
}

function findingsTable(findings: HtmlFinding[], checked: string[]): Node {
    const clients = (list: string[]) => clientFamilies(list, checked);
    return el('table', { class: 'findings' },
        el('caption', { class: 'sr-only' }, 'Features some client lacks or half-supports, the worst first'),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Feature'), el('th', { scope: 'col' }, 'Not supported by'), el('th', { scope: 'col' }, 'Partly supported by'), el('th', { scope: 'col' }, 'Count'))),
        el('tbody', {}, ...findings.map((f) => el('tr', {},
            el('th', { scope: 'row' }, f.url && isWebUrl(f.url) ? el('a', { href: f.url, target: '_blank', rel: 'noopener noreferrer' }, f.title) : f.title),
            el('td', { class: 'unsupported' }, clients(f.unsupported)),
            el('td', { class: 'partial' }, clients(f.partial)),
            el('td', { class: 'count' }, String(f.count))))));
}

function htmlResult(result: HtmlCheck): (Node | false)[] {
    const source = `Data: ${result.data.source}, updated ${result.data.updated.slice(0, 10)}; ${result.clients.length} clients checked.`;
    if (result.html === false) {
        return [el('p', { class: 'no-html' }, 'No HTML: this email has no HTML part to check.'), el('p', { class: 'detail' }, source)];
    }

    return [
        el('p', { class: 'score' }, el('span', { class: 'score-value' }, String(result.score)), ' / 100 ', el('meter', { min: '0', max: '100', value: String(result.score), 'aria-label': 'HTML compatibility score' })),
        el('p', { class: 'detail' }, 'The share of (feature, client) pairs that clients support, a partial one counting half. ', source),
        result.findings.length === 0 ? el('p', {}, 'Every checked client supports every feature found.') : el('p', {}, `${result.findings.length} features some client lacks or half-supports, the worst first:`),
        result.findings.length > 0 && findingsTable(result.findings.slice(0, FINDINGS_SHOWN), result.clients),
        result.findings.length > FINDINGS_SHOWN && el('details', { class: 'findings-list' },
            el('summary', {}, `${result.findings.length - FINDINGS_SHOWN} more`), findingsTable(result.findings.slice(FINDINGS_SHOWN), result.clients))
    ];
}

function linkItem(link: LinkCheck): HTMLLIElement {
    const verdict = link.ok ? 'ok' : 'broken';
    const label = [link.ok ? 'OK' : 'Broken', link.status === undefined ? '' : String(link.status), link.error ?? ''].filter(Boolean).join(' ');
    return el('li', { class: `link-check ${verdict}` },
        el('span', { class: `badge badge-${link.ok ? 'pass' : 'fail'}` }, label),
        ' ',
        el('span', { class: 'url' }, link.url),
        link.redirects.length > 0 && el('ol', { class: 'redirects', 'aria-label': 'Redirected to' }, ...link.redirects.map((url) => el('li', {}, `→ ${url}`))));
}

function linkResultList(links: LinkCheck[]): Node {
    if (links.length === 0) {
        return el('p', {}, 'This email has no http(s) link to check.');
    }

    const broken = links.filter((l) => !l.ok).length;
    return el('div', {},
        el('p', { class: 'detail' }, `${links.length} checked, ${broken} broken.`),
        el('ul', { class: 'link-checks' }, ...links.map(linkItem)));
}

/** What a failed link check says: the service's setting when the check is off. */
function linkFailure(err: unknown): Node {
    if (err instanceof InboxCaptureApiError && err.code === 'LINK_CHECK_DISABLED') {
        return el('p', { class: 'notice', id: 'link-check-off' },
            'The link check is off on this service. It asks other hosts only once INBOX_CAPTURE_LINK_CHECK_ALLOW (the plugin option linkCheck.allow) lists what it may ask, such as public or 127.0.0.1/32; see "Link check" in docs/api.md.');
    }

    return el('p', { class: 'notice' }, describeError(err));
}

function linksSection(e: Email): HTMLElement {
    const button = el('button', { type: 'button', id: 'check-links' }, 'Check links');
    const { node, body } = section('check-links-section', 'Links',
        el('p', { class: 'detail' }, 'Asks every http(s) link with HEAD only (a one-time link stays unused) and follows its redirects. Nothing is asked until you click.'),
        el('div', { class: 'actions' }, button));
    const kept = linkResults.get(e);
    if (kept) {
        replaceChildren(body, linkResultList(kept));
    }

    button.addEventListener('click', async () => {
        button.disabled = true;
        replaceChildren(body, 'Checking links…');
        try {
            const links = await withApi((api) => api.checkLinks(e.messageId));
            linkResults.set(e, links);
            replaceChildren(body, linkResultList(links));
        }
        catch (err) {
            replaceChildren(body, linkFailure(err));
        }
        finally {
            button.disabled = false;
        }
    });
    return node;
}

/** A section whose body is the answer of `load`, asked now ("Checking…" until it comes). */
function loadedSection<T>(id: string, title: string, load: () => Promise<T>, show: (result: T) => (Node | false)[], ...intro: Node[]): HTMLElement {
    const { node, body } = section(id, title, ...intro);
    replaceChildren(body, 'Checking…');
    load().then(
        (result) => replaceChildren(body, ...show(result)),
        (err) => replaceChildren(body, el('p', { class: 'notice' }, describeError(err))));
    return node;
}

/** The Checks tab's content for an email: the HTML and the auth checks start now, the links wait for their button. */
export function checksPanel(e: Email): Node {
    return el('div', { class: 'checks' },
        loadedSection('check-html', 'HTML compatibility', () => withApi((api) => api.checkHtml(e.messageId)), htmlResult),
        linksSection(e),
        loadedSection('check-auth', 'Authentication', () => withApi((api) => api.checkAuth(e.messageId)), authVerdicts,
            el('p', { class: 'detail' }, 'SPF, DKIM, DMARC and ARC, from the SMTP client the service kept with the email and DNS; worked out once, then kept.')));
}
