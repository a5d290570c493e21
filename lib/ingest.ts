import type { Readable } from 'node:stream';
import { attachmentFilename } from './attachment-name';
import type { BlobStore, StagedBlob } from './blob-store/blob-store';
import { InboxCaptureError, isInboxCaptureError } from './errors';
import { generateMessageId, newBlobPrefix } from './ids';
import type { Notifier } from './notifier';
import { parseMessage, type ParsedMessage } from './parse';
import { linksAndCodesOf } from './links-and-codes';
import { budgetSpent, sharedMessageBudget, type MessageBudget, type MessageReservation } from './message-budget';
import { readBounded } from './read-bounded';
import { defaultInboxFromAddress, isValidInbox, MAX_RECIPIENTS, type InboxFromAddress } from './recipients';
import type { RecordStore, SaveResult } from './record-store/record-store';
import type { EmailDraft, EmailRecord, StoredAttachment } from './types';

/** Largest accepted message, bytes: 25 MiB, the common provider limit; the raw message is held in memory once. */
export const DEFAULT_MAX_MESSAGE_BYTES = 25 * 1024 * 1024;

/**
 * Longest wait for one blob store call of an ingest (a write, or a delete that
 * cleans up), ms: 30 s. A store that never answers (a hung NFS mount, an S3
 * endpoint that accepts the connection and then goes silent) must not hold the
 * SMTP session until the client gives up; 30 s is far above a healthy write of a
 * 25 MiB blob to a local disk or a nearby bucket.
 */
export const DEFAULT_BLOB_STORE_TIMEOUT_MS = 30_000;

/** Media type of the stored raw message (and of its download). */
export const RAW_CONTENT_TYPE = 'message/rfc822';

/** Envelope facts of one delivery, as an MTA or the SMTP adapter knows them. */
export interface IngestOptions {
    /** Envelope recipients (`RCPT TO`). When given and non-empty, the `To`/`Cc` headers are ignored. */
    recipients?: string[];
    /** Envelope sender (`MAIL FROM`): the sender when the message has no `From` header. */
    mailFrom?: string;
    /** Overrides the clock, Unix ms (tests, replays). */
    receivedAt?: number;
    /**
     * Budget bytes the caller already holds for this message (the SMTP listener reserves
     * while it receives DATA): the ingest grows it as it needs and releases it when done.
     */
    reservation?: MessageReservation;
}

/** Where and how the message is stored. */
export interface IngestContext {
    recordStore: RecordStore;
    blobStore: BlobStore;
    /** Told about each inbox that received mail, after the records are committed. */
    notifier?: Notifier;
    /** Largest accepted message, bytes (default 25 MiB). */
    maxMessageBytes?: number;
    /** Raw message bytes in flight across ingests (default: the process's shared budget, 128 MiB); past it, `BUSY`. */
    messageBudget?: MessageBudget;
    /**
     * Longest wait for one blob store call, ms (default 30000): a write that takes
     * longer fails the ingest with BLOB_STORE_FAILED; a cleanup delete that does is
     * given up and its blobs are left to the orphan sweep.
     */
    blobStoreTimeoutMs?: number;
    /** Address → inbox mapping (default: the local-part rule of docs/design.md). */
    inboxFromAddress?: InboxFromAddress;
    /** Receives failures that are handled but worth knowing (cleanup failures, parse errors, retries). */
    log?: (message: string, error?: unknown) => void;
}

/**
 * Stores one received message, one copy per inbox it is addressed to, and
 * returns the stored copies, one per inbox (records: the adapters build views). Order: read (bounded) → parse → blobs of every
 * copy → all records in one transaction → blobs of replaced copies removed →
 * inboxes notified. Throws `BUSY` (retryable) when the memory budget cannot hold the
 * message, `TOO_LARGE`, `NO_RECIPIENT` or `TOO_MANY_RECIPIENTS`
 * (more than MAX_RECIPIENTS inboxes) before anything is written; on `BLOB_STORE_FAILED` or `RECORD_STORE_UNAVAILABLE` whatever this
 * call wrote is removed again. Unreadable mail is never refused for being
 * unreadable: the raw bytes are stored with whatever fields the parser got (parse.ts).
 */
