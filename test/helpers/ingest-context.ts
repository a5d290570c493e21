import type { Readable } from 'node:stream';
import { createIngest, type IngestContext, type IngestOptions } from '../../lib/ingest/ingest';
import { defaultInboxFromAddress } from '../../lib/identity/recipients';
import { parseMessage } from '../../lib/mime/parse';
import type { EmailRecord } from '../../lib/types';
import { DEFAULT_BLOB_STORE_TIMEOUT_MS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES } from '../../lib/defaults';
import { createMessageBudget } from '../../lib/util/message-budget';

/**
 * The context a service would build createIngest() from, around these stores: the
 * service's defaults, a budget of its own, the parser in this thread; `context` overrides any part.
 */
export function testIngestContext(context: Pick<IngestContext, 'recordStore' | 'blobStore'> & Partial<IngestContext>): IngestContext {
    return {
        maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
        messageBudget: createMessageBudget(DEFAULT_MESSAGE_BUDGET_BYTES),
        blobStoreTimeoutMs: DEFAULT_BLOB_STORE_TIMEOUT_MS,
        inboxFromAddress: defaultInboxFromAddress,
        log: () => undefined,
        parse: parseMessage,
        ...context
    };
}

/** One ingest of `raw`: the envelope options go to the call, the rest builds its context (testIngestContext()). */
export function ingestOnce(
    raw: Buffer | string | Readable,
    options: IngestOptions & Pick<IngestContext, 'recordStore' | 'blobStore'> & Partial<IngestContext>
): Promise<EmailRecord[]> {
    const { recipients, mailFrom, clientAddress, clientHelo, receivedAt, reservation, ...context } = options;
    return createIngest(testIngestContext(context))(raw, { recipients, mailFrom, clientAddress, clientHelo, receivedAt, reservation });
}
