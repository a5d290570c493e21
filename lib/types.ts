/** Attachment metadata as stored: the blob key never leaves the process. */
export interface StoredAttachment {
    /** `<index>-<safe name>`, unique within its email. */
    filename: string;
    contentType: string;
    /** Decoded size in bytes. */
    size: number;
    /** Blob-store key, generated from our ids only. */
    blobKey: string;
}

/** One stored copy of a message in one inbox. */
export interface EmailRecord {
    /** Unique across the store: the bare Message-ID, or derived from it and the inbox (docs/design.md). */
    messageId: string;
    /** The bare Message-ID (or generated id) the copy was made from. */
    sourceId: string;
    inbox: string;
    sender: string;
    recipient: string;
    subject: string;
    body: string;
    htmlBody: string;
    /** Unix milliseconds, the service's clock at ingest. */
    receivedAt: number;
    rawKey: string;
    /** Size of the raw .eml in bytes. */
    rawSize: number;
    attachments: StoredAttachment[];
}

/** A copy before the record store gave it its `messageId`. */
export type EmailDraft = Omit<EmailRecord, 'messageId'>;

/** Position after which a page starts (keyset pagination). */
export interface CursorPosition {
    receivedAt: number;
    messageId: string;
}

/** A validated list request, as the record store receives it. */
export interface ListQuery {
    inbox: string;
    /** 1..100 */
    limit: number;
    after?: CursorPosition;
    /** Case-insensitive substring; `%`, `_`, `\` literal. */
    sender?: string;
    subject?: string;
    /** Inclusive lower bound, Unix ms. */
    receivedAfter?: number;
    /** Exclusive upper bound, Unix ms. */
    receivedBefore?: number;
    hasAttachments?: boolean;
}

/** What a record store answers to a list request. */
export interface RecordPage {
    records: EmailRecord[];
    hasMore: boolean;
}

/** An API key as listed: never its hash. */
export interface ApiKeyInfo {
    name: string;
    createdAt: number;
    revokedAt: number | null;
}

/** An inbox that holds mail, as GET /v1/inboxes lists it. */
export interface InboxSummary {
    name: string;
    /** How many emails it holds. */
    count: number;
    /** receivedAt of its newest email, Unix ms. */
    lastReceivedAt: number;
}

/** Position after which a page of inboxes starts (keyset pagination). */
export interface InboxPosition {
    lastReceivedAt: number;
    name: string;
}

/** A validated inbox list request, as the record store receives it. */
export interface InboxQuery {
    /** 1..100 */
    limit: number;
    after?: InboxPosition;
    /** Only inboxes whose name starts with this (characters of an inbox name). */
    prefix?: string;
}

/** What a record store answers to an inbox list request: newest first, then name. */
export interface InboxPage {
    inboxes: InboxSummary[];
    hasMore: boolean;
}
