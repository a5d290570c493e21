import { composeEmail } from '../compose/compose-email';
import { ingestSent } from './routes/send';
import { encodeCursor } from '../../lib/cursor/email-cursor';
import { isInboxCaptureError } from '../../lib/errors';
import { checkHtmlCompatibility } from '../../lib/html-check/html-checker';
import type { AuthDns } from '../../lib/auth-check/auth-check-types';
import { linkTargets } from '../../lib/link-check/link-targets';
import { keptAuthCheck } from '../../lib/service/auth-check-kept';
import type { LinkChecker } from '../link-check/link-checker';
import { readBounded } from '../../lib/util/read-bounded';
import { WaitCanceller } from '../../lib/long-poll/wait-canceller';
import type { InboxCapture } from '../../lib/service/inbox-capture';
import { inboxInScope, listingPrefix, newInboxPrefix } from '../../lib/identity/key-scope';
import type { EmailRecord, KeyScope, ListQuery } from '../../lib/types';
import { newInbox } from '../client/new-inbox';
import { MAX_ATTACHMENT_BYTES } from '../mcp/attachment-content';
import { ToolError, type MailAccess, type MailEmail, type MailFilter } from '../mcp/mail-access';
import { toEmailView } from './email-view';
import { detailLine, quoted } from '../error-detail/detail-line';
import { validationWords } from '../error-detail/validation-words';
import { listQuerySchema, queryFailure, toListQuery, type ListQueryValues } from './list-query-schema';

/** What /mcp's tools reach the service with: the service itself, and the calling key's scope. */
export interface ServiceAccessOptions {
    capture: InboxCapture;
    scope: KeyScope;
    /** The domain of new_inbox's addresses (the plugin's `mailDomain`). */
    mailDomain: string;
    /** Byte budget of one page of records (the plugin's `maxPageBytes`). */
    maxPageBytes: number;
    /** The plugin's waits in flight: a stopping server ends them at once. */
    longPolls: Set<WaitCanceller>;
    /** The link check's checker (absent: the plugin's `linkCheck` is unset, the check is off). */
    linkChecker?: LinkChecker;
    /** The authentication check's DNS (the plugin's `authCheck`). */
    authDns: () => AuthDns;
}

// The API's view, URLs and all: the tools read what they need of it.
const toMail = (record: EmailRecord): MailEmail => toEmailView(record, '');

// The API's words for the same 404s: the tools and the routes read alike.
const noEmail = (messageId: string) => new ToolError('NOT_FOUND', `messageId: no email ${quoted(messageId)}`);
const forbidden = (why: string) => new ToolError('FORBIDDEN', why);

/**
 * The tools' MailAccess over the service in this process, under the key's scope, with the
 * API's rules: a filter is read by GET /v1/emails' own query schema (so `query` is that
 * route's `q`, refused as it refuses it); an inbox outside the key's prefix is FORBIDDEN,
 * an email of one NOT_FOUND; a read-only key may not delete. wait_for_email is one wait
 * on the service's long-poller for the whole timeout.
 */
