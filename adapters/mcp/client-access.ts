import { newInboxPrefix } from '../../lib/identity/key-scope';
import type { InboxCaptureClient } from '../client/client';
import { InboxCaptureApiError, WaitTimeoutError } from '../client/errors';
import { ToolError, type MailAccess } from './mail-access';

/** What the stdio server reaches the service with. */
export interface ClientAccessOptions {
    /** A client with the base URL and key the command was given. */
    client: InboxCaptureClient;
    /** The domain of new_inbox's addresses. */
    mailDomain: string;
}

/**
 * The API's answer as a tool failure: its code and detail as they are (the API's scope
 * rules, 403 and 404, reach the agent unchanged), the API's `q` named as the tool's
 * `query`; a service that cannot be reached is SERVICE_UNAVAILABLE.
 */
function toToolError(err: unknown, baseUrl: string): unknown {
    if (err instanceof InboxCaptureApiError) {
        return new ToolError(err.code, err.detail?.replace(/^q: /, 'query: ') ?? `the inbox-capture API answered ${err.status}`);
    }

    // fetch() fails with a TypeError and the socket's error as its cause.
    if (err instanceof TypeError && err.message === 'fetch failed') {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        return new ToolError('SERVICE_UNAVAILABLE', `cannot reach ${baseUrl}: ${cause?.code ?? cause?.message ?? err.message}`);
    }

    return err;
}

/**
 * The tools' MailAccess over the HTTP API (the stdio server): every call is a request with
 * the command's key, so the service applies the key's scope exactly as for any client.
 * wait_for_email chains the client's long-polls (28 s each) until its timeout.
 */
export function createClientAccess(options: ClientAccessOptions): MailAccess {
    const { client, mailDomain } = options;
    const call = async <T>(fn: () => Promise<T>): Promise<T> => {
        try {
            return await fn();
        }
        catch (err) {
            throw toToolError(err, client.baseUrl);
        }
    };

    return {
        listInboxes: ({ prefix, limit }, signal) => call(async () => {
            const page = await client.listInboxes({ prefix, limit }, { signal });
            return { inboxes: page.inboxes, hasMore: page.hasMore };
        }),

        listEmails: ({ inbox, query, receivedAfter, limit, cursor }, signal) => call(async () => {
            const page = await client.listEmails({ inbox, q: query || undefined, receivedAfter, limit, cursor }, { signal });
            return { emails: page.emails, nextCursor: page.nextCursor };
        }),

        waitForEmail: ({ inbox, query, receivedAfter, timeoutMs }, signal) => call(async () => {
            try {
                return await client.waitForEmail({ inbox, q: query || undefined, receivedAfter, timeoutMs, signal });
            }
            catch (err) {
                if (err instanceof WaitTimeoutError) {
                    return null;
                }

                throw err;
            }
        }),

        getEmail: (messageId, signal) => call(() => client.getEmail(messageId, { signal })),
        getHeaders: (messageId, signal) => call(() => client.getHeaders(messageId, { signal })),
        readAttachment: (messageId, filename, signal) => call(() => client.downloadAttachment(messageId, filename, { signal })),
        deleteEmail: (messageId, signal) => call(() => client.deleteEmail(messageId, { signal })),
        deleteInbox: (inbox, signal) => call(() => client.deleteInbox(inbox, { signal })),
        sendEmail: (body, signal) => call(() => client.sendEmail(body, { signal })),
        checkHtml: (messageId, signal) => call(() => client.checkHtml(messageId, { signal })),
        checkAuth: (messageId, signal) => call(() => client.checkAuth(messageId, { signal })),

        async checkLinks(messageId, signal) {
            try {
                return await client.checkLinks(messageId, { signal });
            }
            catch (err) {
                // Off is an answer the tool reports, not a failure of the whole check.
                if (err instanceof InboxCaptureApiError && err.code === 'LINK_CHECK_DISABLED') {
                    return null;
                }

                return call(() => Promise.reject(err));
            }
        },

        async newInbox(prefix, signal) {
            // The key's own prefix comes first, so the inbox is one the key can read.
            const key = await call(() => client.currentKey({ signal }));
            try {
                return client.newInbox({ prefix: newInboxPrefix(key, prefix), domain: mailDomain });
            }
            catch (err) {
                throw new ToolError('VALIDATION_ERROR', (err as Error).message);
            }
        }
    };
}
