import type { RecordPage } from '../../lib/types';
import type { EmailPage, EmailView } from './api-types';
import { pageEnvelope, toEmailView } from './email-view';

/** A list page ready to send: its envelope, and its JSON in chunks (one per email). */
export interface SerialisedPage {
    page: EmailPage;
    chunks: Buffer[];
}

/**
 * Serialises a page email by email and ends it early, with `hasMore` and a cursor, when
 * the next email would take the JSON past `maxBytes` (the first email is always sent).
 * Each email is one chunk: no string of the whole page is ever built.
 */
export function serialiseEmailPage(records: RecordPage, prefix: string, maxBytes: number): SerialisedPage {
    const emails: EmailView[] = [];
    const bodies: Buffer[] = [];
    let emailBytes = 0;
    let cut = false;
    for (const [i, record] of records.records.entries()) {
        const view = toEmailView(record, prefix);
        const json = Buffer.from(JSON.stringify(view));
        // The page with this email last: the emails, their commas, and the envelope (with a cursor unless it is the end).
        const more = records.hasMore || i < records.records.length - 1;
        const total = emailBytes + json.length + emails.length + shellBytes(pageEnvelope([view], more));
        if (emails.length > 0 && total > maxBytes) {
            cut = true;
            break;
        }

        emails.push(view);
        bodies.push(json);
        emailBytes += json.length;
    }

    const page = pageEnvelope(emails, records.hasMore || cut);
    const [head, tail] = shellOf(page);
    const chunks: Buffer[] = [Buffer.from(head)];
    bodies.forEach((body, i) => chunks.push(...(i > 0 ? [COMMA, body] : [body])));
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
