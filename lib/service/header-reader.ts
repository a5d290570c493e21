/**
 * The header fields of stored copies (docs/api.md, "Header fields"), for every reader:
 * `GET .../headers`, MCP's get_email and anything built on getHeaders(). A large header
 * section is parsed in the parse pool, off the event loop (a 1 MiB section of encoded
 * words takes a few hundred ms), and readers of one raw message at the same time share
 * one read and one parse.
 */

import type { BlobStore } from '../blob-store/blob-store';
import { InboxCaptureError } from '../errors';
import { parseHeaderFields, type HeaderField } from '../mime/header-fields';
import { readHeaderSection } from '../mime/header-section';
import type { EmailRecord } from '../types';

/** Header sections up to this size are parsed in the calling thread: well under a millisecond, no crossing. */
export const HEADERS_IN_THREAD_BYTES = 16 * 1024;

/** Reads a stored copy's header fields. */
export type HeaderReader = (record: Pick<EmailRecord, 'messageId' | 'rawKey'>) => Promise<HeaderField[]>;

/** A reader over `blobStore` that parses large sections with `parseInPool`. */
export function createHeaderReader(blobStore: BlobStore, parseInPool: (section: Buffer) => Promise<HeaderField[]>): HeaderReader {
    // By raw blob: the copies of one delivery share it, and so do concurrent readers.
    const inFlight = new Map<string, Promise<HeaderField[]>>();

    const read = async (record: Pick<EmailRecord, 'messageId' | 'rawKey'>): Promise<HeaderField[]> => {
        const raw = await blobStore.get(record.rawKey);
        if (!raw) {
            // Blobs are written before their record and deleted after it: this is a bug or a lost disk.
            throw new InboxCaptureError('BLOB_STORE_FAILED', `the raw message of ${record.messageId} is missing`);
        }

        const section = await readHeaderSection(raw);
        return section.length <= HEADERS_IN_THREAD_BYTES ? parseHeaderFields(section) : parseInPool(section);
    };

    return (record) => {
        let shared = inFlight.get(record.rawKey);
        if (!shared) {
            shared = read(record).finally(() => inFlight.delete(record.rawKey));
            inFlight.set(record.rawKey, shared);
        }

        return shared;
    };
}
