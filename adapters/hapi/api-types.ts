import type { HeaderField } from '../../lib/mime/header-fields';
import type { FaultRule } from '../../lib/faults/fault-rule';
import type { HtmlCheckResult, HtmlFinding } from '../../lib/html-check/html-check-types';
import type { AuthCheckResult } from '../../lib/auth-check/auth-check-types';
import type { EmailRecord, InboxPage, InboxSummary, Link, StoredAttachment } from '../../lib/types';

// The JSON shapes the API answers, derived from the records they are built from: a view
// is its record less what stays inside (blob keys, sizes of the raw message), plus the
// URLs of the routes. The wire shape itself is declared once, by the joi schemas of
// api-schemas.ts, which make /openapi.json; a test checks these types against that
// document field by field (docs/design.md, "Where the email's shape lives").

/** Attachment as the API shows it: a download URL instead of the blob key. */
export interface AttachmentView extends Omit<StoredAttachment, 'blobKey'> {
    /** Relative URL of the download, the plugin's route prefix included. */
    url: string;
    /** The part's Content-ID without angle brackets (`cid:` in the HTML); `''` when none. */
    contentId: string;
}

/** A link of an email as the API shows it: as stored. */
export type LinkView = Link;

/** The parts of a record the API never shows: the source id, where the raw message is kept and its digest, the SMTP session's parts (the authentication check's). */
type InternalFields = 'sourceId' | 'rawKey' | 'rawSize' | 'rawSha256' | 'smtpClient';

/** The API's email object (docs/design.md: every field always present). */
export interface EmailView extends Omit<EmailRecord, InternalFields | 'attachments'> {
    attachments: AttachmentView[];
    /** Relative URL of the raw .eml, the plugin's route prefix included. */
    rawUrl: string;
    /** The raw message's size in bytes (the record's rawSize: what `larger:`/`smaller:` compare). */
    size: number;
}

/** What a page of a list adds to its items: `nextCursor` is present exactly when `hasMore` is true. */
interface PageEnvelope {
    hasMore: boolean;
    nextCursor?: string;
}

/** The list page of GET /v1/emails. */
export interface EmailPage extends PageEnvelope {
    emails: EmailView[];
}

/** An inbox as GET /v1/inboxes lists it: as the store summarises it. */
export type InboxView = InboxSummary;

/** The inbox list page of GET /v1/inboxes: the store's page with a cursor. */
export interface InboxPageView extends InboxPage, PageEnvelope {}

/** GET /v1/emails/{messageId}/headers answer: the header fields as parsed. */
export interface HeadersView {
    headers: HeaderField[];
}

/** PUT /v1/emails/{messageId}/seen body. */
export interface SeenBodyView {
    seen: boolean;
}

/** PUT /v1/emails/{messageId}/tags body, once validated (lowercased, each once). */
export interface TagsBodyView {
    tags: string[];
}

/** DELETE /v1/emails/{messageId} answer. */
export interface DeletedEmailView {
    deleted: true;
    messageId: string;
}

/** GET /v1/keys/current answer: the calling key's name and scope (docs/api.md, "Keys with a scope"). */
export interface CurrentKeyView {
    name: string;
    /** Only inboxes whose name starts with it are reachable; null: every inbox. */
    inboxPrefix: string | null;
    readOnly: boolean;
}

/** DELETE /v1/emails answer: how many emails were deleted. */
export interface DeletedInboxView {
    deleted: number;
}

/** A fault rule as POST /v1/faults and GET /v1/faults answer it: as stored. */
export type FaultRuleView = FaultRule;

/** GET /v1/faults answer. */
export interface FaultListView {
    faults: FaultRuleView[];
}

/** DELETE /v1/faults/{id} answer. */
export interface DeletedFaultView {
    deleted: true;
}

/** DELETE /v1/faults answer: how many rules were deleted. */
export interface DeletedFaultsView {
    deleted: number;
}

/** POST /v1/emails/{messageId}/release answer. */
export interface ReleasedView {
    released: true;
    to: string[];
}

/** One stored copy of a sent email. */
export interface SentEmailView {
    messageId: string;
    inbox: string;
}

/** POST /v1/emails answer: one entry per stored copy. */
export interface SentEmailsView {
    emails: SentEmailView[];
}

/** POST /v1/emails/{messageId}/checks/links answer. */
export interface LinkChecksView {
    links: Array<{ url: string; ok: boolean; status?: number; error?: 'TIMEOUT' | 'REFUSED' | 'DNS' | 'TLS' | 'NOT_ALLOWED' | 'TOO_MANY_REDIRECTS'; redirects: string[] }>;
}

/** GET /v1/emails/{messageId}/checks/auth answer: as the check answers (and keeps) it. */
export type AuthCheckView = AuthCheckResult;

/** GET /health answer. */
export interface HealthView {
    status: 'ok';
    /** Unix milliseconds. */
    timestamp: number;
}

/** GET /version answer. */
export interface VersionView {
    version: string;
    apiVersions: string[];
}


/** The HTML compatibility check of one email: as the check answers it. */
export type HtmlCheckView = HtmlCheckResult;

/** One finding of the HTML check. */
export type HtmlFindingView = HtmlFinding;
