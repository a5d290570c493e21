import type { Readable } from 'node:stream';
import { attachmentFilename } from '../mime/attachment-name';
import { blobKeysOf } from '../blob-store/blob-key';
import type { BlobStore, StagedBlob } from '../blob-store/blob-store';
import { InboxCaptureError, isInboxCaptureError } from '../errors';
import { smtpClientOption } from './smtp-client-option';
import { generateMessageId, newBlobPrefix, rawSha256Hex } from '../identity/ids';
import { removeWritten, storeBlob, type IngestBlobs } from './ingest-blobs';
import type { Notifier } from '../long-poll/notifier';
import { cleanMailText } from '../mime/mail-text';
import { emailText, type ParsedMessage } from '../mime/parse';
import { withHeadersOfAbandonedParse } from '../mime/abandoned-parse-headers';
import { linksAndCodesInSlices } from '../extract/links-and-codes';
import { searchTextOf } from '../extract/search-text';
import { budgetSpent, type MessageBudget, type MessageReservation } from '../util/message-budget';
import { readBounded } from '../util/read-bounded';
import { inboxInScope, type InboxScope } from '../identity/key-scope';
import { isValidInbox, MAX_RECIPIENTS, type InboxFromAddress } from '../identity/recipients';
import { isTenantPrefix, tenantInbox } from '../identity/tenant-prefix';
import type { DeliveryTarget, RecordStore, SaveResult } from '../record-store/record-store';
import type { EmailDraft, EmailRecord, StoredAttachment } from '../types';
import { removeUnreferencedBlobs, type BlobRemoval } from './unreferenced-blobs';

/** Media type of the stored raw message (and of its download). */
export const RAW_CONTENT_TYPE = 'message/rfc822';

/** Envelope facts of one delivery, as an MTA or the SMTP adapter knows them. */
export interface IngestOptions {
    /** Envelope recipients (`RCPT TO`). When given and non-empty, the `To`/`Cc` headers are ignored. */
    recipients?: string[];
    /** Envelope sender (`MAIL FROM`): the sender when the message has no `From` header; kept for the authentication check's SPF. */
    mailFrom?: string;
    /** The SMTP client's IP address, kept with each copy for the authentication check's SPF (absent: SPF is `none`). */
    clientAddress?: string;
    /** The name the SMTP client gave in HELO/EHLO, kept likewise. */
    clientHelo?: string;
    /**
     * The inbox prefix of the SMTP user that sent the message (docs/tenants.md): each copy goes to
     * prefix + its inbox, unless that starts with the prefix already; a recipient whose prefixed
     * inbox is longer than 64 characters is skipped. INVALID_INPUT unless a prefix an SMTP user may have.
     */
    inboxPrefix?: string;
    /** Overrides the clock, Unix ms (tests, replays). */
    receivedAt?: number;
    /**
     * Budget bytes the caller already holds for this message (the SMTP listener reserves
     * while it receives DATA): the ingest grows it as it needs and releases it when done.
     */
    reservation?: MessageReservation;
    /** Only inboxes inside this scope may receive it: one outside fails the whole message with OUT_OF_SCOPE before anything is written. */
    scope?: InboxScope;
}

/**
 * Where and how messages are stored: the service's stores and settled settings
 * (service-options.ts applies the defaults), fixed for every ingest built from it.
 */
export interface IngestContext {
    recordStore: RecordStore;
    blobStore: BlobStore;
    /** Told about each inbox that received mail, after the records are committed. */
    notifier?: Notifier;
    /** Largest accepted message, bytes. */
    maxMessageBytes: number;
    /** Raw message bytes in flight across ingests; past it, `BUSY`. */
    messageBudget: MessageBudget;
    /**
     * Longest wait for one blob store call, ms: a write that takes longer fails the ingest
     * with BLOB_STORE_FAILED; a cleanup delete that does is given up and its blobs are left
     * to the orphan sweep.
     */
    blobStoreTimeoutMs: number;
    /** Address → inbox mapping. */
    inboxFromAddress: InboxFromAddress;
    /** Receives failures that are handled but worth knowing (cleanup failures, parse errors, retries). */
    log: (message: string, error?: unknown) => void;
    /** Where the stored copies go next (webhooks, the relay): their deliveries are saved with them, then the senders are woken. */
    deliveries?: DeliveryRouting;
    /** Parses the raw message (the service passes its parse pool's). */
    parse: (raw: Buffer) => Promise<ParsedMessage>;
}

/** Where a stored copy is to be delivered, and who sends the deliveries. */
export interface DeliveryRouting {
    /** The outbox targets of a copy about to be stored (none: no delivery). */
    targetsFor(draft: EmailDraft): DeliveryTarget[];
    /** Called after a commit that wrote deliveries; must not block. */
    wake(): void;
}

