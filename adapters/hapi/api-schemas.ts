import Joi from 'joi';
import { MAX_TAG_CHARS, MAX_TAGS, normaliseTags, TAG_PATTERN } from '../../lib/identity/tags';
import { ERROR_DETAIL_HEADER, MAX_DETAIL_CHARS } from '../error-detail/detail-line';
import type { ApiErrorCode } from './error-mapping';

// Joi descriptions of what the routes answer: the one declaration of the API's shapes.
// They make the OpenAPI document; the views of api-types.ts and the client's types are
// checked against that document, field by field (docs/design.md, "Where the email's
// shape lives"). Responses are built from those typed views, so hapi does not
// re-validate them.

/** The API's attachment object (docs/design.md). */
export const attachmentSchema = Joi.object({
    filename: Joi.string().required().description('`<index>-<name>`, zero-based index in message order.').example('0-report.pdf'),
    contentType: Joi.string().required().example('application/pdf'),
    size: Joi.number().integer().min(0).required().description('Decoded size in bytes.'),
    url: Joi.string().required().description('Relative download URL (a 302 to a pre-signed link).')
        .example('/v1/emails/abc%40example.com/attachments/0-report.pdf'),
    contentId: Joi.string().allow('').required().description('The part\'s Content-ID without angle brackets, what `cid:` URLs in the HTML name; `""` when it has none.')
        .example('logo@example.com')
}).label('Attachment');

/** A link of an email (docs/api.md, "Links and codes"). */
export const linkSchema = Joi.object({
    href: Joi.string().required().description('The href as written (entities decoded, trimmed): http(s) or mailto.')
        .example('https://example.com/verify?token=abc'),
    text: Joi.string().allow('').required().description('The anchor\'s visible text, whitespace collapsed; a bare URL of the text body is its own text.')
        .example('Confirm your address')
}).label('Link');

/** The API's email object: every field always present (docs/design.md). */
export const emailSchema = Joi.object({
    messageId: Joi.string().required().description('Message-ID without angle brackets (or derived from it and the inbox).').example('abc@example.com'),
    inbox: Joi.string().required().example('signup-test'),
    sender: Joi.string().allow('').required().example('noreply@example.com'),
    senderName: Joi.string().allow('').required().description('The display name of the first `From` mailbox, decoded; `""` when the message gives none (or was stored before this field).')
        .example('Example Shop'),
    recipient: Joi.string().required().example('signup-test@example.com'),
    subject: Joi.string().allow('').required(),
    body: Joi.string().allow('').required().description('Plain-text body (derived from the HTML when there is none).'),
    htmlBody: Joi.string().allow('').required(),
    attachments: Joi.array().items(attachmentSchema).required(),
    receivedAt: Joi.number().integer().required().description('Unix milliseconds.'),
    rawUrl: Joi.string().required().description('Relative URL of the raw .eml (a 302 to a pre-signed link).')
        .example('/v1/emails/abc%40example.com/raw'),
    links: Joi.array().items(linkSchema).max(100).required()
        .description('Links of the HTML body, then bare URLs of the text body; deduplicated by href, at most 100 (docs/api.md).'),
    codes: Joi.array().items(Joi.string().pattern(/^[0-9]{4,8}$/)).max(10).required()
        .description('Candidate one-time codes (4 to 8 digits standing alone) of the subject, then the body; at most 10 (docs/api.md).')
        .example(['482913']),
    tags: Joi.array().items(Joi.string().pattern(TAG_PATTERN).max(MAX_TAG_CHARS)).max(MAX_TAGS).required()
        .description('At most 20 lowercase tags (a-z 0-9 . _ -, at most 32 characters): from the `X-Tags` header fields at ingest, replaced by PUT .../tags (docs/api.md).')
        .example(['welcome']),
    size: Joi.number().integer().min(0).required().description('The raw message\'s size in bytes (what `larger:` and `smaller:` compare).').example(2048),
    seen: Joi.boolean().required().description('Whether the email was opened: false when it arrives, set by PUT .../seen (the web interface marks what it opens; docs/api.md, "Read and unread").')
}).label('Email');

/** PUT /v1/emails/{messageId}/seen body. */
export const seenBodySchema = Joi.object({
    seen: Joi.boolean().strict().required().description('true marks the email read, false unread.')
}).label('SeenBody');

