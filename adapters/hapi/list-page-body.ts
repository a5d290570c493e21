import type { RecordPage } from '../../lib/types';
import type { EmailPage, EmailView } from './api-types';
import type { EmailJsonSource } from './email-json';
import { pageEnvelope } from './email-view';

/** A list page ready to send: its envelope, its JSON in chunks, and the release of the emails' JSON once it is sent. */
export interface SerialisedPage {
    page: EmailPage;
    chunks: Buffer[];
    release(): void;
}

/**
 * Serialises a page email by email and ends it early, with `hasMore` and a cursor, when
 * the next email would take the JSON past `maxBytes` (the first email is always sent).
 * No string of the whole page, nor of one large email, is ever built; each email's JSON
 * comes from `json` (within the memory budget, shared with other answers), held until
 * the caller's `release()`.
 */
export async function serialiseEmailPage(records: RecordPage, json: EmailJsonSource, maxBytes: number): Promise<SerialisedPage> {
    const emails: EmailView[] = [];
    const bodies: Buffer[][] = [];
    const releases: Array<() => void> = [];
    const release = () => releases.forEach((r) => r());
    let emailBytes = 0;
    let cut = false;
    try {
        for (const [i, record] of records.records.entries()) {
            const held = await json.acquire(record);
            const { view, chunks, bytes } = held.json;
            // The page with this email last: the emails, their commas, and the envelope (with a cursor unless it is the end).
            const more = records.hasMore || i < records.records.length - 1;
            const total = emailBytes + bytes + emails.length + shellBytes(pageEnvelope([view], more));
            if (emails.length > 0 && total > maxBytes) {
                held.release();
                cut = true;
                break;
            }

            releases.push(held.release);
            emails.push(view);
            bodies.push(chunks);
            emailBytes += bytes;
        }
    }
    catch (err) {
        release();
        throw err;
    }

    const page = pageEnvelope(emails, records.hasMore || cut);
    const [head, tail] = shellOf(page);
    const chunks: Buffer[] = [Buffer.from(head)];
    bodies.forEach((body, i) => chunks.push(...(i > 0 ? [COMMA, ...body] : body)));
    chunks.push(Buffer.from(tail));
    return { page, chunks, release };
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