/**
 * Stores one received message, one copy per inbox it is addressed to, and
 * returns the stored copies, one per inbox (records: the adapters build views). Order: read (bounded) → parse → the
 * delivery's blobs, once for all its copies → all records in one transaction → blobs
 * of replaced copies that no record still references removed → inboxes notified. Throws `BUSY` (retryable) when the memory budget cannot hold the
 * message, `TOO_LARGE`, `NO_RECIPIENT` or `TOO_MANY_RECIPIENTS`
 * (more than MAX_RECIPIENTS inboxes) before anything is written; on `BLOB_STORE_FAILED` or `RECORD_STORE_UNAVAILABLE` whatever this
 * call wrote is removed again. Unreadable mail is never refused for being
 * unreadable: the raw bytes are stored with whatever fields the parser got (parse.ts).
 */
export type Ingest = (raw: Buffer | string | Readable, options?: IngestOptions) => Promise<EmailRecord[]>;

/** The ingest of one context, built once: every call stores through the same stores and settings. */
export function createIngest(context: IngestContext): Ingest {
    return async (raw, options = {}) => {
        if (options.receivedAt !== undefined && !(Number.isSafeInteger(options.receivedAt) && options.receivedAt >= 0)) {
            throw new InboxCaptureError('INVALID_INPUT', 'receivedAt must be a non-negative integer of Unix milliseconds');
        }

        // Checked before any byte is read: a wrong option fails the call, not a stored copy.
        smtpClientOption(options);
        if (options.inboxPrefix !== undefined && !isTenantPrefix(options.inboxPrefix)) {
            throw new InboxCaptureError('INVALID_INPUT', 'inboxPrefix must be 1 to 32 characters of a-z 0-9 . _ - ending in -, . or _');
        }

        const reservation = options.reservation ?? context.messageBudget.reserve(0);
        if (!reservation) {
            throw budgetSpent();
        }

        try {
            return await ingestReserved(raw, context, options, reservation);
        }
        finally {
            reservation.release();
        }
    };
}

