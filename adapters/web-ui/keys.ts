// Keys anywhere on the page, as in mail clients: j / k open the next / previous email of
// the list, Delete deletes the open one (after the usual question). They do nothing while
// the person types (a field has focus), while a dialog is open, or with a modifier held.
// A Delete on a focused row of the list is the list's own (it deletes that row's email).

/** What the keys act on. */
export interface KeyActions {
    /** Opens the next (1) or previous (-1) email of the list. */
    next(step: 1 | -1): void;
    /** Asks to delete the open email. */
    deleteOpen(): void;
}

function typing(target: EventTarget | null): boolean {
    return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

/** Listens for the keys on the document. */
export function listKeys(actions: KeyActions): void {
    document.addEventListener('keydown', (event) => {
        if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target) || document.querySelector('dialog[open]')) {
            return;
        }

        if (event.key === 'j' || event.key === 'k') {
            event.preventDefault();
            actions.next(event.key === 'j' ? 1 : -1);
        }
        else if (event.key === 'Delete') {
            event.preventDefault();
            actions.deleteOpen();
        }
    });
}
