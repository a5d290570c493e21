// The options and queries the client's methods take: not served shapes (those are in
// types.ts, which re-exports these, so that one import reaches both).

/** Options of `checkHtml()`. */
export interface CheckHtmlOptions extends RequestOptions {
    /** caniemail client globs such as `outlook.*` (default: Gmail, Outlook, Apple Mail, Yahoo and Samsung Email). */
    clients?: string[];
}

/** A time bound: Unix milliseconds, a Date, or an ISO 8601 date or date-time. */
export type TimeBound = number | Date | string;

/** The filters of `GET /v1/emails` besides paging and waiting. */
export interface EmailFilter {
    /** Inbox name: the local part of the address, characters `a-z 0-9 . _ -`. */
    inbox: string;
    /** Case-insensitive substring of the sender address. */
    sender?: string;
    /** Case-insensitive substring of the subject. */
    subject?: string;
    /** Inclusive lower bound on `receivedAt`. */
    receivedAfter?: TimeBound;
    /** Exclusive upper bound on `receivedAt`. */
    receivedBefore?: TimeBound;
    hasAttachments?: boolean;
    /**
     * A search in the server's language (at most 1,024 characters, 20 terms): `from:shop
     * "order 4242" -tag:done has:attachment after:2024-05-01`; a term without a field is a
     * substring of the subject, the body or the sender. A malformed one is a VALIDATION_ERROR.
     */
    q?: string;
}

/** The query of `listEmails()`: one page, optionally a server long-poll. */
export interface ListEmailsQuery extends EmailFilter {
    /** 1 to 100 (server default 50). */
    limit?: number;
    /** `nextCursor` of the previous page. */
    cursor?: string;
    /** Wait on the server until an email matches or `timeout` seconds pass. */
    wait?: boolean;
    /** Seconds of a long-poll, 1 to 28 (server default 28). */
    timeout?: number;
}

/** The query of `emails()`: every page is fetched in turn. */
export interface EmailsQuery extends EmailFilter {
    /** Page size of each request, 1 to 100 (server default 50). */
    limit?: number;
}

/** The query of `listInboxes()`. */
export interface ListInboxesQuery {
    /** 1 to 100 (server default 50). */
    limit?: number;
    cursor?: string;
    /** Only inboxes whose name starts with it (`a-z 0-9 . _ -`, at most 64). */
    prefix?: string;
}

/** What `waitForEmail()` waits for. */
export interface WaitForEmailOptions {
    inbox: string;
    sender?: string;
    subject?: string;
    /** A search (see EmailFilter.q): waits for an email that matches it, say `body:"order 4242"`. */
    q?: string;
    hasAttachments?: boolean;
    /** Inclusive lower bound on `receivedAt` (the server's clock). */
    receivedAfter?: TimeBound;
    /** Total wait in milliseconds, over as many server long-polls as it takes (default 60000). */
    timeoutMs?: number;
    /** Cancels the wait at once. */
    signal?: AbortSignal;
}

/** Per-call options of every request method. */
export interface RequestOptions {
    /** Cancels the request. */
    signal?: AbortSignal;
}

/** Options of `deleteInbox()`. */
export interface DeleteInboxOptions extends RequestOptions {
    /** Deletes only the emails that match this search (see EmailFilter.q). */
    q?: string;
}

/** The fetch the client calls: the global one unless the options give another. */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** Options of `new InboxCaptureClient()`. */
export interface InboxCaptureClientOptions {
    /** Where the `/v1` paths start: the server's origin, plus the plugin's route prefix if it has one. */
    baseUrl: string;
    /** An API key from `inbox-capture keys create <name>`. */
    apiKey: string;
    /** Another fetch (a wrapper that logs, a polyfill); default `globalThis.fetch`. */
    fetch?: FetchFunction;
    /** Seconds of each server long-poll of `waitForEmail()`, 1 to 28 (default 28). */
    longPollSeconds?: number;
}

/** What `newInbox()` makes: a fresh inbox and the address that delivers to it. */
export interface NewInbox {
    inbox: string;
    address: string;
}
