import * as Code from '@hapi/code';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import * as Nodemailer from 'nodemailer';
import { buildMail, type TestMail } from './mail';

const { expect } = Code;

// What an agent does with the MCP tools, run the same way over each transport: real mail
// sent over SMTP, every tool, wait_for_email answering a mail sent while it waits, and
// failures as isError results. The client is the SDK's own, so the tools are seen exactly
// as any MCP client sees them (output schemas checked by it on every structured result).

/** The names of the tools, in the order tools/list gives them. */
export const TOOL_NAMES = ['list_inboxes', 'search_emails', 'wait_for_email', 'get_email', 'get_attachment', 'delete_email', 'delete_inbox', 'new_inbox', 'send_email', 'check_email'];

/** Where the scenario sends mail. */
export interface MailSender {
    /** Delivers `mail` to `to` over SMTP. */
    send(to: string, mail: TestMail): Promise<void>;
    close(): void;
}

/** A sender to an SMTP listener on the loopback. */
export function smtpSender(port: number): MailSender {
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    return {
        async send(to, mail) {
            await transport.sendMail({ envelope: { from: 'app@example.test', to: [to] }, raw: buildMail({ ...mail, to }) });
        },
        close: () => transport.close()
    };
}

/** A tool call whose result the test reads. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}, options: { timeout?: number } = {}): Promise<CallToolResult> {
    return await client.callTool({ name, arguments: args }, undefined, { timeout: options.timeout ?? 60_000 }) as CallToolResult;
}

/** The first text block of a result. */
export function textOf(result: CallToolResult): string {
    const block = result.content.find((c) => c.type === 'text');
    return block && block.type === 'text' ? block.text : '';
}

/** Asserts a failure result whose text starts with `code`. */
export function expectToolError(result: CallToolResult, code: string): void {
    expect(result.isError, textOf(result)).to.be.true();
    expect(textOf(result)).to.startWith(`${code}: `);
}

/** Asserts a successful result and returns its structured content. */
export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
    expect(result.isError, textOf(result)).to.not.be.true();
    expect(textOf(result)).to.not.equal('');
    return result.structuredContent as T;
}

interface Detail {
    messageId: string;
    inbox: string;
    subject: string;
    text: string;
    textTruncated: boolean;
    codes: string[];
    links: Array<{ href: string; text: string }>;
    attachments: Array<{ filename: string; contentType: string; size: number }>;
    headers: Array<{ name: string; value: string }>;
    tags: string[];
}

/**
 * Every tool with a full-access client, on real mail (docs/api.md, "MCP tools"):
 * `mailDomain` is the domain new_inbox must use.
 */
