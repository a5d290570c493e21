/** The rows of `emails` and `api_keys` as the drivers return them, and the records they map to. */

import { foldForSearch, SEARCH_PART_SEPARATOR } from '../../extract/search-text';
import type { ApiKeyInfo, EmailRecord, Link, StoredAttachment } from '../../types';

/** A row of `emails` with the columns EMAIL_COLUMNS (schema.ts) selects. */
export interface EmailRow {
    seq: number | string;
    message_id: string;
    source_id: string;
    inbox: string;
    sender: string;
    recipient: string;
    subject: string;
    body: string;
    html_body: string;
    received_at: number | string;
    raw_key: string;
    raw_size: number | string;
    /** NULL in rows stored before the column existed. */
    raw_sha256: string | null;
    attachments: string;
    /** JSON text of Link[]; NULL in rows stored before the column existed, until migrate() fills them. */
    links: string | null;
    /** JSON text of string[]; NULL like `links`. */
    codes: string | null;
    /** JSON text of string[] ('[]' in rows stored before tags). */
    tags: string;
    sender_name: string;
    /** The SMTP session's parts (types.ts, SmtpClient): NULL when not told, and in rows stored before the columns existed. */
    client_address: string | null;
    client_helo: string | null;
    mail_from: string | null;
    /** SQLite answers 0 or 1. */
    seen: boolean | number;
}

/** A row of `api_keys` with the columns KEY_COLUMNS (schema.ts) selects. */
export interface KeyRow {
    name: string;
    created_at: number | string;
    revoked_at: number | string | null;
    inbox_prefix: string | null;
    /** SQLite answers 0 or 1. */
    read_only: boolean | number;
}

/**
 * The record an `emails` row holds, links and codes as stored. A row without them (written
 * by a version before them after migrate() filled the others) reads as none until the next
 * migrate(): reads never work them out (docs/design.md, "The email object").
 */
export function toRecord(row: EmailRow): EmailRecord {
    return {
        messageId: row.message_id,
        sourceId: row.source_id,
        inbox: row.inbox,
        sender: row.sender,
        senderName: row.sender_name,
        recipient: row.recipient,
        subject: row.subject,
        body: row.body,
        htmlBody: row.html_body,
        receivedAt: toNumber(row.received_at),
        rawKey: row.raw_key,
        rawSize: toNumber(row.raw_size),
        rawSha256: row.raw_sha256 ?? '',
        attachments: parseAttachments(row.attachments),
        links: row.links === null ? [] : parseLinks(row.links),
        codes: row.codes === null ? [] : parseCodes(row.codes),
        tags: parseTags(row.tags),
        seen: Boolean(row.seen),
        ...smtpClientOf(row)
    };
}

// Absent, not three nulls, when the ingest was told nothing: a copy uploaded through the API reads as it did before.
function smtpClientOf(row: EmailRow): Pick<EmailRecord, 'smtpClient'> {
    if (row.client_address === null && row.client_helo === null && row.mail_from === null) {
        return {};
    }

    return { smtpClient: { address: row.client_address, helo: row.client_helo, mailFrom: row.mail_from } };
}

/** Tags as stored: a JSON array of strings. */
export function parseTags(json: string): string[] {
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed)) {
        throw new Error('Stored tags are not a JSON array');
    }

    return parsed as string[];
}

// Only the two known fields are kept, as for attachments.
function parseLinks(json: string): Link[] {
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed)) {
        throw new Error('Stored links are not a JSON array');
    }

    return parsed.map((l: Link) => ({ href: l.href, text: l.text }));
}

function parseCodes(json: string): string[] {
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed)) {
        throw new Error('Stored codes are not a JSON array');
    }

    return parsed as string[];
}

/** Attachments as stored (JSON text); only the known fields are kept, whatever else the JSON holds. */
export function parseAttachments(json: string): StoredAttachment[] {
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed)) {
        throw new Error('Stored attachments are not a JSON array');
    }

    return parsed.map((a: StoredAttachment) => {
        const attachment: StoredAttachment = {
            filename: a.filename,
            contentType: a.contentType,
            size: a.size,
            blobKey: a.blobKey
        };
        if (typeof a.contentId === 'string') {
            attachment.contentId = a.contentId;
        }

        return attachment;
    });
}

/**
 * The `emails` row (all but its seq) that stores `record`, with the digests its lookups
 * use and the folded texts a search compares (`searchText`: what `body:` searches).
 * `seen` is left to the column's default: a stored copy arrives unread.
 * `json` (one per batch) serialises an attachment list the copies of a delivery share once.
 */
export function toInsertRow({ record, searchText, sourceHash, messageHash }: { record: Omit<EmailRecord, 'seen'>; searchText: string; sourceHash: string; messageHash: string }, json?: Map<StoredAttachment[], string>): Record<string, unknown> {
    let attachments = json?.get(record.attachments);
    if (attachments === undefined) {
        attachments = JSON.stringify(record.attachments);
        json?.set(record.attachments, attachments);
    }

    return {
        message_id: record.messageId,
        message_id_hash: messageHash,
        source_id: record.sourceId,
        source_id_hash: sourceHash,
        inbox: record.inbox,
        sender: record.sender,
        recipient: record.recipient,
        subject: record.subject,
        sender_folded: record.sender.toLowerCase(),
        subject_folded: record.subject.toLowerCase(),
        body: record.body,
        html_body: record.htmlBody,
        received_at: record.receivedAt,
        raw_key: record.rawKey,
        raw_size: record.rawSize,
        // NULL, not '': a digest we do not know is equal to none (the unique index ignores NULLs).
        raw_sha256: record.rawSha256 === '' ? null : record.rawSha256,
        has_attachments: record.attachments.length > 0,
        attachments,
        links: JSON.stringify(record.links),
        codes: JSON.stringify(record.codes),
        tags: JSON.stringify(record.tags),
        sender_name: record.senderName,
        sender_name_folded: foldForSearch(record.senderName),
        client_address: record.smtpClient?.address ?? null,
        client_helo: record.smtpClient?.helo ?? null,
        mail_from: record.smtpClient?.mailFrom ?? null,
        ...searchColumns(record, searchText)
    };
}

/** The folded texts of `record` that searches compare besides sender and subject (backfill-search.ts fills older rows with these). */
export function searchColumns(record: Pick<EmailRecord, 'recipient' | 'attachments'>, searchText: string): { recipient_folded: string; filenames_folded: string; body_folded: string } {
    return {
        recipient_folded: foldForSearch(record.recipient),
        filenames_folded: record.attachments.map((a) => foldForSearch(a.filename)).join(SEARCH_PART_SEPARATOR),
        body_folded: searchText
    };
}

/** The key info an `api_keys` row holds (never its hash). */
export function toKeyInfo(row: KeyRow): ApiKeyInfo {
    return {
        name: row.name,
        createdAt: toNumber(row.created_at),
        revokedAt: row.revoked_at === null ? null : toNumber(row.revoked_at),
        inboxPrefix: row.inbox_prefix,
        readOnly: Boolean(row.read_only)
    };
}

/** A bigint column's value as a number: node-postgres returns them as strings; our values are < 2^53. */
export function toNumber(value: number | string): number {
    return typeof value === 'number' ? value : Number(value);
}
