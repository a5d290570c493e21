/**
 * Auto-relay's loop guard (docs/api.md, "Auto-relay"): a relay that routes mail back to
 * the service (directly, or through a server that sends the allowed domain here) would
 * have each captured copy relayed again, for ever. A message is therefore relayed at most
 * once per recipient, known by its Message-ID and by its bytes, and not at all past a hop
 * count, as RFC 5321 section 6.3 asks of anything that passes mail on.
 */

import { sha256Hex } from '../identity/ids';
import type { EmailRecord } from '../types';

/**
 * `Received:` fields past which a message is not relayed: it has been through that many
 * servers, which a loop makes. Postfix bounces at 50; RFC 5321 asks for a large bound.
 */
export const MAX_RELAY_HOPS = 50;

/** How long what was relayed is remembered, ms: far longer than a delivery is retried (a day). */
export const RELAY_MEMORY_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The keys a relay of `record` to its recipient takes: its Message-ID (the same message
 * coming back through servers that add header fields) and its bytes (coming back as it
 * went, a message without Message-ID included), each with the recipient.
 */
export function relayKeys(record: Pick<EmailRecord, 'sourceId' | 'rawSha256' | 'recipient'>): string[] {
    const recipient = record.recipient.trim().toLowerCase();
    const keys = [sha256Hex(`message-id\0${record.sourceId}\0${recipient}`)];
    if (record.rawSha256 !== '') {
        keys.push(sha256Hex(`raw\0${record.rawSha256}\0${recipient}`));
    }

    return keys;
}

/** The `Received:` fields of a raw message's top-level header section. */
export function countReceivedFields(raw: Buffer): number {
    // The header section ends at the first empty line; only its own lines count.
    const end = headerSectionEnd(raw);
    let count = 0;
    for (let at = 0; at < end;) {
        if (raw.subarray(at, at + 9).toString('latin1').toLowerCase() === 'received:') {
            count++;
        }

        const next = raw.indexOf(0x0a, at);
        at = next === -1 ? end : next + 1;
    }

    return count;
}

function headerSectionEnd(raw: Buffer): number {
    const crlf = raw.indexOf('\r\n\r\n');
    const lf = raw.indexOf('\n\n');
    const ends = [crlf === -1 ? -1 : crlf + 2, lf === -1 ? -1 : lf + 1].filter((e) => e !== -1);
    return ends.length === 0 ? raw.length : Math.min(...ends);
}
