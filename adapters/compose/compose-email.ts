/**
 * The JSON form of the send API (docs/api.md, "Send an email"): its schema, and the raw
 * message nodemailer's MailComposer builds from it. The HTTP route and the MCP tool take
 * the same body and store what this builds through the same ingest as SMTP mail.
 */

import Joi from 'joi';
import MailComposer from 'nodemailer/lib/mail-composer';

/** Longest address list or subject, characters: far past any real one, short of a document. */
const MAX_FIELD_LENGTH = 10_000;
/** Most addresses in `to` or `cc`: the core's recipient cap. */
const MAX_ADDRESSES = 100;
/** Most attachments of one email. */
const MAX_ATTACHMENTS = 100;

/** One attachment of the JSON form: its bytes in base64. */
export interface SendAttachment {
    filename: string;
    contentType?: string;
    contentBase64: string;
}

/** The JSON form of an email to store. */
export interface SendEmailBody {
    from: string;
    to: string | string[];
    cc?: string | string[];
    subject: string;
    text?: string;
    html?: string;
    headers?: Record<string, string>;
    attachments?: SendAttachment[];
}

const addresses = Joi.alternatives(
    Joi.string().max(MAX_FIELD_LENGTH),
    Joi.array().items(Joi.string().max(MAX_FIELD_LENGTH)).min(1).max(MAX_ADDRESSES)
);

/** The JSON body of `POST /v1/emails` and the input of MCP `send_email`. */
export const sendEmailBodySchema = Joi.object({
    from: Joi.string().max(MAX_FIELD_LENGTH).required().description('The sender: `a@x.test` or `Name <a@x.test>`.'),
    to: addresses.required().description('Recipients: one address, a comma-separated list, or an array. With `cc`, the envelope: each maps to an inbox.'),
    cc: addresses.description('Copies: as `to`.'),
    subject: Joi.string().allow('').max(MAX_FIELD_LENGTH).required(),
    text: Joi.string().allow('').description('The plain-text body.'),
    html: Joi.string().allow('').description('The HTML body.'),
    headers: Joi.object().pattern(/^[!-9;-~]+$/, Joi.string().max(MAX_FIELD_LENGTH)).description('More header fields, name to value.'),
    attachments: Joi.array().items(Joi.object({
        filename: Joi.string().max(256).required(),
        contentType: Joi.string().max(256).pattern(/^[!-~]+\/[!-~]+$/),
        contentBase64: Joi.string().allow('').pattern(/^[A-Za-z0-9+/=\r\n]*$/).required().description('The content, base64.')
    }).label('SendAttachment')).max(MAX_ATTACHMENTS)
}).label('SendEmailBody');

/** `a@x, b@y` → `['a@x', 'b@y']`, `Name <a@x>` → `a@x` (the envelope takes bare addresses). */
export function splitAddresses(list: string): string[] {
    return list.split(',').map((part) => {
        const trimmed = part.trim();
        const angle = /<([^<>]*)>\s*$/.exec(trimmed);
        return angle ? angle[1]!.trim() : trimmed;
    }).filter((address) => address !== '');
}

/**
 * The raw message of the JSON form, built by MailComposer (a Message-ID and Date of its
 * own unless `headers` gives them). No file or URL is ever read: every part comes from the body.
 */
export async function composeEmail(body: SendEmailBody): Promise<Buffer> {
    const composer = new MailComposer({
        from: body.from,
        to: body.to,
        ...(body.cc !== undefined ? { cc: body.cc } : {}),
        subject: body.subject,
        ...(body.text !== undefined ? { text: body.text } : {}),
        ...(body.html !== undefined ? { html: body.html } : {}),
        ...(body.headers ? { headers: body.headers } : {}),
        attachments: (body.attachments ?? []).map((a) => ({
            filename: a.filename,
            content: Buffer.from(a.contentBase64, 'base64'),
            ...(a.contentType ? { contentType: a.contentType } : {})
        })),
        disableFileAccess: true,
        disableUrlAccess: true
    });
    return composer.compile().build();
}