/** PUT /v1/emails/{messageId}/tags body. */
export const tagsBodySchema = Joi.object({
    tags: Joi.array().items(Joi.string().min(1).max(MAX_TAG_CHARS).pattern(/^[a-zA-Z0-9._-]+$/)).required()
        .custom((value: string[], helpers) => normaliseTags(value) ?? helpers.error('any.invalid'))
        .description('The new tags: each a-z 0-9 . _ - (uppercase is lowercased), at most 32 characters, at most 20 distinct; `[]` removes them all.')
        .example(['welcome', 'beta'])
}).label('TagsBody');

/** The list page envelope (docs/design.md). */
export const emailPageSchema = Joi.object({
    emails: Joi.array().items(emailSchema).required().description('Newest first.'),
    hasMore: Joi.boolean().required(),
    nextCursor: Joi.string().description('Present exactly when `hasMore` is true.').example('1714564800000#abc@example.com')
}).label('EmailPage');

/** An inbox of GET /v1/inboxes (docs/api.md, "`GET /v1/inboxes`"). */
export const inboxViewSchema = Joi.object({
    name: Joi.string().required().example('signup-test'),
    count: Joi.number().integer().min(1).required().description('How many emails it holds.'),
    lastReceivedAt: Joi.number().integer().required().description('Unix milliseconds of its newest email.')
}).label('Inbox');

/** The inbox list page envelope (docs/api.md, "`GET /v1/inboxes`"). */
export const inboxPageSchema = Joi.object({
    inboxes: Joi.array().items(inboxViewSchema).required().description('Most recently received first, then by name.'),
    hasMore: Joi.boolean().required(),
    nextCursor: Joi.string().description('Present exactly when `hasMore` is true.').example('1714564800000#signup-test')
}).label('InboxPage');

/** DELETE /v1/emails/{messageId} answer. */
export const deletedEmailSchema = Joi.object({
    deleted: Joi.boolean().valid(true).required(),
    messageId: Joi.string().required()
}).label('DeletedEmail');

/** DELETE /v1/emails answer. */
export const deletedInboxSchema = Joi.object({
    deleted: Joi.number().integer().min(0).required().description('How many emails were deleted.')
}).label('DeletedInbox');

/** GET /v1/emails/{messageId}/headers answer (docs/api.md, "Header fields"). */
export const headersSchema = Joi.object({
    headers: Joi.array().items(Joi.object({
        name: Joi.string().required().description('The field name as written in the message.').example('Subject'),
        value: Joi.string().allow('').required().description('Unfolded, RFC 2047 encoded-words decoded, trimmed; `""` for an empty field.').example('Welcome')
    }).label('HeaderField')).label('HeaderFields').required().description('Every header field of the top-level message, in message order, duplicates kept; MIME part headers are not listed.')
}).label('Headers');

/** The HTML compatibility check of one email (docs/api.md, "Checks"). */
export const htmlCheckSchema = Joi.object({
    clients: Joi.array().items(Joi.string()).required().description('The caniemail client ids checked.').example(['outlook.windows', 'gmail.desktop-webmail']),
    score: Joi.number().integer().min(0).max(100).required().description('The share of (feature found, client) pairs supported, a partial one counting half, in percent; 100 when nothing was found.'),
    findings: Joi.array().items(Joi.object({
        title: Joi.string().required().description('caniemail\'s title of the feature.').example('display:flex'),
        slug: Joi.string().description('caniemail\'s id of the feature.').example('css-display-flex'),
        url: Joi.string().description('The feature\'s page at caniemail.').example('https://www.caniemail.com/features/css-display-flex/'),
        category: Joi.string().required().description('`html`, `css`, `image` or `others`.').example('css'),
        unsupported: Joi.array().items(Joi.string()).required().description('The clients that lack the feature.'),
        partial: Joi.array().items(Joi.string()).required().description('The clients that half-support it.'),
        count: Joi.number().integer().min(1).required().description('How often the feature occurs in the HTML.')
    }).label('HtmlFinding')).required().description('Every feature some checked client lacks or half-supports, the most unsupported first.'),
    data: Joi.object({
        source: Joi.string().valid('caniemail').required(),
        updated: Joi.string().isoDate().required().description('When the data set was last updated.')
    }).label('HtmlCheckData').required(),
    html: Joi.boolean().valid(false).description('`false` when the email has no HTML body (absent otherwise).')
}).label('HtmlCheck');

/** GET /v1/keys/current answer: the calling key's name and scope. */
export const currentKeySchema = Joi.object({
    name: Joi.string().required().example('agent'),
    inboxPrefix: Joi.string().allow(null).required()
        .description('The key reaches only inboxes whose name starts with this; `null`: every inbox.').example('agent-'),
    readOnly: Joi.boolean().required().description('`true`: every delete or other change is refused with 403.')
}).label('CurrentKey');

