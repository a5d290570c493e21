import { fetchDownload, resolveDownloadLink } from './download';
import { apiErrorFrom } from './errors';
import { newInbox } from './new-inbox';
import { queryString, timeParam, type QueryValue } from './query-string';
import type {
    CheckHtmlOptions, CurrentKey, DeletedEmail, DeletedFaults, DeletedInbox, DeleteInboxOptions, Email, EmailHeaders, EmailPage, EmailsQuery, FaultList, FaultRule,
    FaultRuleInput, FetchFunction, Header, HtmlCheck, InboxCaptureClientOptions, InboxPage, ListEmailsQuery, ListInboxesQuery, NewInbox, Released, LinkCheck, LinkChecks, AuthCheck,
    RequestOptions, SeenBody, SentEmail, SentEmails, TagsBody, WaitForEmailOptions
} from './types';
import type { SendEmailInput } from './send-types';
import { MAX_LONG_POLL_SECONDS, waitForEmail } from './wait-for-email';

const segment = encodeURIComponent;

// The API's query names for the list filters; time bounds as the API reads them.
function listParams(query: ListEmailsQuery): Record<string, QueryValue> {
    return {
        inbox: query.inbox,
        limit: query.limit,
        cursor: query.cursor,
        wait: query.wait,
        timeout: query.timeout,
        sender: query.sender,
        subject: query.subject,
        receivedAfter: query.receivedAfter === undefined ? undefined : timeParam(query.receivedAfter),
        receivedBefore: query.receivedBefore === undefined ? undefined : timeParam(query.receivedBefore),
        hasAttachments: query.hasAttachments,
        q: query.q
    };
}

/** A typed client of the inbox-capture HTTP API, for test code in Node ≥ 20 and browsers. */
export class InboxCaptureClient {
    readonly baseUrl: string;
    readonly #headers: Record<string, string>;
    readonly #fetch: FetchFunction;
    readonly #longPollSeconds: number;

    constructor(options: InboxCaptureClientOptions) {
        const { baseUrl, apiKey, fetch: fetchFn, longPollSeconds = MAX_LONG_POLL_SECONDS } = options ?? {};
        if (typeof baseUrl !== 'string' || !/^https?:\/\//i.test(baseUrl)) {
            throw new TypeError('InboxCaptureClient: baseUrl must be an http(s) URL such as http://127.0.0.1:3000');
        }

        if (typeof apiKey !== 'string' || apiKey === '') {
            throw new TypeError('InboxCaptureClient: apiKey is required (inbox-capture keys create <name>)');
        }

        if (!Number.isInteger(longPollSeconds) || longPollSeconds < 1 || longPollSeconds > MAX_LONG_POLL_SECONDS) {
            throw new TypeError(`InboxCaptureClient: longPollSeconds must be an integer from 1 to ${MAX_LONG_POLL_SECONDS}`);
        }

        this.baseUrl = baseUrl.replace(/\/+$/, '');
        this.#headers = { authorization: `Bearer ${apiKey}`, accept: 'application/json' };
        // Called as a plain function: a browser's fetch throws when called as another object's method.
        const given = fetchFn ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
        this.#fetch = (input, init) => given(input, init);
        this.#longPollSeconds = longPollSeconds;
    }

    /** One page of an inbox's emails, newest first (with `wait: true`, a server long-poll). */
    listEmails(query: ListEmailsQuery, options: RequestOptions = {}): Promise<EmailPage> {
        return this.#json('GET', `/v1/emails${queryString(listParams(query))}`, options);
    }

    /** Every email matching `query`, newest first, fetching page after page as the loop asks. */
    async *emails(query: EmailsQuery, options: RequestOptions = {}): AsyncGenerator<Email, void, undefined> {
        let cursor: string | undefined;
        do {
            const page = await this.listEmails({ ...query, cursor }, options);
            yield* page.emails;
            cursor = page.hasMore ? page.nextCursor : undefined;
        } while (cursor !== undefined);
    }