export async function ingestRawEmail(raw: Buffer | string | Readable, options: IngestOptions & IngestContext): Promise<EmailRecord[]> {
    const log = options.log ?? (() => undefined);
    const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;

    const blobTimeoutMs = options.blobStoreTimeoutMs ?? DEFAULT_BLOB_STORE_TIMEOUT_MS;
    if (!(Number.isSafeInteger(blobTimeoutMs) && blobTimeoutMs > 0)) {
        throw new InboxCaptureError('INVALID_INPUT', 'blobStoreTimeoutMs must be a positive integer of milliseconds');
    }

    if (options.receivedAt !== undefined && !(Number.isSafeInteger(options.receivedAt) && options.receivedAt >= 0)) {
        throw new InboxCaptureError('INVALID_INPUT', 'receivedAt must be a non-negative integer of Unix milliseconds');
    }

    const reservation = options.reservation ?? (options.messageBudget ?? sharedMessageBudget()).reserve(0);
    if (!reservation) {
        throw budgetSpent();
    }

    try {
        return await ingestReserved(raw, options, maxBytes, blobTimeoutMs, reservation, log);
    }
    finally {
        reservation.release();
    }
}

/** ingestRawEmail() once its options are checked: the message's bytes are held under `reservation`. */
async function ingestReserved(raw: Buffer | string | Readable, options: IngestOptions & IngestContext, maxBytes: number, blobTimeoutMs: number, reservation: MessageReservation, log: (message: string, error?: unknown) => void): Promise<EmailRecord[]> {
    const { recordStore, blobStore, notifier } = options;
    const bytes = await readBounded(raw, maxBytes, 'message', reservation);
    const receivedAt = options.receivedAt ?? Date.now();

    // Every key this call writes is recorded before its put, so a put that fails
    // halfway is cleaned up as well (deletes of absent keys are no-ops).
    const written: string[] = [];
    const staged: StagedBlob[] = [];
    let drafts: EmailDraft[];
    try {
        drafts = await writeCopies(bytes, options, receivedAt, { written, staged }, log);
    }
    catch (err) {
        await removeWritten(blobStore, written, blobTimeoutMs, log);
        throw err;
    }

    let result: SaveResult;
    try {
        // Staged blobs commit with the records: they are never written without them.
        result = await recordStore.saveEmails(drafts, staged.length > 0 ? { blobs: staged } : undefined);
    }
    catch (err) {
        await removeUnreferenced(recordStore, blobStore, written, blobTimeoutMs, log);
        if (isInboxCaptureError(err)) {
            throw err;
        }

        throw new InboxCaptureError('RECORD_STORE_UNAVAILABLE', 'storing the email records failed', { cause: err });
    }

    // Committed: from here on nothing may fail the ingest. Blobs the save removed with
    // the replaced copies are not deleted again (that would be an empty write transaction).
    const removed = new Set(result.removedBlobKeys);
    const replacedKeys = blobKeysOf(result.replaced).filter((key) => !removed.has(key));
    if (replacedKeys.length > 0) {
        try {
            await within(blobStore.delete(replacedKeys), blobTimeoutMs, 'removing the blobs of replaced emails');
        }
        catch (err) {
            log('removing the blobs of replaced emails failed; left for the orphan sweep', err);
        }
    }

    if (notifier) {
        for (const inbox of new Set(result.saved.map((r) => r.inbox))) {
            try {
                notifier.publish(inbox);
            }
            catch (err) {
                log(`notifying waiters of inbox ${inbox} failed`, err);
            }
        }
    }

    return result.saved;
}

/** The blobs of one ingest: keys already put (removed if the ingest fails), writes staged to commit with the records. */
interface IngestBlobs {
    written: string[];
    staged: StagedBlob[];
}

/**
 * Parses the message and writes (or stages) the raw message and attachments of
 * every copy. Kept apart so the parsed message is garbage as soon as the blobs are
 * written: only the drafts, and the staged blobs' buffers, outlive this function.
 */