/** Which commands a fault rule answers (docs/api.md, "Faults"). */
export const faultMatchSchema = Joi.object({
    inbox: Joi.string().min(1).max(512).description('The inbox a recipient maps to, exactly.').example('signup-test'),
    recipient: Joi.string().min(1).max(512).description('A case-insensitive substring of a recipient address.'),
    sender: Joi.string().min(1).max(512).description('A case-insensitive substring of the envelope sender.')
}).label('FaultMatch');

/** A fault rule's reply. */
export const faultReplySchema = Joi.object({
    code: Joi.number().integer().min(400).max(599).required().example(451),
    message: Joi.string().min(1).max(512).description('Default: "Fault injected by inbox-capture".').example('Try again later')
}).label('FaultReply');

const faultStage = Joi.string().valid('connect', 'mail', 'rcpt', 'data').required()
    .description('`connect` replaces the greeting; `mail` answers MAIL FROM; `rcpt` one RCPT TO; `data` the end of DATA (nothing of the message is stored).');

/** A stored fault rule (docs/api.md, "Faults"). */
export const faultRuleSchema = Joi.object({
    id: Joi.string().required().example('7f9c0a52-8a6e-4d0e-9d55-5e1a0c5b2f11'),
    stage: faultStage,
    match: faultMatchSchema.required(),
    reply: faultReplySchema,
    delayMs: Joi.number().integer().min(0).max(60000),
    disconnect: Joi.boolean().valid(true),
    times: Joi.number().integer().min(1).description('As created: how many commands the rule was for.'),
    probability: Joi.number().min(0).max(1).required(),
    remaining: Joi.number().integer().min(1).allow(null).required().description('Commands that still get the fault; `null`: until the rule is deleted.'),
    createdAt: Joi.number().integer().required().description('Unix milliseconds.')
}).label('FaultRule');

/** GET /v1/faults answer. */
export const faultListSchema = Joi.object({
    faults: Joi.array().items(faultRuleSchema).required().description('Oldest first.')
}).label('FaultList');

/** DELETE /v1/faults/{id} answer. */
export const deletedFaultSchema = Joi.object({
    deleted: Joi.boolean().valid(true).required()
}).label('DeletedFault');

/** DELETE /v1/faults answer. */
export const deletedFaultsSchema = Joi.object({
    deleted: Joi.number().integer().min(0).required().description('How many rules were deleted.')
}).label('DeletedFaults');

/** POST /v1/emails/{messageId}/release answer (docs/api.md, "Release"). */
export const releasedSchema = Joi.object({
    released: Joi.boolean().valid(true).required(),
    to: Joi.array().items(Joi.string()).required().description('The envelope recipients the relay accepted the message for.')
}).label('Released');

/** One link's outcome in POST /v1/emails/{messageId}/checks/links (docs/api.md, "Link check"). */
export const linkCheckSchema = Joi.object({
    url: Joi.string().required().description('The link\'s href, as in the email\'s `links`.').example('https://example.com/verify?token=abc'),
    ok: Joi.boolean().required().description('The last answer\'s status is below 400.'),
    status: Joi.number().integer().description('The last answer\'s status (absent when no answer came).').example(200),
    error: Joi.string().valid('TIMEOUT', 'REFUSED', 'DNS', 'TLS', 'NOT_ALLOWED', 'TOO_MANY_REDIRECTS')
        .description('Why no usable answer came: no answer in time, no connection, no address, a bad certificate, a hop the allow-list refuses, a redirect past the fifth.'),
    redirects: Joi.array().items(Joi.string()).max(5).required().description('The redirects followed, in order (absolute URLs).')
}).label('LinkCheck');

/** POST /v1/emails/{messageId}/checks/links answer. */
export const linkChecksSchema = Joi.object({
    links: Joi.array().items(linkCheckSchema).max(100).required().description('Every http(s) link of the email, in the order of its `links`.')
}).label('LinkChecks');

const authResult = Joi.string().valid('pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror').required()
    .description('An RFC 8601 result word; `temperror` when DNS gave no answer within the check\'s 5 s.').example('pass');

