/** Attachment metadata as stored: the blob key never leaves the process. */
export interface StoredAttachment {
    /** `<index>-<safe name>`, unique within its email. */
    filename: string;
    contentType: string;
    /** Decoded size in bytes. */
    size: number;
    /** Blob-store key, generated from our ids only. */
    blobKey: string;
    /** The part's Content-ID without angle brackets (an inline image's `cid:`); absent when it has none. */
    contentId?: string;
}

/** A link of an email (docs/api.md, "Links and codes"): an anchor of the HTML body or a bare URL of the text body. */
export interface Link {
    /** The href, entities decoded and trimmed, otherwise as written. */
    href: string;
    /** The anchor's visible text, whitespace collapsed (`""` when none); a bare URL's text is the URL. */
    text: string;
}

/**
 * The SMTP session a copy arrived in, kept for the authentication check's SPF (docs/api.md,
 * "Authentication check"): each part null when the ingest was not told it.
 */
export interface SmtpClient {
    /** The client's IP address. */
    address: string | null;
    /** The name it gave in HELO/EHLO. */
    helo: string | null;
    /** The envelope sender (MAIL FROM); `''` for the null sender `<>`. */
    mailFrom: string | null;
}

/** One stored copy of a message in one inbox. */
export interface EmailRecord {
    /** Unique across the store: the bare Message-ID, or derived from it and the inbox (docs/design.md). */
    messageId: string;
    /** The bare Message-ID (or generated id) the copy was made from. */
    sourceId: string;
    inbox: string;
    sender: string;
    /** The display name of the first `From` mailbox, decoded; `''` when it gives none. */
    senderName: string;
    recipient: string;
    subject: string;
    body: string;
    htmlBody: string;
    /** Unix milliseconds, the service's clock at ingest. */
    receivedAt: number;
    rawKey: string;
    /** Size of the raw .eml in bytes. */
    rawSize: number;
    /**
     * SHA-256 hex of the raw .eml: only a copy with the same bytes replaces this one
     * (docs/design.md, "Identity and inboxes"); `""` for a copy stored before it was kept.
     */
    rawSha256: string;
    attachments: StoredAttachment[];
    /** Links of the HTML, then the text body, at most 100 (links.ts). */
    links: Link[];
    /** Candidate one-time codes of the subject, then the body, at most 10 (codes.ts). */
    codes: string[];
    /** At most 20 lowercase tags (lib/identity/tags.ts): from `X-Tags` at ingest, replaced by setTags(). */
    tags: string[];
    /** Whether someone opened it (marked by setSeen()); false when it arrives. */
    seen: boolean;
    /** Where it came from over SMTP; absent when the ingest was told nothing of it (an API upload, a copy stored before it was kept). */
    smtpClient?: SmtpClient;
}

/**
 * A copy before the record store gave it its `messageId`. Its `links` and `codes` come
 * from ingest, which works them out once (docs/design.md, "The email object"); a store
 * keeps them as given and never works them out itself.
 */
export type EmailDraft = Omit<EmailRecord, 'messageId' | 'seen'> & {
    /**
     * What `body:` searches: the text body and the HTML's text, folded (searchTextOf(),
     * extract/search-text.ts), worked out once at ingest. Stored beside the record, never part of it.
     */
    searchText: string;
};

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
    /** The terms of a search (`q`, lib/search/parse-query.ts), all of which must match. */
    q?: SearchTerm[];
    /**
     * Byte budget of the page: emails are taken while the UTF-8 bytes of their stored text
     * (bodies, subject, attachment and link lists) add up to at most this; the first is always
     * taken. Absent: only `limit` bounds the page. A cut page says `hasMore`.
     */
    maxBytes?: number;
}

/** What a record store answers to a list request. */
export interface RecordPage {
    records: EmailRecord[];
    hasMore: boolean;
}

/** What a key may reach (docs/api.md, "Keys with a scope"). Keys created without options have full access. */
export interface KeyScope {
    /** Only inboxes whose name starts with this are seen or changed; null: every inbox. */
    inboxPrefix: string | null;
    /** Reads only: every delete or other change is refused. */
    readOnly: boolean;
}

/** An API key as listed: never its hash. */
export interface ApiKeyInfo extends KeyScope {
    name: string;
    createdAt: number;
    revokedAt: number | null;
}

/** An SMTP user kept in the store, as listed: never its password or hash. */
export interface SmtpUserInfo {
    name: string;
    /** Every copy of mail it sends goes to an inbox starting with this. */
    inboxPrefix: string;
    createdAt: number;
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

/**
 * Fields searched for a case-insensitive substring: `from` (the sender's address or
 * display name), `to` (the recipient), `subject`, `body` (the text body and the HTML's
 * text), `filename` (any attachment's); `text` is a term without a field: the subject,
 * the body, or the sender's address or display name.
 */
export type TextField = 'from' | 'to' | 'subject' | 'body' | 'filename' | 'text';

/** What `has:` asks for. */
export type HasWhat = 'attachment' | 'link' | 'code';

/** One term of a search; `negated` (a leading `-`) keeps the emails it does not match instead. */
export type SearchTerm = { negated: boolean } & (
    /** A substring of a field, as written (the store folds case). */
    | { field: TextField; text: string }
    /** One of the email's tags, exactly, lowercased here. */
    | { field: 'tag'; tag: string }
    | { field: 'has'; has: HasWhat }
    /** Whether the email was opened: `is:read` / `is:unread`. */
    | { field: 'is'; seen: boolean }
    /** receivedAt strictly before / after `at` (Unix ms). */
    | { field: 'before' | 'after'; at: number }
    /** The raw message's bytes strictly more / fewer than `bytes`. */
    | { field: 'larger' | 'smaller'; bytes: number }
);
