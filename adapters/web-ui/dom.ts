// DOM helpers of the web interface. Mail data only ever enters the page as text:
// children are strings (made text nodes) or elements, and there is no way here to set HTML.

type Child = Node | string | null | undefined | false;

/** Creates an element with attributes (strings, set as attributes) and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
        if (value === true) {
            node.setAttribute(name, '');
        }
        else if (typeof value === 'string') {
            node.setAttribute(name, value);
        }
    }

    append(node, children);
    return node;
}

/** Appends children: strings as text nodes, falsy ones skipped. */
export function append(parent: Node, children: Child[]): void {
    for (const child of children) {
        if (child) {
            parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
        }
    }
}

/** The element with this id, of the expected kind (the page's skeleton is ours, so a miss is a bug). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
    const node = document.getElementById(id);
    if (!node) {
        throw new Error(`web-ui: #${id} missing from index.html`);
    }

    return node as T;
}

/** Replaces an element's children. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
    parent.replaceChildren();
    append(parent, children);
}

/** Moves focus up or down through the links of a list (keyboard navigation); answers the link now focused. */
export function moveFocus(list: HTMLElement, step: 1 | -1): HTMLAnchorElement | null {
    const links = Array.from(list.querySelectorAll<HTMLAnchorElement>('a.item'));
    if (links.length === 0) {
        return null;
    }

    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next = links[at === -1 ? 0 : Math.min(links.length - 1, Math.max(0, at + step))];
    next.focus();
    next.scrollIntoView({ block: 'nearest' });
    return next;
}

/** Marks the list item whose `data-<key>` is `value` as the current one (`aria-current="page"`), and no other. */
export function markCurrent(list: HTMLElement, key: 'inbox' | 'id', value: string | undefined): void {
    for (const link of Array.from(list.querySelectorAll<HTMLAnchorElement>('a.item'))) {
        if (value !== undefined && link.dataset[key] === value) {
            link.setAttribute('aria-current', 'page');
        }
        else {
            link.removeAttribute('aria-current');
        }
    }
}
