import type { RecordPage } from '../../lib/types';
import type { EmailPage, EmailView } from './api-types';
import { pageEnvelope, toEmailView } from './email-view';

/** A list page ready to send: its envelope, and its JSON in chunks (one per email). */
export interface SerialisedPage {
    page: EmailPage;
    chunks: Buffer[];
}

/**
 * Characters of one string value serialised at once: a longer one (a body of megabytes)
 * is serialised slice by slice, other requests served between slices, so one email
 * never holds the event loop for the 100+ ms its JSON takes in one go.
 */
export const SLICE_CHARS = 1024 * 1024;

/**
 * Serialises a page email by email and ends it early, with `hasMore` and a cursor, when
 * the next email would take the JSON past `maxBytes` (the first email is always sent).
 * No string of the whole page, nor of one large email, is ever built.
 */
export async function serialiseEmailPage(records: RecordPage, prefix: string, maxBytes: number): Promise<SerialisedPage> {
    const emails: EmailView[] = [];
    const bodies: Buffer[][] = [];
    let emailBytes = 0;
    let cut = false;
    for (const [i, record] of records.records.entries()) {
        const view = toEmailView(record, prefix);
        const json = await toJsonChunks(view);
        const length = json.reduce((sum, chunk) => sum + chunk.length, 0);
        // The page with this email last: the emails, their commas, and the envelope (with a cursor unless it is the end).
        const more = records.hasMore || i < records.records.length - 1;
        const total = emailBytes + length + emails.length + shellBytes(pageEnvelope([view], more));
        if (emails.length > 0 && total > maxBytes) {
            cut = true;
            break;
        }

        emails.push(view);
        bodies.push(json);
        emailBytes += length;
    }

    const page = pageEnvelope(emails, records.hasMore || cut);
    const [head, tail] = shellOf(page);
    const chunks: Buffer[] = [Buffer.from(head)];
    bodies.forEach((body, i) => chunks.push(...(i > 0 ? [COMMA, ...body] : body)));
    chunks.push(Buffer.from(tail));
    return { page, chunks };
}

const COMMA = Buffer.from(',');

// The envelope's JSON around its `emails` array, split where the emails go: `emails` is its first key.
function shellOf(page: EmailPage): [string, string] {
    const shell = JSON.stringify({ ...page, emails: [] });
    const at = shell.indexOf('[]') + 1;
    return [shell.slice(0, at), shell.slice(at)];
}

function shellBytes(page: EmailPage): number {
    return shellOf(page).reduce((sum, part) => sum + Buffer.byteLength(part), 0);
}

/**
 * JSON.stringify(view) as chunks of bytes: a string value longer than SLICE_CHARS is
 * serialised slice by slice, yielding to the event loop between slices.
 */
export async function toJsonChunks(view: object): Promise<Buffer[]> {
    if (!Object.values(view).some((value) => typeof value === 'string' && value.length > SLICE_CHARS)) {
        // Nothing to slice: one JSON.stringify, which costs half of building it field by field.
        return [Buffer.from(JSON.stringify(view))];
    }

    const chunks: Buffer[] = [];
    let pending = '{';
    let fields = 0;
    for (const [key, value] of Object.entries(view)) {
        if (value === undefined) {
            continue;
        }

        pending += `${fields++ > 0 ? ',' : ''}${JSON.stringify(key)}:`;
        if (typeof value !== 'string' || value.length <= SLICE_CHARS) {
            pending += JSON.stringify(value);
            continue;
        }

        chunks.push(Buffer.from(`${pending}"`));
        for (let at = 0; at < value.length;) {
            let end = Math.min(at + SLICE_CHARS, value.length);
            // Never between the halves of a surrogate pair: JSON.stringify escapes a lone half.
            if (end < value.length && isHighSurrogate(value.charCodeAt(end - 1))) {
                end--;
            }

            chunks.push(Buffer.from(JSON.stringify(value.slice(at, end)).slice(1, -1)));
            at = end;
            await new Promise((resolve) => setImmediate(resolve));
        }

        pending = '"';
    }

    chunks.push(Buffer.from(`${pending}}`));
    return chunks;
}

function isHighSurrogate(code: number): boolean {
    return code >= 0xd800 && code <= 0xdbff;
}