async function writeCopies(
    bytes: Buffer,
    options: IngestOptions & IngestContext,
    receivedAt: number,
    blobs: IngestBlobs,
    log: (message: string, error?: unknown) => void
): Promise<EmailDraft[]> {
    const parsed = await parseMessage(bytes);
    if (parsed.error) {
        log('the parser stopped early; the message is stored with the fields it read', parsed.error);
    }

    const targets = inboxesOf(parsed, options, log);
    if (targets.size === 0) {
        throw new InboxCaptureError('NO_RECIPIENT', 'no recipient maps to an inbox');
    }

    const sourceId = parsed.messageId ?? generateMessageId();
    const sender = parsed.from ?? bareAddress(options.mailFrom ?? '');
    const body = parsed.text.length > 0 ? parsed.text : parsed.textFromHtml;
    const names = parsed.attachments.map((a, index) => attachmentFilename(index, a.filename, a.contentType));
    // Once per message, shared by its copies: they have the same subject and bodies.
    const { links, codes } = linksAndCodesOf({ subject: parsed.subject, body, htmlBody: parsed.html });

    const drafts: EmailDraft[] = [];
    for (const [inbox, recipient] of targets) {
        // Each copy owns its blobs, so deleting one copy never touches another's.
        const prefix = newBlobPrefix();
        const rawKey = `${prefix}/raw.eml`;
        await storeBlob(options, blobs, rawKey, bytes, RAW_CONTENT_TYPE, log);

        const attachments: StoredAttachment[] = [];
        for (const [index, attachment] of parsed.attachments.entries()) {
            const blobKey = `${prefix}/att/${index}`;
            await storeBlob(options, blobs, blobKey, attachment.content, attachment.contentType, log);
            attachments.push({ filename: names[index], contentType: attachment.contentType, size: attachment.size, blobKey });
        }

        drafts.push({
            sourceId,
            inbox,
            sender,
            recipient,
            subject: parsed.subject,
            body,
            htmlBody: parsed.html,
            receivedAt,
            rawKey,
            rawSize: bytes.length,
            attachments,
            links,
            codes
        });
    }

    return drafts;
}

/**
 * Inbox → the first address that maps to it, in address order. Envelope
 * recipients when given, else `To` then `Cc`. Addresses the mapping rejects (null,
 * or a name the API could never query) are skipped; more than MAX_RECIPIENTS
 * inboxes is TOO_MANY_RECIPIENTS.
 */
function inboxesOf(
    parsed: ParsedMessage,
    options: IngestOptions & IngestContext,
    log: (message: string, error?: unknown) => void
): Map<string, string> {
    const mapping = options.inboxFromAddress ?? defaultInboxFromAddress;
    const envelope = (options.recipients ?? []).filter((a) => typeof a === 'string' && a.trim().length > 0);
    const addresses = envelope.length > 0 ? envelope.map(bareAddress) : [...parsed.to, ...parsed.cc];

    const targets = new Map<string, string>();
    for (const address of addresses) {
        const inbox = mapping(address);
        if (inbox === null || inbox === undefined) {
            continue;
        }

        if (!isValidInbox(inbox)) {
            log(`inboxFromAddress mapped ${JSON.stringify(address)} to the invalid inbox ${JSON.stringify(inbox)}; recipient skipped`);
            continue;
        }

        if (!targets.has(inbox)) {
            // Refused whole: a partial set of copies would lose mail without telling anyone.
            if (targets.size === MAX_RECIPIENTS) {
                throw new InboxCaptureError('TOO_MANY_RECIPIENTS', `the recipients map to more than ${MAX_RECIPIENTS} inboxes`);
            }

            targets.set(inbox, address);
        }
    }

    return targets;
}

/**
 * Stages the blob when the blob store offers it for the record store's own database
 * (it then commits with the records, docs/design.md "What happens to a message");
 * otherwise puts it now, durably, before the records that will reference it.
 */