    /** One email by its `messageId`. */
    getEmail(messageId: string, options: RequestOptions = {}): Promise<Email> {
        return this.#json('GET', `/v1/emails/${segment(messageId)}`, options);
    }

    /** The header fields of the top-level message, in message order. */
    async getHeaders(messageId: string, options: RequestOptions = {}): Promise<Header[]> {
        const body = await this.#json<EmailHeaders>('GET', `/v1/emails/${segment(messageId)}/headers`, options);
        return body.headers;
    }

    /** The email's HTML checked against email clients (caniemail): a score and the features some client lacks. */
    checkHtml(messageId: string, options: CheckHtmlOptions = {}): Promise<HtmlCheck> {
        return this.#json('GET', `/v1/emails/${segment(messageId)}/checks/html${queryString({ clients: options.clients?.join(',') })}`, options);
    }

    /** Deletes one email with its raw message and attachments. */
    async deleteEmail(messageId: string, options: RequestOptions = {}): Promise<void> {
        await this.#json<DeletedEmail>('DELETE', `/v1/emails/${segment(messageId)}`, options);
    }

    /** Deletes every email of an inbox (with `q`, those that match it); resolves to how many were deleted. */
    async deleteInbox(inbox: string, options: DeleteInboxOptions = {}): Promise<number> {
        const body = await this.#json<DeletedInbox>('DELETE', `/v1/emails${queryString({ inbox, q: options.q })}`, options);
        return body.deleted;
    }

    /** Replaces the tags of an email (lowercased, each once, at most 20) and resolves to the email with them. */
    setTags(messageId: string, tags: string[], options: RequestOptions = {}): Promise<Email> {
        const body: TagsBody = { tags };
        return this.#json('PUT', `/v1/emails/${segment(messageId)}/tags`, options, body);
    }

    /** Marks an email read (`seen` true) or unread and resolves to the email as it now stands. */
    setSeen(messageId: string, seen: boolean, options: RequestOptions = {}): Promise<Email> {
        const body: SeenBody = { seen };
        return this.#json('PUT', `/v1/emails/${segment(messageId)}/seen`, options, body);
    }

    /** One page of the inboxes that hold mail, most recently received first. */
    listInboxes(query: ListInboxesQuery = {}, options: RequestOptions = {}): Promise<InboxPage> {
        return this.#json('GET', `/v1/inboxes${queryString({ limit: query.limit, cursor: query.cursor, prefix: query.prefix })}`, options);
    }

    /** The calling key's name and scope (which inboxes it reaches, whether it may change anything). */
    currentKey(options: RequestOptions = {}): Promise<CurrentKey> {
        return this.#json('GET', '/v1/keys/current', options);
    }

