// A mail's HTML without the addresses that make a browser connect to the sender's hosts
// (docs/ui.md, "Security model"). The frame's policy blocks every such fetch, but a full
// Chromium resolves the host of a blocked <iframe src> and opens a connection to it all
// the same, and a sender learns that the mail was opened. So the URLs go before the HTML
// is shown: frames, objects, embeds, media, links other than a style sheet, refresh,
// base, pings, forms; images, style sheets and background images stay only once the
// person asks for remote content (the policy then allows them). The mail is parsed
// with DOMParser, whose document is inert (no fetch, no script); the result goes only
// into the sandboxed frame's srcdoc, never into this page.

/** Passes of parse, clean, serialise before the HTML is given up on (each pass parses the last one's output). */
const MAX_PASSES = 4;

/** What is shown instead of HTML that still named a host after MAX_PASSES. */
const GIVEN_UP = '<p>This email\'s HTML cannot be shown without contacting the hosts it names. Its text, links and raw message are in the other tabs.</p>';

/**
 * Attributes (by local name, so `xlink:href` is `href`) that name something a browser
 * fetches or connects to, or may (`ping`, `attributionsrc`: in the background). Dropped
 * unless keptUrl() allows them.
 */
const URL_ATTRIBUTES = new Set([
    'src', 'srcset', 'srcdoc', 'data', 'href', 'action', 'formaction', 'poster', 'background', 'ping',
    'attributionsrc', 'codebase', 'archive', 'code', 'classid', 'lowsrc', 'dynsrc', 'manifest', 'icon', 'profile',
    'imagesrcset'
]);

/** Elements removed whole: never shown, only fetching (`link`, `script`) or steering (`meta` refresh and referrer, `base`). */
const DROPPED_ELEMENTS = new Set(['script', 'meta', 'base', 'link']);

/** An attribute value that is a `data:` URL (the URL parser skips leading spaces and controls). */
const isDataUrl = (value: string) => /^[\u0000-\u0020]*data:/i.test(value);

/** The attributes that load an image: allowed once the person asks for remote content (img-src then allows http: https:). */
function imageAttribute(element: Element, name: string): boolean {
    switch (element.localName) {
        case 'img':
            return name === 'src' || name === 'srcset';
        case 'source':
            return name === 'srcset' && element.parentElement?.localName === 'picture';
        case 'input':
            return name === 'src' && element.getAttribute('type')?.toLowerCase() === 'image';
        case 'video':
            return name === 'poster';
        case 'image':
        case 'feImage':
            return name === 'href';
        default:
            return name === 'background';
    }
}

/**
 * Whether a URL attribute stays: links (a click does nothing in the sandbox), images and
 * style sheets when asked for, inline images, and the email's own attachments' links
 * (`own`: its `cid:` images, mail-frame.ts) as an image's src.
 */
function keptUrl(element: Element, attribute: Attr, remote: boolean, own: ReadonlySet<string>): boolean {
    const name = attribute.localName;
    if (name === 'src' && element.localName === 'img' && own.has(attribute.value)) {
        return true;
    }

    if (name === 'href' && (element.localName === 'a' || element.localName === 'area')) {
        return true;
    }

    // The only links left are style sheets, and only with remote content (droppedElement).
    if (name === 'href' && element.localName === 'link') {
        return remote;
    }

    // An inline image names no host; srcset is a list, so only with remote content.
    return imageAttribute(element, name) && (remote || (name !== 'srcset' && isDataUrl(attribute.value)));
}

/** Whether a whole element goes: a style sheet link stays once remote content is asked for. */
function droppedElement(element: Element, remote: boolean): boolean {
    if (!DROPPED_ELEMENTS.has(element.localName)) {
        return false;
    }

    const rel = (element.getAttribute('rel') ?? '').trim().toLowerCase().split(/\s+/);
    return !(remote && element.localName === 'link' && rel.length === 1 && rel[0] === 'stylesheet');
}

