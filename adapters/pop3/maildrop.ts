import type { InboxCapture } from '../../lib/service/inbox-capture';
import type { InboxScope } from '../../lib/identity/key-scope';
import type { CursorPosition } from '../../lib/types';
import { MAILDROP_SIZE } from './pop3-defaults';
import { uidOf } from './uidl';

/** Emails listed per page while a maildrop is taken. */
const PAGE = 100;
/** Text bytes of one page at most: the records' bodies are read with them, and dropped at once. */
const PAGE_BYTES = 4 * 1024 * 1024;

/** One message of a maildrop, as the session numbers it. */
export interface MaildropMessage {
    messageId: string;
    uid: string;
    rawKey: string;
    size: number;
    deleted: boolean;
}

/** The service calls a session needs. */
export type Pop3Service = Pick<InboxCapture, 'listEmails' | 'verifyKey' | 'deleteEmail' | 'blobStore'>;

/**
 * The maildrop of one session: the inbox's newest emails when the client logged in,
 * oldest first (message 1 is the oldest), fixed for the session. Only what POP3 needs of
 * each is kept: its id, where its raw bytes are, and their size.
 */
export async function takeMaildrop(service: Pop3Service, inbox: string, max = MAILDROP_SIZE, pageSize = PAGE): Promise<MaildropMessage[]> {
    const newestFirst: MaildropMessage[] = [];
    let after: CursorPosition | undefined;
    while (newestFirst.length < max) {
        const page = await service.listEmails({ inbox, limit: Math.min(pageSize, max - newestFirst.length), maxBytes: PAGE_BYTES, ...(after ? { after } : {}) });
        for (const record of page.records) {
            newestFirst.push({ messageId: record.messageId, uid: uidOf(record.messageId), rawKey: record.rawKey, size: record.rawSize, deleted: false });
        }

        const last = page.records.at(-1);
        if (!page.hasMore || !last) {
            break;
        }

        after = { receivedAt: last.receivedAt, messageId: last.messageId };
    }

    return newestFirst.reverse();
}

/**
 * Deletes the messages marked deleted (the UPDATE state, at QUIT); answers how many of
 * them could not be deleted because of an error. One already gone (deleted meanwhile by
 * another way in) counts as deleted.
 */
export async function commitDeletes(service: Pop3Service, messages: MaildropMessage[], scope: InboxScope, onError: (error: unknown) => void): Promise<number> {
    let failed = 0;
    for (const message of messages.filter((m) => m.deleted)) {
        try {
            await service.deleteEmail(message.messageId, scope);
        }
        catch (error) {
            onError(error);
            failed++;
        }
    }

    return failed;
}