/** GET /v1/emails/{messageId}/checks/auth answer (docs/api.md, "Authentication check"). */
export const authCheckSchema = Joi.object({
    spf: Joi.object({
        result: authResult,
        domain: Joi.string().allow(null).required().description('The envelope sender\'s domain (the HELO name\'s for the null sender); `null` when neither is known.').example('news.example')
    }).label('AuthSpf').required().description('SPF for the SMTP client\'s address kept at ingest: `none` without one.'),
    dkim: Joi.array().items(Joi.object({
        result: authResult,
        domain: Joi.string().allow(null).required().description('The signature\'s `d=`; `null` for an unsigned email.').example('news.example'),
        selector: Joi.string().allow(null).required().description('The signature\'s `s=`; `null` for an unsigned email.').example('sel')
    }).label('AuthDkim')).min(1).required().description('One verdict per DKIM signature, in header order; one `none` with null domain and selector for an unsigned email.'),
    dmarc: Joi.object({
        result: authResult,
        domain: Joi.string().allow(null).required().description('The organizational domain of `From`; `null` without exactly one `From` address.').example('news.example'),
        policy: Joi.string().allow(null).required().description('The record\'s policy for this domain (`none`, `quarantine`, `reject`); `null` without a record.').example('reject')
    }).label('AuthDmarc').required(),
    arc: Joi.object({
        result: authResult
    }).label('AuthArc').required().description('The ARC chain: `none` without ARC headers.'),
    checkedAt: Joi.number().integer().required().description('When the check ran, Unix milliseconds: later requests answer the kept verdicts, this time unchanged.')
}).label('AuthCheck');

/** GET /health answer. */
export const healthSchema = Joi.object({
    status: Joi.string().valid('ok').required(),
    timestamp: Joi.number().integer().required().description('Unix milliseconds.')
}).label('Health');

/** GET /version answer. */
export const versionSchema = Joi.object({
    version: Joi.string().required().example('0.1.0'),
    apiVersions: Joi.array().items(Joi.string()).required().example(['v1'])
}).label('Version');

const DESCRIPTIONS: Record<number, string> = {
    400: 'Invalid request parameters',
    401: 'Missing, malformed, unknown or revoked API key',
    403: 'Forbidden: an inbox outside the key\'s prefix, a change with a read-only key, or a bad or expired link signature',
    404: 'Not found',
    409: 'Conflict with the configuration or with what is kept',
    413: 'The message is larger than the service takes',
    415: 'A body of another media type than the route takes',
    500: 'Unexpected failure; details only in the server log',
    502: 'The relay refused the message or could not be reached',
    503: 'The record store is unavailable; retry after `Retry-After` seconds'
};

const DETAIL_HEADER_DOC = {
    description: 'What is wrong, in one line of printable ASCII: the parameter, field, search term or key scope at fault and the rule it broke, e.g. `timeout: must be an integer from 1 to 28`.',
    schema: { type: 'string', maxLength: MAX_DETAIL_CHARS }
};

// Labels must be unique per code set, or the OpenAPI builder would merge different enums.
const labelOf = (status: number, codes: readonly string[]) => `Error${status}_${codes.map((c) => c.toLowerCase().replace(/_(.)/g, (_m, ch: string) => ch.toUpperCase())).join('_')}`;

// One joi object per code set: the document then holds one definition per set, not one per route.
const errorSchemas = new Map<string, Joi.ObjectSchema>();
const errorSchema = (status: number, codes: readonly string[]): Joi.ObjectSchema => {
    const label = labelOf(status, codes);
    let schema = errorSchemas.get(label);
    if (!schema) {
        schema = Joi.object({ error: Joi.string().valid(...codes).required() }).label(label);
        errorSchemas.set(label, schema);
    }

    return schema;
};

/** hapi-swagger `responses` entries for the error codes a route can answer, grouped by status. */
export function errorResponses(byStatus: Record<number, readonly ApiErrorCode[]>): Record<number, { description: string; schema: Joi.ObjectSchema; headers?: Record<string, unknown> }> {
    const out: Record<number, { description: string; schema: Joi.ObjectSchema; headers?: Record<string, unknown> }> = {};
    for (const [key, codes] of Object.entries(byStatus)) {
        const status = Number(key);
        out[status] = {
            description: `${DESCRIPTIONS[status] ?? 'Error'}: ${codes.join(', ')}`,
            schema: errorSchema(status, codes)
        };
        if (status === 401) {
            out[status].headers = { 'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string' } } };
        }

        // Every 4xx but a 401 says what is wrong (docs/api.md, "Errors").
        if (status >= 400 && status < 500 && status !== 401) {
            out[status].headers = { [ERROR_DETAIL_HEADER]: DETAIL_HEADER_DOC };
        }

        if (status === 503) {
            out[status].headers = { 'Retry-After': { description: 'Seconds.', schema: { type: 'integer' } } };
        }
    }

    return out;
}

/** The failures every route may answer besides its own. */
export const SERVER_ERRORS: Record<number, readonly ApiErrorCode[]> = {
    500: ['INTERNAL_ERROR'],
    503: ['SERVICE_UNAVAILABLE']
};
