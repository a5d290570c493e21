import { decodeCursor, encodeCursor } from './email-cursor';
import { isValidInbox } from '../identity/recipients';
import type { InboxPosition } from '../types';

/** Encodes the position after the last inbox of a page as `<lastReceivedAt>#<name>`, the email list's format. */
export function encodeInboxCursor(position: InboxPosition): string {
    return encodeCursor({ receivedAt: position.lastReceivedAt, messageId: position.name });
}

/** Decodes an inbox cursor; null when it is malformed or its name could be no inbox. */
export function decodeInboxCursor(cursor: string): InboxPosition | null {
    const position = decodeCursor(cursor);
    if (!position || !isValidInbox(position.messageId)) {
        return null;
    }

    return { lastReceivedAt: position.receivedAt, name: position.messageId };
}
