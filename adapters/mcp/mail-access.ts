// What the MCP tools need of inbox-capture, and nothing of how it is reached: the plugin's
// /mcp implements it over the service in its own process (hapi/mcp-access.ts), the stdio
// command over the HTTP API with the client (client-access.ts). Scope checks belong to
// the implementations: the service's rules on one side, the API's answers on the other.

import type { SendEmailBody } from '../compose/compose-email';
import type { Attachment, AuthCheck, Email, Header, HtmlCheck, Inbox, LinkCheck } from '../client/types';

/** An email as the tools read it: the API's email object (as the client declares it), as far as they need it. */
export type MailEmail = Omit<Email, 'attachments' | 'rawUrl'> & {
    attachments: Array<Pick<Attachment, 'filename' | 'contentType' | 'size'>>;
};

/** One header field of the top-level message. */
export type MailHeader = Header;

/** An inbox that holds mail. */
export type MailInbox = Inbox;

/** One page of an inbox's emails, newest first. */
export interface MailPage {
    emails: MailEmail[];
    /** Where the next page starts; absent on the last page. */
    nextCursor?: string;
}

/** The filter of search_emails and wait_for_email. */
export interface MailFilter {
    inbox: string;
    /** A query in the search language (docs/api.md, "Search"), handed to the service as `q`. */
    query?: string;
    /** Only emails received at or after this: Unix ms, or an ISO 8601 date or date-time. */
    receivedAfter?: number | string;
}

/** The service, as the MCP tools use it. Failures throw ToolError (or anything else: INTERNAL_ERROR). */
export interface MailAccess {
    listInboxes(query: { prefix?: string; limit: number }, signal: AbortSignal): Promise<{ inboxes: MailInbox[]; hasMore: boolean }>;
    listEmails(query: MailFilter & { limit: number; cursor?: string }, signal: AbortSignal): Promise<MailPage>;
    /** The newest matching email, waiting up to `timeoutMs` for one; null when none came. */
    waitForEmail(query: MailFilter & { timeoutMs: number }, signal: AbortSignal): Promise<MailEmail | null>;
    getEmail(messageId: string, signal: AbortSignal): Promise<MailEmail>;
    getHeaders(messageId: string, signal: AbortSignal): Promise<MailHeader[]>;
    /** The attachment's decoded bytes. */
    readAttachment(messageId: string, filename: string, signal: AbortSignal): Promise<Uint8Array>;
    deleteEmail(messageId: string, signal: AbortSignal): Promise<void>;
    /** How many emails were deleted. */
    deleteInbox(inbox: string, signal: AbortSignal): Promise<number>;
    /** The email's HTML checked against the default email clients (caniemail). */
    checkHtml(messageId: string, signal: AbortSignal): Promise<HtmlCheck>;
    /** Each http(s) link's outcome (HEAD only); null when the service has the link check off. */
    checkLinks(messageId: string, signal: AbortSignal): Promise<LinkCheck[] | null>;
    /** The email's SPF, DKIM, DMARC and ARC verdicts, worked out once and kept. */
    checkAuth(messageId: string, signal: AbortSignal): Promise<AuthCheck>;
    /** Stores the email the JSON form describes, as SMTP mail is stored; its copies, one per inbox. */
    sendEmail(body: SendEmailBody, signal: AbortSignal): Promise<Array<{ messageId: string; inbox: string }>>;
    /** A fresh inbox the key can read, named `prefix` (inside the key's own prefix) and random characters. */
    newInbox(prefix: string | undefined, signal: AbortSignal): Promise<{ inbox: string; address: string }>;
}

/** A failure a tool reports as its result: `code` starts the text (NOT_FOUND, FORBIDDEN, VALIDATION_ERROR, ...). */
export class ToolError extends Error {
    readonly code: string;

    constructor(code: string, message: string) {
        super(message);
        this.name = 'ToolError';
        this.code = code;
    }
}
