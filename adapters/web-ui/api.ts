// The interface's one way to the API: the typed client with the key the person entered,
// kept in this tab's sessionStorage only. A refused key (401) is forgotten and asked
// for again, and the call is repeated with the new one.

import { InboxCaptureApiError, InboxCaptureClient } from '../client/index';
import { askKey } from './dialogs';

const STORAGE_KEY = 'inbox-capture.apiKey';
const ASK = 'Enter an API key (npx inbox-capture keys create <name>). It is kept in this browser tab only.';
const REFUSED = 'That key was refused (401): it is unknown or revoked. Enter another one.';

// The API's root: the UI lives at <root>/ui/, this module at <root>/ui/js/web-ui/api.js,
// so a route prefix of the host is kept.
const BASE_URL = new URL('../../../', import.meta.url).href.replace(/\/$/, '');

let client: InboxCaptureClient | null = null;
let asking: Promise<InboxCaptureClient> | null = null;

function storedKey(): string | null {
    try {
        return sessionStorage.getItem(STORAGE_KEY);
    }
    catch {
        // Storage disabled: the key lives in memory for this page only.
        return null;
    }
}

function keep(key: string): void {
    try {
        sessionStorage.setItem(STORAGE_KEY, key);
    }
    catch {
        // See storedKey().
    }
}

function ready(message: string): Promise<InboxCaptureClient> {
    if (client) {
        return Promise.resolve(client);
    }

    const key = storedKey();
    if (key) {
        client = new InboxCaptureClient({ baseUrl: BASE_URL, apiKey: key });
        return Promise.resolve(client);
    }

    asking ??= askKey(message).then((entered) => {
        keep(entered);
        client = new InboxCaptureClient({ baseUrl: BASE_URL, apiKey: entered });
        asking = null;
        return client;
    });
    return asking;
}

/** Forgets the key of this tab; the next call asks for one. */
export function forgetKey(): void {
    client = null;
    try {
        sessionStorage.removeItem(STORAGE_KEY);
    }
    catch {
        // See storedKey().
    }
}

/** Runs a call with the client, asking for a key first when there is none and again after a 401. */
export async function withApi<T>(call: (api: InboxCaptureClient) => Promise<T>): Promise<T> {
    let message = ASK;
    for (;;) {
        const api = await ready(message);
        try {
            return await call(api);
        }
        catch (err) {
            if (!(err instanceof InboxCaptureApiError) || err.status !== 401) {
                throw err;
            }

            if (client === api) {
                forgetKey();
            }

            message = REFUSED;
        }
    }
}

/** `sentence`, then what the server said is wrong when it said it (docs/api.md, "Errors"). */
function withDetail(sentence: string, err: InboxCaptureApiError): string {
    return err.detail ? `${sentence} ${err.detail}` : sentence;
}

/** A short, human sentence for a failed call (the API's code and detail, or the network). */
export function describeError(err: unknown): string {
    if (err instanceof InboxCaptureApiError) {
        if (err.code === 'NOT_FOUND') {
            return withDetail('Not found: it may have been deleted.', err);
        }

        // A key with a scope (docs/api.md, "Keys with a scope").
        return withDetail(err.code === 'FORBIDDEN' ? 'This key may not do that: it is read-only, or limited to other inboxes (403).' : `The server answered ${err.status} ${err.code}.`, err);
    }

    return 'The server cannot be reached.';
}

/** Whether an error is the abort of a call this interface cancelled itself. */
export function isAbort(err: unknown): boolean {
    return err instanceof DOMException && err.name === 'AbortError';
}
