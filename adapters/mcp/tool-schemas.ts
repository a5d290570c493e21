import { sendEmailBodySchema } from '../compose/compose-email';
import Joi from 'joi';
import { MAX_MESSAGE_ID_BYTES } from '../../lib/identity/ids';
import { INBOX_PATTERN, MAX_INBOX_LENGTH } from '../../lib/identity/recipients';
import { RANDOM_CHARS } from '../client/new-inbox';

// Each tool's input and output, declared once: joi checks what comes in, and the JSON
// Schemas clients see are derived from these (json-schema.ts). docs/api.md, "MCP tools".

/** Longest `query`, characters: the search language's own limit (docs/api.md, "Search"). */
export const MAX_QUERY_LENGTH = 1024;
/**
 * wait_for_email's `timeoutSeconds`: 1 to 300, default 45. The default ends a wait before
 * the 60 s after which MCP clients (the official SDK's among them) give up on a request,
 * so a call without it answers `found: false` rather than a client-side timeout.
 */
export const MAX_WAIT_SECONDS = 300;
export const DEFAULT_WAIT_SECONDS = 45;
/**
 * Milliseconds between progress notifications while a tool runs, when the client asked
 * for them (a `progressToken`): at most 10 s, so a client that resets its request timeout
 * on progress keeps waiting through a wait_for_email of up to 300 s.
 */
export const PROGRESS_INTERVAL_MS = 10_000;
/** search_emails' `limit`: 1 to 100, default 20. */
export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 20;
/** list_inboxes' `limit`: 1 to 100, default 50, as GET /v1/inboxes. */
export const DEFAULT_INBOX_LIMIT = 50;
/** Longest attachment `filename`, characters: `<index>-` and a name of at most 200 bytes fit. */
export const MAX_FILENAME_LENGTH = 256;
/** Longest `receivedAfter` string: an ISO 8601 date-time with nanoseconds and offset is 35. */
const MAX_TIME_LENGTH = 40;

const inbox = Joi.string().max(MAX_INBOX_LENGTH).pattern(INBOX_PATTERN)
    .description('Inbox name: the local part of the address, lowercase, characters a-z 0-9 . _ -');
const messageId = Joi.string().max(MAX_MESSAGE_ID_BYTES).required()
    .description('The email\'s messageId, as search_emails or wait_for_email give it');
const query = Joi.string().allow('').max(MAX_QUERY_LENGTH)
    .description('Search terms, all of which must match (case-insensitive substrings): words, "phrases", -negation, and field:value with from, to, subject, body, filename, tag, has:attachment|link|code, before:, after:, larger:, smaller:');

/** The checks check_email runs. */
export const CHECKS = ['html', 'links', 'auth'] as const;

/** Tool inputs, by tool name. */
export const INPUTS = {
    list_inboxes: Joi.object({
        prefix: Joi.string().allow('').max(MAX_INBOX_LENGTH).pattern(INBOX_PATTERN)
            .description('Only inboxes whose name starts with this'),
        limit: Joi.number().integer().min(1).max(100).default(DEFAULT_INBOX_LIMIT)
            .description('At most this many inboxes, most recently received first')
    }),
    search_emails: Joi.object({
        inbox: inbox.required(),
        query,
        limit: Joi.number().integer().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT)
            .description('At most this many emails, newest first')
    }),
    wait_for_email: Joi.object({
        inbox: inbox.required(),
        query,
        receivedAfter: Joi.alternatives(Joi.number().integer().min(0), Joi.string().max(MAX_TIME_LENGTH))
            .description('Only emails received at or after this: Unix milliseconds, or an ISO 8601 date or date-time'),
        timeoutSeconds: Joi.number().integer().min(1).max(MAX_WAIT_SECONDS).default(DEFAULT_WAIT_SECONDS)
            .description(`How long the server waits for a matching email, seconds (default ${DEFAULT_WAIT_SECONDS}: over 60 needs a progressToken and a client that resets its timeout on progress)`)
    }),
    get_email: Joi.object({ messageId }),
    get_attachment: Joi.object({
        messageId,
        filename: Joi.string().max(MAX_FILENAME_LENGTH).required()
            .description('The attachment\'s filename as get_email lists it, index prefix included (0-report.pdf)')
    }),
    delete_email: Joi.object({ messageId }),
    delete_inbox: Joi.object({ inbox: inbox.required() }),
    new_inbox: Joi.object({
        prefix: Joi.string().allow('').max(MAX_INBOX_LENGTH - RANDOM_CHARS).pattern(INBOX_PATTERN)
            .description('Start of the inbox name; random characters follow')
    }),
    send_email: sendEmailBodySchema,
    check_email: Joi.object({
        messageId,
        checks: Joi.array().items(Joi.string().valid(...CHECKS)).min(1).default([...CHECKS])
            .description('Which checks to run (default all): html, the HTML against email clients (caniemail); links, each http(s) link asked with HEAD; auth, SPF, DKIM, DMARC and ARC')
    })
};