async function storeBlob(
    context: IngestContext,
    blobs: IngestBlobs,
    key: string,
    body: Buffer,
    contentType: string,
    log: (message: string, error?: unknown) => void
): Promise<void> {
    const target = context.recordStore.stagedBlobTarget;
    let staged: StagedBlob | null = null;
    try {
        staged = target !== undefined && context.blobStore.stage ? context.blobStore.stage(key, body, contentType) : null;
    }
    catch (err) {
        throw isInboxCaptureError(err) ? err : new InboxCaptureError('BLOB_STORE_FAILED', `staging blob ${key} failed`, { cause: err });
    }

    if (staged && staged.target === target) {
        blobs.staged.push(staged);
        return;
    }

    blobs.written.push(key);
    await putBlob(context, key, body, contentType, log);
}

/**
 * One blob write, bounded by the blob store timeout; a failure of the store becomes
 * `BLOB_STORE_FAILED` (a code it chose itself is kept). A write that times out may
 * still finish later, after the caller removed what it wrote: it is removed again
 * once it does, so a slow store leaves no orphan either.
 */
async function putBlob(
    context: IngestContext,
    key: string,
    body: Buffer,
    contentType: string,
    log: (message: string, error?: unknown) => void
): Promise<void> {
    const { blobStore } = context;
    const timeoutMs = context.blobStoreTimeoutMs ?? DEFAULT_BLOB_STORE_TIMEOUT_MS;
    // A store that throws instead of rejecting fails the same way.
    const put = (async () => blobStore.put(key, body, contentType))();
    try {
        await within(put, timeoutMs, `writing blob ${key}`);
    }
    catch (err) {
        if (err instanceof BlobStoreTimeout) {
            put.then(() => removeWritten(blobStore, [key], timeoutMs, log), () => undefined).catch(() => undefined);
            throw new InboxCaptureError('BLOB_STORE_FAILED', err.message, { cause: err });
        }

        if (isInboxCaptureError(err)) {
            throw err;
        }

        throw new InboxCaptureError('BLOB_STORE_FAILED', `writing blob ${key} failed`, { cause: err });
    }
}

/** A blob store call that did not finish in time. */
class BlobStoreTimeout extends Error {}

/** `work`'s outcome, or a BlobStoreTimeout after `timeoutMs` (the work itself is not stopped). */
async function within<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new BlobStoreTimeout(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs);
    });

    try {
        return await Promise.race([work, deadline]);
    }
    finally {
        clearTimeout(timer);
    }
}

/** `<a@b>` → `a@b`, as envelope addresses sometimes arrive. */
function bareAddress(address: string): string {
    const trimmed = address.trim();
    return trimmed.startsWith('<') && trimmed.endsWith('>') ? trimmed.slice(1, -1).trim() : trimmed;
}

/** Every blob key the records reference: raw messages and attachments. */
export function blobKeysOf(records: EmailRecord[]): string[] {
    return records.flatMap((r) => [r.rawKey, ...r.attachments.map((a) => a.blobKey)]);
}

/** Best-effort, bounded removal after a failed blob write: no record can reference these yet. */
async function removeWritten(blobStore: BlobStore, keys: string[], timeoutMs: number, log: (message: string, error?: unknown) => void): Promise<void> {
    if (keys.length === 0) {
        return;
    }

    try {
        await within((async () => blobStore.delete(keys))(), timeoutMs, 'removing the blobs of a failed ingest');
    }
    catch (err) {
        log('removing the blobs of a failed ingest failed; left for the orphan sweep', err);
    }
}

/**
 * Best-effort removal after a failed record write. A failure can be ambiguous (the
 * commit went through, the answer got lost), so only blobs no record references
 * are removed; when that cannot be checked they stay for the orphan sweep, which
 * makes the same check later. A record never points at a missing blob.
 */
async function removeUnreferenced(
    recordStore: RecordStore,
    blobStore: BlobStore,
    keys: string[],
    timeoutMs: number,
    log: (message: string, error?: unknown) => void
): Promise<void> {
    let referenced: Set<string>;
    try {
        referenced = await recordStore.referencedBlobKeys(keys);
    }
    catch (err) {
        log('cannot tell which blobs of a failed ingest are unused; left for the orphan sweep', err);
        return;
    }

    await removeWritten(blobStore, keys.filter((k) => !referenced.has(k)), timeoutMs, log);
}
