import type { CursorPosition } from '../types';

/** Encodes the position after the last item of a page as `<receivedAt>#<messageId>`. */
export function encodeCursor(position: CursorPosition): string {
    return `${position.receivedAt}#${position.messageId}`;
}

/** Decodes a cursor; null when it is malformed. */
export function decodeCursor(cursor: string): CursorPosition | null {
    const hash = cursor.indexOf('#');
    if (hash <= 0 || hash > 16) {
        return null;
    }

    const time = cursor.slice(0, hash);
    const messageId = cursor.slice(hash + 1);
    if (!/^\d+$/.test(time) || messageId.length === 0) {
        return null;
    }

    const receivedAt = Number(time);
    if (!Number.isSafeInteger(receivedAt)) {
        return null;
    }

    return { receivedAt, messageId };
}