const link = Joi.object({ href: Joi.string().required(), text: Joi.string().allow('').required() });
const links = Joi.array().items(link).required();
const codes = Joi.array().items(Joi.string()).required().description('Candidate one-time codes, in order of appearance');
const tags = Joi.array().items(Joi.string()).required();
const stringField = Joi.string().allow('').required();
const receivedAt = Joi.number().integer().required().description('Unix milliseconds');

/** The email of get_email and wait_for_email. */
const emailDetail = Joi.object({
    messageId: Joi.string().required(),
    inbox: Joi.string().required(),
    sender: stringField,
    recipient: stringField,
    subject: stringField,
    receivedAt,
    text: stringField.description('The text body, else the HTML body as text'),
    textTruncated: Joi.boolean().required().description('True when `text` was cut at 100,000 characters'),
    links,
    codes,
    tags,
    attachments: Joi.array().items(Joi.object({
        filename: Joi.string().required(),
        contentType: Joi.string().required(),
        size: Joi.number().integer().min(0).required()
    })).required(),
    headers: Joi.array().items(Joi.object({ name: Joi.string().required(), value: stringField })).required(),
    headersTruncated: Joi.boolean().required().description('True when `headers` were cut at 100,000 characters (names and values); GET /v1/emails/{messageId}/headers has them all')
});

/** An email of search_emails. */
const emailSummary = Joi.object({
    messageId: Joi.string().required(),
    sender: stringField,
    recipient: stringField,
    subject: stringField,
    receivedAt,
    codes,
    links,
    tags,
    attachmentCount: Joi.number().integer().min(0).required()
});

/** Tool outputs (`structuredContent`), by tool name. */
export const OUTPUTS = {
    send_email: Joi.object({
        emails: Joi.array().items(Joi.object({ messageId: Joi.string().required(), inbox: Joi.string().required() })).required()
    }),
    list_inboxes: Joi.object({
        inboxes: Joi.array().items(Joi.object({
            name: Joi.string().required(),
            count: Joi.number().integer().min(0).required(),
            lastReceivedAt: receivedAt
        })).required(),
        hasMore: Joi.boolean().required()
    }),
    search_emails: Joi.object({
        emails: Joi.array().items(emailSummary).required(),
        hasMore: Joi.boolean().required()
    }),
    wait_for_email: Joi.object({
        found: Joi.boolean().required(),
        email: emailDetail
    }),
    get_email: Joi.object({ email: emailDetail.required() }),
    get_attachment: Joi.object({
        messageId: Joi.string().required(),
        filename: Joi.string().required(),
        contentType: Joi.string().required(),
        size: Joi.number().integer().min(0).required(),
        encoding: Joi.string().valid('text', 'base64').required()
            .description('`text`: the content is a text block; `base64`: an embedded resource')
    }),
    delete_email: Joi.object({ deleted: Joi.boolean().valid(true).required(), messageId: Joi.string().required() }),
    delete_inbox: Joi.object({ deleted: Joi.number().integer().min(0).required() }),
    new_inbox: Joi.object({ inbox: Joi.string().required(), address: Joi.string().required() }),
    check_email: Joi.object({
        messageId: Joi.string().required(),
        html: Joi.object({
            clients: Joi.array().items(Joi.string()).required(),
            score: Joi.number().integer().min(0).max(100).required().description('Share of (feature, client) pairs supported, partial counting half'),
            findings: Joi.array().items(Joi.object({
                title: Joi.string().required(),
                slug: Joi.string(),
                url: Joi.string(),
                category: Joi.string().required(),
                unsupported: Joi.array().items(Joi.string()).required(),
                partial: Joi.array().items(Joi.string()).required(),
                count: Joi.number().integer().min(1).required()
            })).required(),
            data: Joi.object({ source: Joi.string().required(), updated: Joi.string().required() }).required(),
            html: Joi.boolean().valid(false)
        }).description('The HTML check, when asked for'),
        links: Joi.array().items(Joi.object({
            url: Joi.string().required(),
            ok: Joi.boolean().required(),
            status: Joi.number().integer(),
            error: Joi.string(),
            redirects: Joi.array().items(Joi.string()).required()
        })).allow(null).description('The link check, when asked for; null: the service has it off (INBOX_CAPTURE_LINK_CHECK_ALLOW unset)'),
        auth: Joi.object({
            spf: Joi.object({ result: Joi.string().required(), domain: Joi.string().allow(null).required() }).required(),
            dkim: Joi.array().items(Joi.object({ result: Joi.string().required(), domain: Joi.string().allow(null).required(), selector: Joi.string().allow(null).required() })).required(),
            dmarc: Joi.object({ result: Joi.string().required(), domain: Joi.string().allow(null).required(), policy: Joi.string().allow(null).required() }).required(),
            arc: Joi.object({ result: Joi.string().required() }).required(),
            checkedAt: Joi.number().integer().required()
        }).description('The authentication check, when asked for')
    })
};

/** A tool's name. */
export type ToolName = keyof typeof INPUTS;
