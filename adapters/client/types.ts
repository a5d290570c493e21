// The JSON shapes the HTTP API answers, written by hand for the client: it imports
// nothing of the server (no Node modules reach a browser bundle). A test checks each of
// them against the served /openapi.json, field by field and both ways, so they cannot
// drift from the server (docs/design.md, "Where the email's shape lives").

export type * from './options';

/** An attachment of an email (`filename` is `<index>-<name>`). */
export interface Attachment {
    filename: string;
    contentType: string;
    /** Decoded size in bytes. */
    size: number;
    /** Relative URL of the download (a 302 to a time-limited link). */
    url: string;
    /** The part's Content-ID without angle brackets (what `cid:` URLs in the HTML name); `''` when none. */
    contentId: string;
}

/** A link found in the email: from the HTML anchors, then bare URLs of the text body. */
export interface Link {
    href: string;
    /** The anchor's visible text; the URL itself for a link from the text body. */
    text: string;
}

/** The API's email object: every field always present. */
export interface Email {
    messageId: string;
    inbox: string;
    sender: string;
    /** The display name of the first From mailbox; `''` when the message gives none. */
    senderName: string;
    recipient: string;
    subject: string;
    body: string;
    htmlBody: string;
    attachments: Attachment[];
    /** Unix milliseconds, the server's clock at ingest. */
    receivedAt: number;
    /** Relative URL of the raw .eml (a 302 to a time-limited link). */
    rawUrl: string;
    /** At most 100, in document order. */
    links: Link[];
    /** Candidate one-time codes (4 to 8 digits), at most 10, in order of appearance. */
    codes: string[];
    /** At most 20 lowercase tags: from `X-Tags` at ingest, replaced by `setTags()`. */
    tags: string[];
    /** The raw message's size in bytes. */
    size: number;
    /** Whether the email was opened: false when it arrives, set by `setSeen()`. */
    seen: boolean;
}

/** One page of `GET /v1/emails`: `nextCursor` is present exactly when `hasMore` is true. */
export interface EmailPage {
    emails: Email[];
    hasMore: boolean;
    nextCursor?: string;
}

/** One header field of the top-level message, unfolded and decoded. */
export interface Header {
    name: string;
    value: string;
}

/** The answer of `GET /v1/emails/{messageId}/headers`: every field, in message order. */
export interface EmailHeaders {
    headers: Header[];
}

/** A feature of an email's HTML that some checked client lacks or half-supports (caniemail). */
export interface HtmlFinding {
    /** caniemail's title of the feature, e.g. `display:flex`. */
    title: string;
    slug?: string;
    url?: string;
    /** `html`, `css`, `image` or `others`. */
    category: string;
    /** The clients that lack it. */
    unsupported: string[];
    /** The clients that half-support it. */
    partial: string[];
    /** How often it occurs in the HTML. */
    count: number;
}

/** The answer of `GET /v1/emails/{messageId}/checks/html`. */
export interface HtmlCheck {
    /** The caniemail client ids checked. */
    clients: string[];
    /** 0–100: the share of (feature found, client) pairs supported, a partial one counting half. */
    score: number;
    findings: HtmlFinding[];
    data: { source: 'caniemail'; updated: string };
    /** `false` when the email has no HTML body. */
    html?: false;
}

/** The answer of `DELETE /v1/emails/{messageId}`. */
export interface DeletedEmail {
    deleted: true;
    messageId: string;
}

/** The answer of `DELETE /v1/emails?inbox=`: how many emails were deleted. */
export interface DeletedInbox {
    deleted: number;
}

/** Which commands a fault rule answers: `inbox` exactly, `recipient` and `sender` as case-insensitive substrings. */
export interface FaultMatch {
    inbox?: string;
    recipient?: string;
    sender?: string;
}

/** The reply a fault rule gives instead of the normal one. */
export interface FaultReply {
    /** 400–599. */
    code: number;
    message?: string;
}

/** The body of `POST /v1/faults` (docs/api.md, "Faults"): at least one of `reply`, `delayMs`, `disconnect`. */
export interface FaultRuleInput {
    stage: 'connect' | 'mail' | 'rcpt' | 'data';
    /** None for `connect`; only `sender` for `mail`. */
    match?: FaultMatch;
    reply?: FaultReply;
    /** Wait before the reply, the disconnect or the normal reply, ms (0–60000). */
    delayMs?: number;
    disconnect?: true;
    /** Only the next `times` matching commands, across every instance; then the rule is gone. */
    times?: number;
    /** 0–1, default 1. */
    probability?: number;
}

/** A stored fault rule. */
export interface FaultRule {
    id: string;
    stage: 'connect' | 'mail' | 'rcpt' | 'data';
    match: FaultMatch;
    reply?: FaultReply;
    delayMs?: number;
    disconnect?: true;
    times?: number;
    probability: number;
    /** Commands that still get the fault; `null`: until the rule is deleted. */
    remaining: number | null;
    /** Unix milliseconds. */
    createdAt: number;
}

