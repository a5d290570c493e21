import { randomBytes } from 'node:crypto';
import type { EmailDraft } from '../../lib/types';

/** receivedAt of draft 0, ms since the epoch: a fixed past instant, so order follows `n`. */
export const BASE_TIME = 1_700_000_000_000;

/** Draft number `n` for `inbox`, with a unique source id and raw key, no links or codes; `overrides` win. */
export function draft(inbox: string, n: number, overrides: Partial<EmailDraft> = {}): EmailDraft {
    return {
        sourceId: `m${n}-${randomBytes(4).toString('hex')}@example.test`,
        inbox,
        sender: 'alice@example.test',
        recipient: `${inbox}@example.test`,
        subject: `Subject ${n}`,
        body: 'body',
        htmlBody: '',
        receivedAt: BASE_TIME + n,
        rawKey: `raw-${randomBytes(6).toString('hex')}`,
        rawSize: 100,
        attachments: [],
        links: [],
        codes: [],
        ...overrides
    };
}