export async function runEveryTool(client: Client, sender: MailSender, mailDomain: string): Promise<void> {
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).to.equal(TOOL_NAMES);
    for (const tool of listed.tools) {
        expect(tool.inputSchema.type).to.equal('object');
        expect(tool.outputSchema?.type).to.equal('object');
        expect(tool.description).to.not.be.empty();
    }

    // new_inbox: a fresh address at the configured domain.
    const made = structured<{ inbox: string; address: string }>(await call(client, 'new_inbox', { prefix: 'mcp-' }));
    expect(made.inbox).to.match(/^mcp-[a-z0-9]{10}$/);
    expect(made.address).to.equal(`${made.inbox}@${mailDomain}`);

    // wait_for_email: held on the server, answered by a mail sent while it waits. The mail
    // has HTML only, so its text is the HTML's.
    const code = String(100000 + (randomBytes(3).readUIntBE(0, 3) % 900000));
    let settled = false;
    const waiting = call(client, 'wait_for_email', { inbox: made.inbox, timeoutSeconds: 60 }).finally(() => {
        settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled, 'wait_for_email answered before any mail was sent').to.be.false();
    const json = JSON.stringify({ ok: true, code });
    const binary = randomBytes(3000);
    await sender.send(made.address, {
        subject: `Confirm your account: ${code}`,
        html: `<p>Welcome!</p><p>Your code is <b>${code}</b>.</p><p><a href="https://app.example.test/verify?t=${code}">Verify your address</a></p>`,
        htmlOnly: true,
        attachments: [
            { filename: 'notes.txt', contentType: 'text/plain', content: 'plain attachment text\n' },
            { filename: 'data.json', contentType: 'application/json', content: json },
            { filename: 'blob.bin', contentType: 'application/octet-stream', content: binary }
        ]
    });
    const waited = structured<{ found: boolean; email: Detail }>(await waiting);
    expect(waited.found).to.be.true();
    const email = waited.email;
    expect(email.inbox).to.equal(made.inbox);
    expect(email.codes).to.include(code);
    expect(email.links).to.include({ href: `https://app.example.test/verify?t=${code}`, text: 'Verify your address' });
    expect(email.text).to.contain(`Your code is ${code}`);
    expect(email.text).to.not.contain('<b>');
    expect(email.textTruncated).to.be.false();
    expect(email.attachments.map((a) => a.filename)).to.equal(['0-notes.txt', '1-data.json', '2-blob.bin']);
    expect(email.headers).to.include({ name: 'Subject', value: `Confirm your account: ${code}` });
    expect(textOf(await waiting)).to.contain(code);

    // wait_for_email answers at once when the mail is already there, and found:false at its timeout.
    const again = structured<{ found: boolean; email: Detail }>(await call(client, 'wait_for_email', { inbox: made.inbox, query: '', timeoutSeconds: 30 }));
    expect(again.email.messageId).to.equal(email.messageId);
    const none = structured<{ found: boolean }>(await call(client, 'wait_for_email', { inbox: made.inbox, receivedAfter: Date.now() + 3_600_000, timeoutSeconds: 1 }));
    expect(none).to.equal({ found: false });

    // search_emails: the summary, newest first.
    const found = structured<{ emails: Array<Record<string, unknown>>; hasMore: boolean }>(await call(client, 'search_emails', { inbox: made.inbox }));
    expect(found.hasMore).to.be.false();
    expect(found.emails).to.have.length(1);
    expect(found.emails[0]).to.include({ messageId: email.messageId, subject: `Confirm your account: ${code}`, attachmentCount: 3, codes: [code] });
    expect(Object.keys(found.emails[0]!).sort()).to.equal(['attachmentCount', 'codes', 'links', 'messageId', 'receivedAt', 'recipient', 'sender', 'subject', 'tags']);

    // get_email: the same email in full.
    const got = structured<{ email: Detail }>(await call(client, 'get_email', { messageId: email.messageId }));
    expect(got.email).to.equal(email);
    expect(textOf(await call(client, 'get_email', { messageId: email.messageId }))).to.contain(`link: https://app.example.test/verify?t=${code}`);

    // get_attachment: text, JSON as text, anything else as an embedded resource.
    const notes = await call(client, 'get_attachment', { messageId: email.messageId, filename: '0-notes.txt' });
    expect(structured(notes)).to.include({ encoding: 'text', contentType: 'text/plain', size: 22 });
    expect(notes.content).to.equal([{ type: 'text', text: 'plain attachment text\n' }]);
    const data = await call(client, 'get_attachment', { messageId: email.messageId, filename: '1-data.json' });
    expect(JSON.parse(textOf(data))).to.equal({ ok: true, code });
    const blob = await call(client, 'get_attachment', { messageId: email.messageId, filename: '2-blob.bin' });
    expect(structured(blob)).to.include({ encoding: 'base64', size: 3000 });
    const resource = blob.content.find((c) => c.type === 'resource');
    expect(resource && resource.type === 'resource' && 'blob' in resource.resource ? Buffer.from(resource.resource.blob, 'base64') : null).to.equal(binary);

    // check_email: the HTML against the default clients (the HTML-only mail above); the
    // authentication check, which asks DNS, has tests of its own with a DNS server of theirs.
    const checked = structured<{ messageId: string; html: { clients: string[]; score: number; findings: Array<{ title: string }> } }>(await call(client, 'check_email', { messageId: email.messageId, checks: ['html'] }));
    expect(checked.messageId).to.equal(email.messageId);
    expect(checked.html.clients).to.have.length(16);
    expect(checked.html.score).to.equal(100);
    expect(checked.html.findings).to.equal([]);
    const checkedText = textOf(await call(client, 'check_email', { messageId: email.messageId, checks: ['html'] }));
    expect(checkedText).to.contain(`HTML: score ${checked.html.score} for 16 clients`);
    expectToolError(await call(client, 'check_email', { messageId: `nobody-${code}@example.test` }), 'NOT_FOUND');
    expectToolError(await call(client, 'check_email', { messageId: email.messageId, checks: ['spam'] }), 'VALIDATION_ERROR');

    // list_inboxes: the new inbox with its one email.
    const inboxes = structured<{ inboxes: Array<{ name: string; count: number }> }>(await call(client, 'list_inboxes', { prefix: made.inbox }));
    expect(inboxes.inboxes.map((i) => [i.name, i.count])).to.equal([[made.inbox, 1]]);

    // send_email: a seeded email, built from its fields, stored as SMTP mail is, and read back.
    const seeded = structured<{ emails: Array<{ messageId: string; inbox: string }> }>(await call(client, 'send_email', {
        from: 'Seeder <seed@example.test>', to: `${made.inbox}-seed@${mailDomain}`, subject: `Seeded ${code}`, text: `Seed code ${code}.`,
        attachments: [{ filename: 'seed.txt', contentType: 'text/plain', contentBase64: Buffer.from('seeded\n').toString('base64') }]
    }));
    expect(seeded.emails.map((e) => e.inbox)).to.equal([`${made.inbox}-seed`]);
    const seededEmail = structured<{ email: Detail }>(await call(client, 'get_email', { messageId: seeded.emails[0]!.messageId })).email;
    expect([seededEmail.subject, seededEmail.codes, seededEmail.attachments.map((a) => [a.filename, a.size])]).to.equal([`Seeded ${code}`, [code], [['0-seed.txt', 7]]]);
    expectToolError(await call(client, 'send_email', { to: 'x@example.test', subject: 'no sender' }), 'VALIDATION_ERROR');
    expectToolError(await call(client, 'send_email', { from: 'a@example.test', to: 'Nobody', subject: 'no inbox' }), 'VALIDATION_ERROR');
    expect(structured(await call(client, 'delete_inbox', { inbox: `${made.inbox}-seed` }))).to.equal({ deleted: 1 });

    // Failures are results whose text starts with the code.
    expectToolError(await call(client, 'get_email', { messageId: `nobody-${code}@example.test` }), 'NOT_FOUND');
    expectToolError(await call(client, 'get_attachment', { messageId: email.messageId, filename: '9-none.txt' }), 'NOT_FOUND');
    expectToolError(await call(client, 'search_emails', { inbox: 'Not An Inbox' }), 'VALIDATION_ERROR');
    expectToolError(await call(client, 'search_emails', { inbox: made.inbox, limit: 0 }), 'VALIDATION_ERROR');
    expectToolError(await call(client, 'wait_for_email', { inbox: made.inbox, timeoutSeconds: 301 }), 'VALIDATION_ERROR');
    expectToolError(await call(client, 'wait_for_email', { inbox: made.inbox, receivedAfter: 'yesterday' }), 'VALIDATION_ERROR');
    expectToolError(await call(client, 'get_email', {}), 'VALIDATION_ERROR');

    // delete_email, then delete_inbox.
    expect(structured(await call(client, 'delete_email', { messageId: email.messageId }))).to.equal({ deleted: true, messageId: email.messageId });
    expectToolError(await call(client, 'get_email', { messageId: email.messageId }), 'NOT_FOUND');
    expectToolError(await call(client, 'delete_email', { messageId: email.messageId }), 'NOT_FOUND');

    // query, in the API's search language: wait_for_email waits past mail that does not match
    // it, search_emails lists only what matches, and the summaries carry the tags.
    const shipping = call(client, 'wait_for_email', { inbox: made.inbox, query: `body:"order ${code}"`, timeoutSeconds: 60 });
    await sender.send(made.address, { subject: 'one', text: 'nothing to see', headers: ['X-Tags: first, beta'] });
    await sender.send(made.address, { subject: 'two', text: `Your order ${code} has shipped.` });
    expect(structured<{ found: boolean; email: Detail }>(await shipping).email.subject).to.equal('two');
    const tagged = structured<{ emails: Array<{ subject: string; tags: string[] }> }>(await call(client, 'search_emails', { inbox: made.inbox, query: 'tag:beta' }));
    expect(tagged.emails.map((e) => [e.subject, e.tags])).to.equal([['one', ['first', 'beta']]]);
    const ordered = structured<{ emails: Array<{ subject: string; tags: string[] }> }>(await call(client, 'search_emails', { inbox: made.inbox, query: `"order ${code}" -tag:beta` }));
    expect(ordered.emails.map((e) => [e.subject, e.tags])).to.equal([['two', []]]);
    expectToolError(await call(client, 'search_emails', { inbox: made.inbox, query: '"unclosed' }), 'VALIDATION_ERROR');
    const counted = structured<{ emails: unknown[] }>(await call(client, 'search_emails', { inbox: made.inbox }));
    expect(counted.emails).to.have.length(2);
    expect(structured(await call(client, 'delete_inbox', { inbox: made.inbox }))).to.equal({ deleted: counted.emails.length });
    expect(structured<{ emails: unknown[] }>(await call(client, 'search_emails', { inbox: made.inbox })).emails).to.equal([]);
}