export function createServiceAccess(options: ServiceAccessOptions): MailAccess {
    const { capture, scope, mailDomain, maxPageBytes, longPolls } = options;

    // 400 before 403, as on the API.
    const listQuery = (filter: MailFilter, page: { limit: number; cursor?: string }): ListQuery => {
        const raw: Record<string, unknown> = { inbox: filter.inbox, limit: page.limit };
        if (filter.query) {
            raw.q = filter.query;
        }

        if (filter.receivedAfter !== undefined) {
            raw.receivedAfter = String(filter.receivedAfter);
        }

        if (page.cursor !== undefined) {
            raw.cursor = page.cursor;
        }

        const { error, value } = listQuerySchema.validate(raw, { abortEarly: false });
        if (error) {
            // The route's words, with the tool's name of `q`.
            const failure = queryFailure(error.details);
            throw new ToolError(failure.code, detailLine(validationWords(failure.details, 'arguments', listQuerySchema, { q: 'query' })));
        }

        if (!inboxInScope(scope, filter.inbox)) {
            throw outsidePrefix(filter.inbox);
        }

        return { ...toListQuery(value as ListQueryValues), maxBytes: maxPageBytes };
    };

    const outsidePrefix = (inbox: string) => forbidden(`key scope: inbox ${quoted(inbox)} is outside the prefix ${quoted(scope.inboxPrefix)}`);

    const writable = () => {
        if (scope.readOnly) {
            throw forbidden('key scope: this key is read-only; this tool deletes');
        }
    };

    const access: MailAccess = {
        async listInboxes({ prefix, limit }) {
            const within = listingPrefix(scope, prefix);
            if (within === null) {
                return { inboxes: [], hasMore: false };
            }

            const page = await capture.listInboxes({ limit, prefix: within });
            return { inboxes: page.inboxes, hasMore: page.hasMore };
        },

        async listEmails(query) {
            const page = await capture.listEmails(listQuery(query, query));
            const last = page.records[page.records.length - 1];
            return {
                emails: page.records.map(toMail),
                nextCursor: page.hasMore && last ? encodeCursor({ receivedAt: last.receivedAt, messageId: last.messageId }) : undefined
            };
        },

        async waitForEmail(query, signal) {
            const listed = listQuery(query, { limit: 1 });
            const canceller = new WaitCanceller();
            signal.addEventListener('abort', canceller.abort);
            if (signal.aborted) {
                canceller.abort();
            }

            longPolls.add(canceller);
            try {
                const page = await capture.waitForEmails(listed, { timeoutMs: query.timeoutMs, canceller });
                return page.records[0] ? toMail(page.records[0]) : null;
            }
            finally {
                longPolls.delete(canceller);
                signal.removeEventListener('abort', canceller.abort);
            }
        },

        async getEmail(messageId) {
            const record = await capture.getEmail(messageId, scope);
            if (!record) {
                throw noEmail(messageId);
            }

            return toMail(record);
        },

        async getHeaders(messageId) {
            const headers = await capture.getHeaders(messageId, scope);
            if (!headers) {
                throw noEmail(messageId);
            }

            return headers;
        },

        async readAttachment(messageId, filename) {
            const attachment = (await capture.getEmail(messageId, scope))?.attachments.find((a) => a.filename === filename);
            const stream = attachment ? await capture.blobStore.get(attachment.blobKey) : null;
            if (!stream) {
                throw new ToolError('NOT_FOUND', `filename: no attachment ${quoted(filename)} of an email ${quoted(messageId)}`);
            }

            return readBounded(stream, MAX_ATTACHMENT_BYTES, 'attachment');
        },

        async deleteEmail(messageId) {
            writable();
            if (!(await capture.deleteEmail(messageId, scope))) {
                throw noEmail(messageId);
            }
        },

        async deleteInbox(inbox) {
            writable();
            if (!inboxInScope(scope, inbox)) {
                throw outsidePrefix(inbox);
            }

            return capture.deleteInbox(inbox);
        },

        async sendEmail(body) {
            if (scope.readOnly) {
                throw forbidden('key scope: this key is read-only; this tool stores mail');
            }

            try {
                return await ingestSent(capture, await composeEmail(body), { scope });
            }
            catch (err) {
                // The send route's answers, as tool errors.
                if (isInboxCaptureError(err, 'TOO_LARGE')) {
                    throw new ToolError('TOO_LARGE', `the message is larger than ${capture.maxMessageBytes} bytes`);
                }

                if (isInboxCaptureError(err, 'OUT_OF_SCOPE')) {
                    throw forbidden(`key scope: a recipient's inbox is outside the prefix ${quoted(scope.inboxPrefix)}`);
                }

                if (isInboxCaptureError(err, 'NO_RECIPIENT') || isInboxCaptureError(err, 'TOO_MANY_RECIPIENTS')) {
                    throw new ToolError('VALIDATION_ERROR', isInboxCaptureError(err, 'NO_RECIPIENT') ? 'to: no recipient maps to an inbox' : 'to: the recipients map to more than 100 inboxes');
                }

                throw err;
            }
        },

        async checkHtml(messageId) {
            const record = await capture.getEmail(messageId, scope);
            if (!record) {
                throw noEmail(messageId);
            }

            return checkHtmlCompatibility(record.htmlBody);
        },

        async checkLinks(messageId) {
            const record = await capture.getEmail(messageId, scope);
            if (!record) {
                throw noEmail(messageId);
            }

            return options.linkChecker ? options.linkChecker.check(linkTargets(record.links)) : null;
        },

        async checkAuth(messageId) {
            const result = await keptAuthCheck(capture, messageId, scope, options.authDns);
            if (!result) {
                throw noEmail(messageId);
            }

            return result;
        },

        async newInbox(prefix) {
            try {
                return newInbox({ prefix: newInboxPrefix(scope, prefix), domain: mailDomain });
            }
            catch (err) {
                throw new ToolError('VALIDATION_ERROR', (err as Error).message);
            }
        }
    };

    return unavailableAsToolErrors(access);
}

/** A store that is down or a spent memory budget: the agent may retry, as an API client would on 503. */
function unavailableAsToolErrors(access: MailAccess): MailAccess {
    const wrapped = {} as Record<string, unknown>;
    for (const [name, method] of Object.entries(access) as Array<[string, (...args: unknown[]) => Promise<unknown>]>) {
        wrapped[name] = async (...args: unknown[]) => {
            try {
                return await method(...args);
            }
            catch (err) {
                if (isInboxCaptureError(err) && (err.code === 'RECORD_STORE_UNAVAILABLE' || err.code === 'BUSY')) {
                    throw new ToolError('SERVICE_UNAVAILABLE', 'the service is busy or its store unavailable; try again shortly');
                }

                throw err;
            }
        };
    }

    return wrapped as unknown as MailAccess;
}