/** A URL (or a srcset's list of them) that names a host: absolute http(s), or scheme-relative. */
const namesHost = (value: string) => /(^|[\s,])(https?:)?\/\//i.test(value.replace(/^[\u0000-\u0020]+/, ''));

/** Style sheet text that loads from a host: `url(…)`, `@import` or `image-set(…)` of an http(s) or `//` address. */
const cssNamesHost = (css: string) => /(url\(|@import|image-set\()\s*['"]?\s*(https?:)?\/\//i.test(css);

/** What one cleaning pass did: URLs removed, and whether the mail has remote content that stays blocked. */
interface Cleaned {
    removed: number;
    blocked: boolean;
}

/**
 * Removes what names a host under `root` (template contents included: a shadow root renders
 * them). Also notes remote content that "Load remote content" would fetch: an image or a
 * style sheet taken out only for now, or CSS that the frame's policy will block.
 */
function clean(root: ParentNode, remote: boolean, ours: ReadonlySet<Element>, own: ReadonlySet<string>): Cleaned {
    const done: Cleaned = { removed: 0, blocked: false };
    for (const element of Array.from(root.querySelectorAll('*'))) {
        if (ours.has(element)) {
            continue;
        }

        if (droppedElement(element, remote)) {
            done.blocked ||= !droppedElement(element, true) && namesHost(element.getAttribute('href') ?? '');
            element.remove();
            done.removed++;
            continue;
        }

        for (const attribute of Array.from(element.attributes)) {
            if (URL_ATTRIBUTES.has(attribute.localName) && !keptUrl(element, attribute, remote, own)) {
                done.blocked ||= keptUrl(element, attribute, true, own) && namesHost(attribute.value);
                element.removeAttributeNode(attribute);
                done.removed++;
            }
        }

        if (!remote && !done.blocked) {
            done.blocked = cssNamesHost(element.getAttribute('style') ?? '') || (element.localName === 'style' && cssNamesHost(element.textContent ?? ''));
        }

        // By name, not instanceof: the document may come from another window's parser (parserOf()).
        if (element.localName === 'template' && element.namespaceURI === 'http://www.w3.org/1999/xhtml') {
            const inner = clean((element as HTMLTemplateElement).content, remote, ours, own);
            done.removed += inner.removed;
            done.blocked ||= inner.blocked;
        }
    }

    return done;
}

/** The frame's document as a string, and whether remote content in it stays blocked until the person asks. */
export interface CleanMail {
    html: string;
    blocked: boolean;
}

/**
 * A parser of `view`'s realm. Its documents take that window's policy: the viewer frame's
 * allows inline styles, where the page's own (`style-src 'self'`) would report every style
 * attribute and `<style>` of the mail as a violation in the console while parsing.
 */
export function parserOf(view: Window): DOMParser {
    return new (view as Window & typeof globalThis).DOMParser();
}

/**
 * The frame's document: `head` (our elements, which the parser puts first) and the mail
 * without the URLs above (`own`: image links to keep, see keptUrl(); `parser`: see
 * parserOf()). Returned is always a string whose own parse was found clean:
 * a pass that removes anything serialises its result and parses that again, since a
 * serialisation can parse into another tree than the one it came from.
 */
export function withoutRemoteHosts(head: string, html: string, remote: boolean, own: ReadonlySet<string> = new Set(), parser: DOMParser = new DOMParser()): CleanMail {
    const ourCount = parser.parseFromString(head, 'text/html').head.children.length;
    let mail = html;
    let blocked = false;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
        const doc = parser.parseFromString(`${head}${mail}`, 'text/html');
        // The first elements of the head are ours: nothing of the mail is parsed before them.
        const ours = new Set(Array.from(doc.head.children).slice(0, ourCount));
        const cleaned = clean(doc, remote, ours, own);
        blocked ||= cleaned.blocked;
        if (cleaned.removed === 0) {
            return { html: `${head}${mail}`, blocked };
        }

        ours.forEach((element) => element.remove());
        mail = doc.documentElement.outerHTML;
    }

    return { html: `${head}${GIVEN_UP}`, blocked };
}
