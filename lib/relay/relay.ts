/**
 * Release and relay of captured mail to a real SMTP server (docs/api.md, "Release"): the
 * stored raw message goes out as it came in, to allowed envelope recipients only. The
 * core decides what goes where; the SMTP client is an adapter's (`RelayTransport`).
 */

import { InboxCaptureError } from '../errors';
import type { BlobStore } from '../blob-store/blob-store';
import type { EmailRecord } from '../types';
import type { RelayAllowList } from './allow-list';
import { countReceivedFields } from './relay-loop';

/** Sends one message as it is over SMTP: the adapter's (adapters/relay). */
export interface RelayTransport {
    /** Sends `raw` with this envelope; rejects when the relay refuses it or cannot be reached. */
    send(envelope: { from: string; to: string[] }, raw: Buffer): Promise<void>;
    /** Releases its connections. */
    close?(): void;
}

/** A configured relay: where mail goes, and where it may go. */
export interface Relay {
    transport: RelayTransport;
    allow: RelayAllowList;
}

/** How one relay is bounded beyond the allow-list. */
export interface RelayEmailOptions {
    /** Refuse (TOO_MANY_HOPS) a message with this many `Received:` fields or more (default: no bound). */
    maxHops?: number;
}

/**
 * Sends the stored raw message of `record` to `to` (default: its recipient) with its
 * sender as MAIL FROM. Throws RECIPIENT_NOT_ALLOWED before anything is sent when the
 * allow-list refuses any address, and RELAY_FAILED when the relay does; answers the
 * recipients it went to.
 */
export async function relayEmail(relay: Relay, blobStore: BlobStore, record: EmailRecord, to?: readonly string[], options: RelayEmailOptions = {}): Promise<string[]> {
    const recipients = [...new Set((to ?? [record.recipient]).map((a) => a.trim()))];
    if (recipients.length === 0 || !recipients.every((address) => relay.allow.allows(address))) {
        throw new InboxCaptureError('RECIPIENT_NOT_ALLOWED', 'the relay allow-list does not name every recipient');
    }

    const stream = await blobStore.get(record.rawKey);
    if (!stream) {
        // Blobs are written before their record and deleted after it: this is a bug or a lost disk.
        throw new InboxCaptureError('BLOB_STORE_FAILED', `the raw message of ${record.messageId} is missing`);
    }

    const chunks: Buffer[] = [];
    for await (const chunk of stream) {
        chunks.push(chunk as Buffer);
    }

    const raw = Buffer.concat(chunks);
    if (options.maxHops !== undefined && countReceivedFields(raw) >= options.maxHops) {
        throw new InboxCaptureError('TOO_MANY_HOPS', `${record.messageId} has ${options.maxHops} or more Received fields: a loop, not relayed`);
    }

    try {
        await relay.transport.send({ from: record.sender, to: recipients }, raw);
    }
    catch (err) {
        throw new InboxCaptureError('RELAY_FAILED', `the relay did not take ${record.messageId}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }

    return recipients;
}