    /** The raw message (.eml) exactly as received. */
    downloadRaw(messageId: string, options: RequestOptions = {}): Promise<Uint8Array> {
        return fetchDownload(this.#fetch, `${this.baseUrl}/v1/emails/${segment(messageId)}/raw`, this.#headers, options.signal);
    }

    /** One attachment's bytes; `filename` is the attachment object's, index prefix included. */
    downloadAttachment(messageId: string, filename: string, options: RequestOptions = {}): Promise<Uint8Array> {
        return fetchDownload(this.#fetch, `${this.baseUrl}/v1/emails/${segment(messageId)}/attachments/${segment(filename)}`, this.#headers, options.signal);
    }

    /**
     * The time-limited URL of the raw message (what its download route redirects to), which
     * needs no key: to read only its start with a `Range` request, say.
     */
    rawLink(messageId: string, options: RequestOptions = {}): Promise<string> {
        return resolveDownloadLink(this.#fetch, `${this.baseUrl}/v1/emails/${segment(messageId)}/raw`, this.#headers, options.signal);
    }

    /**
     * Stores an email as if it came over SMTP (docs/api.md, "Send an email"): the server builds
     * the message from `email` and files a copy per inbox of `to` and `cc`; resolves to the copies.
     */
    async sendEmail(email: SendEmailInput, options: RequestOptions = {}): Promise<SentEmail[]> {
        return (await this.#json<SentEmails>('POST', '/v1/emails', options, email)).emails;
    }

    /** Creates an SMTP fault rule (docs/api.md, "Faults"); resolves to it, with its `id` and `remaining` uses. */
    createFault(rule: FaultRuleInput, options: RequestOptions = {}): Promise<FaultRule> {
        return this.#json('POST', '/v1/faults', options, rule);
    }

    /** Every fault rule, oldest first. */
    async listFaults(options: RequestOptions = {}): Promise<FaultRule[]> {
        return (await this.#json<FaultList>('GET', '/v1/faults', options)).faults;
    }

    /** Deletes one fault rule (an InboxCaptureApiError NOT_FOUND when there is none with that id). */
    async deleteFault(id: string, options: RequestOptions = {}): Promise<void> {
        await this.#json('DELETE', `/v1/faults/${segment(id)}`, options);
    }

    /** Deletes every fault rule; resolves to how many were deleted. */
    async deleteFaults(options: RequestOptions = {}): Promise<number> {
        return (await this.#json<DeletedFaults>('DELETE', '/v1/faults', options)).deleted;
    }

    /**
     * Sends the stored message, byte for byte, to the server's relay (docs/api.md, "Release"),
     * to `to` (default: the email's recipient); resolves to the recipients it went to.
     */
    async releaseEmail(messageId: string, to?: string[], options: RequestOptions = {}): Promise<string[]> {
        return (await this.#json<Released>('POST', `/v1/emails/${segment(messageId)}/release`, options, to === undefined ? {} : { to })).to;
    }

    /**
     * Asks each http(s) link of the email with HEAD (docs/api.md, "Link check"); resolves to
     * each link's outcome, in order. Off on the server: an InboxCaptureApiError LINK_CHECK_DISABLED.
     */
    async checkLinks(messageId: string, options: RequestOptions = {}): Promise<LinkCheck[]> {
        return (await this.#json<LinkChecks>('POST', `/v1/emails/${segment(messageId)}/checks/links`, options)).links;
    }

    /**
     * The email's SPF, DKIM, DMARC and ARC verdicts (docs/api.md, "Authentication check"):
     * worked out by the server on the first call and kept, so later calls answer the same.
     */
    checkAuth(messageId: string, options: RequestOptions = {}): Promise<AuthCheck> {
        return this.#json('GET', `/v1/emails/${segment(messageId)}/checks/auth`, options);
    }

    /**
     * The time-limited URL of one attachment (what its download route redirects to), which
     * needs no key: for an `<img>` of an inline (`cid:`) image, say. Expires after the
     * server's download TTL (15 minutes by default).
     */
    attachmentLink(messageId: string, filename: string, options: RequestOptions = {}): Promise<string> {
        return resolveDownloadLink(this.#fetch, `${this.baseUrl}/v1/emails/${segment(messageId)}/attachments/${segment(filename)}`, this.#headers, options.signal);
    }

    /** The newest matching email, waiting for it over chained server long-polls (see WaitForEmailOptions). */
    waitForEmail(options: WaitForEmailOptions): Promise<Email> {
        return waitForEmail((query, request) => this.listEmails(query, request), options, this.#longPollSeconds);
    }

    /** A fresh inbox of its own for one test, and its address at `domain`. */
    newInbox(options: { prefix?: string; domain: string }): NewInbox {
        return newInbox(options);
    }

    async #json<T>(method: string, path: string, options: RequestOptions, body?: unknown): Promise<T> {
        const init: RequestInit = body === undefined
            ? { method, headers: this.#headers, signal: options.signal }
            : { method, headers: { ...this.#headers, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: options.signal };
        const response = await this.#fetch(`${this.baseUrl}${path}`, init);
        if (!response.ok) {
            throw await apiErrorFrom(response);
        }

        return await response.json() as T;
    }
}
