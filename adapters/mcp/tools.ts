import type { SendEmailBody } from '../compose/compose-email';
import { attachmentBlock, checkAttachmentSize, type AttachmentBlock } from './attachment-content';
import { describeDetail, describeSummaries, toDetail, toSummary } from './email-views';
import { quoted } from '../error-detail/detail-line';
import { ToolError, type MailAccess, type MailEmail } from './mail-access';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, PROGRESS_INTERVAL_MS, type ToolName } from './tool-schemas';

// The tools of docs/api.md, "MCP tools": what each does with the MailAccess it is given.
// Both transports run these same functions; only the MailAccess differs.

/** A content block of a tool result. */
export type ContentBlock = { type: 'text'; text: string } | AttachmentBlock;

/** What a tool answers: `structured` matches its output schema; `content` starts with readable text. */
export interface ToolOutcome {
    structured: Record<string, unknown>;
    content: ContentBlock[];
}

/** MCP tool annotations: hints for the client, never relied on for access. */
export interface ToolAnnotations {
    readOnlyHint: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint: boolean;
}

/** One tool: its name, how clients present it, and what it does with validated arguments. */
export interface ToolDefinition {
    name: ToolName;
    title: string;
    description: string;
    annotations: ToolAnnotations;
    // Arguments have passed the tool's joi input schema (tool-schemas.ts), defaults applied.
    run(args: Record<string, unknown>, access: MailAccess, signal: AbortSignal): Promise<ToolOutcome>;
}

const text = (value: string): ContentBlock => ({ type: 'text', text: value });

// What an agent needs to write a `query` right the first time (docs/api.md, "Search"):
// the tools that take one say it in their description, each with one example.
const QUERY_LANGUAGE = 'Every term of `query` must match: words, "phrases", -negation, from:, to:, subject:, body:, filename:, tag:, '
    + 'has:attachment|link|code, before:, after:, larger:, smaller:. Matching is by case-insensitive substring (tag: by whole tag; from: reads '
    + 'the sender\'s address and display name; a word without a field reads subject, body and sender). after: and before: read Unix milliseconds or an '
    + 'ISO 8601 date or date-time; a date alone is midnight UTC.';
const example = (query: string) => `Example query: \`${query}\`.`;
const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
const DELETES: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** The email with its header fields, as get_email and wait_for_email give it. */
async function detailOf(email: MailEmail, access: MailAccess, signal: AbortSignal) {
    return toDetail(email, await access.getHeaders(email.messageId, signal));
}

