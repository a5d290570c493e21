// The two questions the interface asks: the API key, and "really delete?".

import { byId } from './dom';

/** Asks for the API key in a modal dialog; `message` says why (e.g. the last key was refused). */
export function askKey(message: string): Promise<string> {
    const dialog = byId<HTMLDialogElement>('key-dialog');
    const form = byId<HTMLFormElement>('key-form');
    const input = byId<HTMLInputElement>('key-input');
    byId('key-message').textContent = message;
    input.value = '';
    return new Promise((resolve) => {
        const onSubmit = (event: Event) => {
            event.preventDefault();
            const key = input.value.trim();
            if (key === '') {
                return;
            }

            form.removeEventListener('submit', onSubmit);
            dialog.removeEventListener('cancel', onCancel);
            dialog.close();
            resolve(key);
        };
        // Without a key nothing can be shown: Escape does not close the question.
        const onCancel = (event: Event) => event.preventDefault();
        form.addEventListener('submit', onSubmit);
        dialog.addEventListener('cancel', onCancel);
        if (!dialog.open) {
            dialog.showModal();
        }

        input.focus();
    });
}

/** Asks to confirm a deletion; resolves true only for "Delete". */
export function confirmDelete(text: string): Promise<boolean> {
    const dialog = byId<HTMLDialogElement>('confirm-dialog');
    const form = byId<HTMLFormElement>('confirm-form');
    const cancel = byId<HTMLButtonElement>('confirm-cancel');
    byId('confirm-text').textContent = text;
    const previous = document.activeElement as HTMLElement | null;
    return new Promise((resolve) => {
        const done = (answer: boolean) => {
            form.removeEventListener('submit', onSubmit);
            cancel.removeEventListener('click', onCancel);
            dialog.removeEventListener('close', onClose);
            if (dialog.open) {
                dialog.close();
            }

            previous?.focus();
            resolve(answer);
        };
        const onSubmit = (event: Event) => {
            event.preventDefault();
            done(true);
        };
        const onCancel = () => done(false);
        const onClose = () => done(false);
        form.addEventListener('submit', onSubmit);
        cancel.addEventListener('click', onCancel);
        dialog.addEventListener('close', onClose);
        dialog.showModal();
        cancel.focus();
    });
}

/** Shows a short message at the bottom of the page for a few seconds. */
export function toast(text: string): void {
    const node = byId('toast');
    node.textContent = text;
    node.classList.add('shown');
    window.setTimeout(() => {
        if (node.textContent === text) {
            node.classList.remove('shown');
            node.textContent = '';
        }
    }, 4000);
}
