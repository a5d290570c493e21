import { randomBytes } from 'node:crypto';
import { htmlTextOrNothing } from '../../lib/extract/html-text';
import { searchTextOf } from '../../lib/extract/search-text';
import type { EmailDraft } from '../../lib/types';

/** receivedAt of draft 0, ms since the epoch: a fixed past instant, so order follows `n`. */
export const BASE_TIME = 1_700_000_000_000;

/** The searched text ingest would give a draft with these bodies (the HTML's text as parse.ts derives it). */
export function searchTextFor(fields: { body: string; htmlBody: string }): string {
    return searchTextOf(fields.body, htmlTextOrNothing(fields.htmlBody));
}

/** Draft number `n` for `inbox`, with a unique source id and raw key, no links or codes; `overrides` win (searchText follows the bodies unless given). */
export function draft(inbox: string, n: number, overrides: Partial<EmailDraft> = {}): EmailDraft {
    const fields = {
        sourceId: `m${n}-${randomBytes(4).toString('hex')}@example.test`,
        inbox,
        sender: 'alice@example.test',
        senderName: '',
        recipient: `${inbox}@example.test`,
        subject: `Subject ${n}`,
        body: 'body',
        htmlBody: '',
        receivedAt: BASE_TIME + n,
        rawKey: `raw-${randomBytes(6).toString('hex')}`,
        rawSize: 100,
        rawSha256: 'a'.repeat(64),
        attachments: [],
        links: [],
        codes: [],
        tags: [],
        ...overrides
    };
    return { ...fields, searchText: overrides.searchText ?? searchTextFor(fields) };
}
