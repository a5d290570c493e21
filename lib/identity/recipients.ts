/** Longest inbox name; a longer local part is cut (docs/design.md). */
export const MAX_INBOX_LENGTH = 64;

/**
 * Most inboxes one message is stored in (one copy each), on every ingest path. The
 * SMTP listener caps RCPT TO at the same number (RFC 5321 section 4.5.3.1.8: at least 100);
 * without an envelope the To and Cc headers could otherwise multiply one message
 * thousands of times. Past it the message is refused, never stored in part.
 */
export const MAX_RECIPIENTS = 100;

/** Characters an inbox may hold (docs/design.md). */
export const INBOX_PATTERN = /^[a-z0-9._-]+$/;

/** Maps a recipient address to an inbox name, or null when it has none. */
export type InboxFromAddress = (address: string) => string | null;

/**
 * The default mapping (docs/design.md): local part (RFC 5322 quoted form unquoted),
 * lowercased, every character outside `a-z 0-9 . _ -` replaced by `-`, cut to 64.
 */
export const defaultInboxFromAddress: InboxFromAddress = (address) => {
    const trimmed = address.trim().replace(/^<|>$/g, '');
    const at = trimmed.lastIndexOf('@');
    let local = at === -1 ? trimmed : trimmed.slice(0, at);
    if (local.length >= 2 && local.startsWith('"') && local.endsWith('"')) {
        local = local.slice(1, -1).replace(/\\(.)/g, '$1');
    }

    const inbox = Array.from(local.toLowerCase())
        .map((ch) => (/[a-z0-9._-]/.test(ch) ? ch : '-'))
        .join('')
        .slice(0, MAX_INBOX_LENGTH);

    return inbox.length > 0 ? inbox : null;
};

/** True when `inbox` is a valid inbox name: characters and length of docs/design.md. */
export function isValidInbox(inbox: string): boolean {
    return inbox.length > 0 && inbox.length <= MAX_INBOX_LENGTH && INBOX_PATTERN.test(inbox);
}