/**
 * The tools with a key made `--inbox-prefix <prefix> --read-only`: its inboxes only, no
 * deletes. `otherId` is an email in an inbox outside the prefix (`otherInbox`).
 */
export async function runScopedTools(client: Client, sender: MailSender, scope: { prefix: string; otherInbox: string; otherId: string }): Promise<void> {
    const made = structured<{ inbox: string; address: string }>(await call(client, 'new_inbox'));
    expect(made.inbox.startsWith(scope.prefix)).to.be.true();
    const nested = structured<{ inbox: string }>(await call(client, 'new_inbox', { prefix: 'signup-' }));
    expect(nested.inbox.startsWith(`${scope.prefix}signup-`)).to.be.true();

    await sender.send(made.address, { subject: 'mine' });
    const mine = structured<{ found: boolean; email: Detail }>(await call(client, 'wait_for_email', { inbox: made.inbox, timeoutSeconds: 30 }));
    expect(mine.email.subject).to.equal('mine');

    const listed = structured<{ inboxes: Array<{ name: string }> }>(await call(client, 'list_inboxes', { limit: 100 }));
    expect(listed.inboxes.map((i) => i.name)).to.include(made.inbox);
    expect(listed.inboxes.every((i) => i.name.startsWith(scope.prefix))).to.be.true();
    expect(structured<{ inboxes: unknown[] }>(await call(client, 'list_inboxes', { prefix: scope.otherInbox })).inboxes).to.equal([]);

    // Another inbox by name: FORBIDDEN; another inbox's email by id: NOT_FOUND.
    expectToolError(await call(client, 'search_emails', { inbox: scope.otherInbox }), 'FORBIDDEN');
    expectToolError(await call(client, 'wait_for_email', { inbox: scope.otherInbox, timeoutSeconds: 5 }), 'FORBIDDEN');
    expectToolError(await call(client, 'get_email', { messageId: scope.otherId }), 'NOT_FOUND');
    expectToolError(await call(client, 'get_attachment', { messageId: scope.otherId, filename: '0-a.txt' }), 'NOT_FOUND');
    expectToolError(await call(client, 'check_email', { messageId: scope.otherId }), 'NOT_FOUND');

    // Read-only: no deletes, in its own inboxes (403 before 404) or anywhere.
    expectToolError(await call(client, 'delete_email', { messageId: mine.email.messageId }), 'FORBIDDEN');
    expectToolError(await call(client, 'delete_email', { messageId: scope.otherId }), 'FORBIDDEN');
    expectToolError(await call(client, 'delete_inbox', { inbox: made.inbox }), 'FORBIDDEN');
    expectToolError(await call(client, 'send_email', { from: 'a@example.test', to: `${made.inbox}@example.test`, subject: 'read-only' }), 'FORBIDDEN');
    expect(structured(await call(client, 'get_email', { messageId: mine.email.messageId }))).to.exist();
}