/** Every tool, in the order tools/list gives them. */
export const TOOLS: ToolDefinition[] = [
    {
        name: 'list_inboxes',
        title: 'List inboxes',
        description: 'The inboxes that hold mail, most recently received first, each with its number of emails. An inbox is the local part of the recipient address.',
        annotations: READS,
        async run(args, access, signal) {
            const { inboxes, hasMore } = await access.listInboxes({ prefix: (args.prefix as string | undefined) || undefined, limit: args.limit as number }, signal);
            const lines = inboxes.map((i) => `- ${i.name}: ${i.count} email${i.count === 1 ? '' : 's'}, newest ${new Date(i.lastReceivedAt).toISOString()}`);
            return {
                structured: { inboxes, hasMore },
                content: [text(inboxes.length === 0 ? 'No inbox holds mail.' : `${lines.join('\n')}${hasMore ? '\n(more inboxes exist: narrow with prefix)' : ''}`)]
            };
        }
    },
    {
        name: 'search_emails',
        title: 'Search an inbox',
        description: `Emails of one inbox, newest first, with their one-time codes and links; \`query\` filters them. ${QUERY_LANGUAGE} ${example('from:"Billing Team" invoice after:2026-05-01')} Read one in full with get_email.`,
        annotations: READS,
        async run(args, access, signal) {
            const limit = args.limit as number;
            const emails: MailEmail[] = [];
            let cursor: string | undefined;
            // A page may end early at the service's byte budget: read on until `limit`.
            do {
                const page = await access.listEmails({ inbox: args.inbox as string, query: args.query as string | undefined, limit: limit - emails.length, cursor }, signal);
                emails.push(...page.emails);
                cursor = page.nextCursor;
            } while (cursor !== undefined && emails.length < limit);

            const summaries = emails.map(toSummary);
            return {
                structured: { emails: summaries, hasMore: cursor !== undefined },
                content: [text(summaries.length === 0 ? `No email in inbox ${args.inbox as string} matches.` : describeSummaries(summaries))]
            };
        }
    },
    {
        name: 'wait_for_email',
        title: 'Wait for an email',
        description: 'Waits on the server until an email matching `query` is in the inbox (at once if one already is), up to `timeoutSeconds`, and gives the newest one in full: '
            + 'text, codes, links, attachments, headers; else `found: false`. Call it once; it does not need to be repeated while it waits. '
            + `\`timeoutSeconds\` defaults to ${DEFAULT_WAIT_SECONDS}, under the 60 s after which MCP clients commonly time a request out. To wait longer (up to ${MAX_WAIT_SECONDS}), `
            + `send a progressToken: the server then sends a progress notification every ${PROGRESS_INTERVAL_MS / 1000} s while it waits, and a client that resets its timeout on progress keeps waiting. `
            + `${QUERY_LANGUAGE} ${example('subject:"verify your email" has:code')}`,
        annotations: READS,
        async run(args, access, signal) {
            const timeoutSeconds = args.timeoutSeconds as number;
            const email = await access.waitForEmail({
                inbox: args.inbox as string,
                query: args.query as string | undefined,
                receivedAfter: args.receivedAfter as number | string | undefined,
                timeoutMs: timeoutSeconds * 1000
            }, signal);
            if (!email) {
                return { structured: { found: false }, content: [text(`No matching email arrived in inbox ${args.inbox as string} within ${timeoutSeconds} s.`)] };
            }

            const detail = await detailOf(email, access, signal);
            return { structured: { found: true, email: detail }, content: [text(describeDetail(detail))] };
        }
    },
    {
        name: 'get_email',
        title: 'Read an email',
        description: 'One email in full: its text (the HTML as text when there is no text part, at most 100,000 characters), one-time codes, links, tags, attachments and header fields (at most 100,000 characters of them).',
        annotations: READS,
        async run(args, access, signal) {
            const detail = await detailOf(await access.getEmail(args.messageId as string, signal), access, signal);
            return { structured: { email: detail }, content: [text(describeDetail(detail))] };
        }
    },
    {
        name: 'get_attachment',
        title: 'Read an attachment',
        description: 'One attachment\'s content: as text for text, JSON and XML of up to 1 MiB, else as an embedded resource in base64 (up to 10 MiB).',
        annotations: READS,
        async run(args, access, signal) {
            const messageId = args.messageId as string;
            const filename = args.filename as string;
            const email = await access.getEmail(messageId, signal);
            const attachment = email.attachments.find((a) => a.filename === filename);
            if (!attachment) {
                throw new ToolError('NOT_FOUND', `filename: no attachment ${quoted(filename)} of an email ${quoted(messageId)}`);
            }

            checkAttachmentSize(attachment.size);
            const block = attachmentBlock({ messageId, filename, contentType: attachment.contentType }, await access.readAttachment(messageId, filename, signal));
            const structured = { messageId, filename, contentType: attachment.contentType, size: attachment.size, encoding: block.type === 'text' ? 'text' : 'base64' };
            return {
                structured,
                content: block.type === 'text' ? [block] : [text(`${filename} (${attachment.contentType}, ${attachment.size} bytes), in base64 in the embedded resource.`), block]
            };
        }
    },
    {
        name: 'delete_email',
        title: 'Delete an email',
        description: 'Deletes one email with its raw message and attachments.',
        annotations: DELETES,
        async run(args, access, signal) {
            const messageId = args.messageId as string;
            await access.deleteEmail(messageId, signal);
            return { structured: { deleted: true, messageId }, content: [text(`Deleted email ${messageId}.`)] };
        }
    },
    {
        name: 'delete_inbox',
        title: 'Delete an inbox',
        description: 'Deletes every email of one inbox.',
        annotations: DELETES,
        async run(args, access, signal) {
            const deleted = await access.deleteInbox(args.inbox as string, signal);
            return { structured: { deleted }, content: [text(`Deleted ${deleted} email${deleted === 1 ? '' : 's'} of inbox ${args.inbox as string}.`)] };
        }
    },
    {
        name: 'new_inbox',
        title: 'Make a fresh inbox',
        description: 'A fresh inbox name and the address that delivers to it: send the mail under test there, then wait_for_email with that inbox. Nothing is stored until mail arrives.',
        annotations: { readOnlyHint: true, openWorldHint: false },
        async run(args, access, signal) {
            const made = await access.newInbox((args.prefix as string | undefined) || undefined, signal);
            return { structured: made, content: [text(`New inbox ${made.inbox}: send mail to ${made.address}, then call wait_for_email with inbox "${made.inbox}".`)] };
        }
    },
    {
        name: 'send_email',
        title: 'Send an email into the capture',
        description: 'Stores an email as if an application had sent it over SMTP, to seed a test: from, to (and cc) map to inboxes as for SMTP mail; text and/or html, extra headers, attachments in base64. '
            + 'Links, codes, tags, webhooks and auto-relay apply; SMTP fault rules do not. Answers each stored copy\'s messageId and inbox. A read-only key may not send; a key with an inbox prefix may send only to inboxes inside it.',
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        async run(args, access, signal) {
            const emails = await access.sendEmail(args as unknown as SendEmailBody, signal);
            return { structured: { emails }, content: [text(`Stored ${emails.length} ${emails.length === 1 ? 'copy' : 'copies'}: ${emails.map((e) => `${e.inbox} (messageId ${e.messageId})`).join(', ')}.`)] };
        }
    },
    {
        name: 'check_email',
        title: 'Check an email',
        description: 'Is this mail right? `html` checks the email\'s HTML (with its <style> blocks and style attributes) against the Gmail, Outlook, Apple Mail, Yahoo and Samsung Email clients with the caniemail data: a score 0-100 and each feature some client lacks or half-supports. It needs nothing but the email; an email without HTML scores 100. ' +
            '`links` asks each http(s) link of the email with HEAD (never GET, so one-time links stay unused): it needs the service to allow it (INBOX_CAPTURE_LINK_CHECK_ALLOW), and says so when it is off. ' +
            '`auth` gives the SPF, DKIM, DMARC and ARC verdicts: SPF needs the SMTP client\'s address kept when the mail arrived over SMTP (none for an uploaded mail), and every check needs the DNS servers (INBOX_CAPTURE_DNS_SERVERS, default the system\'s) reachable: unanswered lookups give temperror after 5 s. Worked out once and kept.',
        annotations: READS,
        async run(args, access, signal) {
            const messageId = args.messageId as string;
            const checks = args.checks as string[];
            const html = checks.includes('html') ? await access.checkHtml(messageId, signal) : undefined;
            const links = checks.includes('links') ? await access.checkLinks(messageId, signal) : undefined;
            const auth = checks.includes('auth') ? await access.checkAuth(messageId, signal) : undefined;
            const lines = [`Checks of email ${messageId}.`];
            if (html) {
                lines.push(html.html === false ? 'HTML: the email has no HTML body (score 100).' : `HTML: score ${html.score} for ${html.clients.length} clients (caniemail data of ${html.data.updated.slice(0, 10)}).`);
                for (const finding of html.findings) {
                    const unsupported = finding.unsupported.length > 0 ? `not in ${finding.unsupported.join(', ')}` : '';
                    const partial = finding.partial.length > 0 ? `partly in ${finding.partial.join(', ')}` : '';
                    lines.push(`- ${finding.title} (${finding.count}x): ${[unsupported, partial].filter(Boolean).join('; ')}`);
                }
            }

            if (links === null) {
                lines.push('Links: the link check is disabled on this service (INBOX_CAPTURE_LINK_CHECK_ALLOW is not set).');
            }
            else if (links) {
                lines.push(`Links: ${links.filter((l) => l.ok).length} of ${links.length} answered below 400.`);
                for (const link of links) {
                    const outcome = link.error ?? String(link.status);
                    lines.push(`- ${link.ok ? 'ok' : 'broken'} ${outcome} ${link.url}${link.redirects.length > 0 ? ` (via ${link.redirects.join(' -> ')})` : ''}`);
                }
            }

            if (auth) {
                const dkim = auth.dkim.map((d) => (d.domain ? `${d.result} (${d.domain}, selector ${d.selector ?? '-'})` : d.result)).join(', ');
                lines.push(`Authentication: SPF ${auth.spf.result}${auth.spf.domain ? ` (${auth.spf.domain})` : ''}; DKIM ${dkim}; ` +
                    `DMARC ${auth.dmarc.result}${auth.dmarc.domain ? ` (${auth.dmarc.domain}${auth.dmarc.policy ? `, p=${auth.dmarc.policy}` : ''})` : ''}; ARC ${auth.arc.result}.`);
            }

            return { structured: { messageId, ...(html ? { html } : {}), ...(links !== undefined ? { links } : {}), ...(auth ? { auth } : {}) }, content: [text(lines.join('\n'))] };
        }
    }
];