/** One ingest once its options are checked: the message's bytes are held under `reservation`. */
async function ingestReserved(raw: Buffer | string | Readable, context: IngestContext, options: IngestOptions, reservation: MessageReservation): Promise<EmailRecord[]> {
    const { recordStore, blobStore, notifier, log, blobStoreTimeoutMs: blobTimeoutMs } = context;
    const bytes = await readBounded(raw, context.maxMessageBytes, 'message', reservation);
    const receivedAt = options.receivedAt ?? Date.now();

    // Every key this call writes is recorded before its put, so a put that fails
    // halfway is cleaned up as well (deletes of absent keys are no-ops).
    const written: string[] = [];
    const staged: StagedBlob[] = [];
    let drafts: EmailDraft[];
    try {
        drafts = await writeCopies(bytes, context, options, receivedAt, { written, staged });
    }
    catch (err) {
        await removeWritten(blobStore, written, blobTimeoutMs, log);
        throw err;
    }

    const removal: BlobRemoval = { recordStore, blobStore, timeoutMs: blobTimeoutMs, log };
    // One pending delivery per (copy, target), committed with the copy (docs/api.md, "Webhooks" and "Auto-relay").
    const routing = context.deliveries;
    const deliveries = routing ? drafts.map((d) => routing.targetsFor(d)) : [];
    const hasDeliveries = deliveries.some((targets) => targets.length > 0);
    let result: SaveResult;
    try {
        // Staged blobs commit with the records: they are never written without them.
        result = await recordStore.saveEmails(drafts, staged.length > 0 || hasDeliveries ? {
            ...(staged.length > 0 ? { blobs: staged } : {}),
            ...(hasDeliveries ? { deliveries } : {})
        } : undefined);
    }
    catch (err) {
        // Ambiguous (the commit may have gone through, its answer lost): only what no record references.
        await removeUnreferencedBlobs(removal, written, 'a failed ingest');
        if (isInboxCaptureError(err)) {
            throw err;
        }

        throw new InboxCaptureError('RECORD_STORE_UNAVAILABLE', 'storing the email records failed', { cause: err });
    }

    // Committed: from here on nothing may fail the ingest. Blobs the save removed with
    // the replaced copies are not deleted again (that would be an empty write transaction);
    // the rest go unless another copy of their delivery still references them.
    const removed = new Set(result.removedBlobKeys);
    await removeUnreferencedBlobs(removal, blobKeysOf(result.replaced).filter((key) => !removed.has(key)), 'replaced emails');

    if (routing && hasDeliveries) {
        try {
            routing.wake();
        }
        catch (err) {
            log('waking the delivery senders failed; their polls send the deliveries', err);
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

/**
 * Parses the message and writes (or stages) the raw message and attachments of
 * every copy. Kept apart so the parsed message is garbage as soon as the blobs are
 * written: only the drafts, and the staged blobs' buffers, outlive this function.
 */
async function writeCopies(
    bytes: Buffer,
    context: IngestContext,
    options: IngestOptions,
    receivedAt: number,
    blobs: IngestBlobs
): Promise<EmailDraft[]> {
    const { log } = context;
    // Hashed while the message parses: only identical bytes replace a stored copy (docs/design.md).
    const digest = rawSha256Hex(bytes);
    // An abandoned parse gets its header fields back here, cheaply (abandoned-parse-headers.ts).
    const parsed = await withHeadersOfAbandonedParse(await context.parse(bytes), bytes);
    if (parsed.error) {
        log('the parser stopped early; the message is stored with the fields it read', parsed.error);
    }

    const targets = inboxesOf(parsed, context, options.recipients, options.inboxPrefix);
    if (targets.size === 0) {
        throw new InboxCaptureError('NO_RECIPIENT', parsed.abandoned ?
            'the parse of the message was abandoned at its deadline and no recipient of its envelope or header maps to an inbox' :
            'no recipient maps to an inbox');
    }

    const outside = [...targets.keys()].find((inbox) => !inboxInScope(options.scope, inbox));
    if (outside !== undefined) {
        throw new InboxCaptureError('OUT_OF_SCOPE', `the inbox ${JSON.stringify(outside)} lies outside the sender's scope`);
    }

    const sourceId = parsed.messageId ?? generateMessageId();
    const sender = parsed.from ?? bareAddress(options.mailFrom ?? '');
    const { subject, body, htmlBody } = emailText(parsed);
    const names = parsed.attachments.map((a, index) => attachmentFilename(index, a.filename, a.contentType));
    // The one place links and codes are worked out (docs/design.md, "The email object"):
    // once per message, shared by its copies, which have the same subject and bodies. The
    // parse worker finds them off the event loop; a message parsed here is searched in slices.
    const found = parsed.linksAndCodes ?? await linksAndCodesInSlices({ subject, body, htmlBody });
    const { codes } = found;
    // The bodies are clean already; an anchor's text or href may still decode an entity to a control character.
    const links = found.links.map((l) => ({ href: cleanMailText(l.href), text: cleanMailText(l.text) }));
    // Folded once too, for every copy: what `body:` searches (docs/api.md, "Search: `q`").
    const searchText = parsed.searchText ?? searchTextOf(body, parsed.textFromHtml);

    // One raw blob and one blob per attachment, whatever the number of copies: every
    // copy references the same keys (a delete removes only what no copy still uses).
    const prefix = newBlobPrefix();
    const rawKey = `${prefix}/raw.eml`;
    await storeBlob(context, blobs, rawKey, bytes, RAW_CONTENT_TYPE, log);
    const attachments: StoredAttachment[] = [];
    for (const [index, attachment] of parsed.attachments.entries()) {
        const blobKey = `${prefix}/att/${index}`;
        await storeBlob(context, blobs, blobKey, attachment.content, attachment.contentType, log);
        const stored: StoredAttachment = { filename: names[index], contentType: attachment.contentType, size: attachment.size, blobKey };
        if (attachment.contentId !== undefined) {
            stored.contentId = attachment.contentId;
        }

        attachments.push(stored);
    }

    const rawSha256 = await digest;
    const smtpClient = smtpClientOption(options);
    const drafts: EmailDraft[] = [];
    for (const [inbox, recipient] of targets) {
        drafts.push({
            sourceId,
            inbox,
            sender,
            senderName: parsed.fromName,
            recipient,
            subject,
            body,
            htmlBody,
            receivedAt,
            rawKey,
            rawSize: bytes.length,
            rawSha256,
            attachments,
            links,
            codes,
            tags: parsed.tags,
            searchText,
            ...(smtpClient ? { smtpClient } : {})
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
    { inboxFromAddress: mapping, log }: IngestContext,
    recipients: string[] | undefined,
    inboxPrefix: string | undefined
): Map<string, string> {
    const envelope = (recipients ?? []).filter((a) => typeof a === 'string' && a.trim().length > 0);
    const addresses = envelope.length > 0 ? envelope.map(bareAddress) : [...parsed.to, ...parsed.cc];

    const targets = new Map<string, string>();
    for (const address of addresses) {
        const mapped = mapping(address);
        if (mapped === null || mapped === undefined) {
            continue;
        }

        if (!isValidInbox(mapped)) {
            log(`inboxFromAddress mapped ${JSON.stringify(address)} to the invalid inbox ${JSON.stringify(mapped)}; recipient skipped`);
            continue;
        }

        const inbox = tenantInbox(inboxPrefix, mapped);
        if (inbox === null) {
            log(`the inbox of ${JSON.stringify(address)} under the prefix ${JSON.stringify(inboxPrefix)} is longer than an inbox may be; recipient skipped`);
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

/** `<a@b>` → `a@b`, as envelope addresses sometimes arrive; without control characters, as every text field. */
function bareAddress(address: string): string {
    const trimmed = cleanMailText(address).trim();
    return trimmed.startsWith('<') && trimmed.endsWith('>') ? trimmed.slice(1, -1).trim() : trimmed;
}