/** The answer of `GET /v1/faults`. */
export interface FaultList {
    faults: FaultRule[];
}

/** The answer of `DELETE /v1/faults/{id}`. */
export interface DeletedFault {
    deleted: true;
}

/** The answer of `DELETE /v1/faults`: how many rules were deleted. */
export interface DeletedFaults {
    deleted: number;
}

/** The answer of `POST /v1/emails/{messageId}/release`. */
export interface Released {
    released: true;
    /** The envelope recipients the relay accepted the message for. */
    to: string[];
}

/** One link's outcome in `POST /v1/emails/{messageId}/checks/links` (docs/api.md, "Link check"). */
export interface LinkCheck {
    /** The link's href, as in the email's `links`. */
    url: string;
    /** The last answer's status is below 400. */
    ok: boolean;
    /** The last answer's status (absent when no answer came). */
    status?: number;
    /** Why no usable answer came. */
    error?: 'TIMEOUT' | 'REFUSED' | 'DNS' | 'TLS' | 'NOT_ALLOWED' | 'TOO_MANY_REDIRECTS';
    /** The redirects followed, in order (absolute URLs). */
    redirects: string[];
}

/** The answer of `POST /v1/emails/{messageId}/checks/links`. */
export interface LinkChecks {
    links: LinkCheck[];
}

/** An RFC 8601 result word of the authentication check. */
export type AuthResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror';

/** The SPF verdict of `GET /v1/emails/{messageId}/checks/auth`. */
export interface AuthSpf {
    result: AuthResult;
    /** The envelope sender's domain (the HELO name's for `<>`); null when neither is known. */
    domain: string | null;
}

/** One DKIM signature's verdict; an unsigned email has one `none` with null domain and selector. */
export interface AuthDkim {
    result: AuthResult;
    domain: string | null;
    selector: string | null;
}

/** The DMARC verdict of the `From` domain. */
export interface AuthDmarc {
    result: AuthResult;
    /** The organizational domain; null without exactly one `From` address. */
    domain: string | null;
    /** The record's policy (`none`, `quarantine`, `reject`); null without a record. */
    policy: string | null;
}

/** The ARC chain's verdict. */
export interface AuthArc {
    result: AuthResult;
}

/** The answer of `GET /v1/emails/{messageId}/checks/auth` (docs/api.md, "Authentication check"). */
export interface AuthCheck {
    spf: AuthSpf;
    dkim: AuthDkim[];
    dmarc: AuthDmarc;
    arc: AuthArc;
    /** When the check ran, Unix ms: kept, so later calls answer the same. */
    checkedAt: number;
}

/** Every `error` code the API documents in its answers. */
export type ApiErrorCode =
    | 'UNAUTHORIZED'
    | 'FORBIDDEN'
    | 'LINK_CHECK_DISABLED'
    | 'NOT_FOUND'
    | 'MISSING_INBOX'
    | 'INVALID_INBOX'
    | 'INVALID_LIMIT'
    | 'VALIDATION_ERROR'
    | 'RECIPIENT_NOT_ALLOWED'
    | 'RELAY_NOT_CONFIGURED'
    | 'RELAY_FAILED'
    | 'FAULT_LIMIT_REACHED'
    | 'TOO_LARGE'
    | 'UNSUPPORTED_MEDIA_TYPE'
    | 'SERVICE_UNAVAILABLE'
    | 'INTERNAL_ERROR';

/** The body of every error answer. */
export interface ErrorBody {
    error: ApiErrorCode;
}

/** An inbox holding at least one email. */
export interface Inbox {
    name: string;
    count: number;
    /** Unix milliseconds of its newest email. */
    lastReceivedAt: number;
}

/** One page of `GET /v1/inboxes`, most recently received first. */
export interface InboxPage {
    inboxes: Inbox[];
    hasMore: boolean;
    nextCursor?: string;
}

/** The calling API key, as `GET /v1/keys/current` answers: its name and scope. */
export interface CurrentKey {
    name: string;
    /** The key reaches only inboxes whose name starts with it; null: every inbox. */
    inboxPrefix: string | null;
    /** Every change (deletes) is refused with 403 FORBIDDEN. */
    readOnly: boolean;
}

/** The body of `PUT /v1/emails/{messageId}/seen`, as `setSeen()` sends it. */
export interface SeenBody {
    seen: boolean;
}

/** The body of `PUT /v1/emails/{messageId}/tags`, as `setTags()` sends it. */
export interface TagsBody {
    tags: string[];
}

/** One stored copy of a sent email (`POST /v1/emails`). */
export interface SentEmail {
    messageId: string;
    inbox: string;
}

/** What `POST /v1/emails` answers. */
export interface SentEmails {
    emails: SentEmail[];
}
