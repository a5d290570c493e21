// The Source tab: the raw message as text, its first MiB only (a message may be tens of
// MiB). It is asked for with a Range request and read no further than that whatever the
// server answers, and it enters the page as a text node: markup in a mail shows as markup.

import type { Email } from '../client/index';
import { describeError, withApi } from './api';
import { el, replaceChildren } from './dom';
import { formatSize } from './format';

/** Bytes of the raw message shown at most. */
export const SOURCE_MAX_BYTES = 1024 * 1024;

/** The first `max` bytes of a response body, reading no more of it than that. */
async function firstBytes(response: Response, max: number): Promise<Uint8Array> {
    const out = new Uint8Array(max);
    let length = 0;
    const reader = response.body!.getReader();
    while (length < max) {
        const { done, value } = await reader.read();
        if (done) {
            break;
        }

        const part = value.subarray(0, max - length);
        out.set(part, length);
        length += part.length;
    }

    await reader.cancel();
    return out.subarray(0, length);
}

/** Fills `panel` with the start of the email's raw message, and a note when there is more. */
export async function showSource(panel: HTMLElement, e: Email, current: () => boolean): Promise<void> {
    panel.textContent = 'Loading…';
    try {
        const link = await withApi((api) => api.rawLink(e.messageId));
        const response = await fetch(link, { headers: { range: `bytes=0-${SOURCE_MAX_BYTES - 1}` } });
        if (!response.ok) {
            throw new Error(`raw message: ${response.status}`);
        }

        const bytes = await firstBytes(response, SOURCE_MAX_BYTES);
        if (!current()) {
            return;
        }

        const cut = e.size > bytes.length;
        replaceChildren(panel,
            cut && el('p', { class: 'notice', id: 'source-note' }, `Showing the first ${formatSize(bytes.length)} of ${formatSize(e.size)}; "Download .eml" has it all.`),
            el('pre', { class: 'source' }, new TextDecoder().decode(bytes)));
    }
    catch (err) {
        if (current()) {
            panel.textContent = describeError(err);
        }
    }
}
