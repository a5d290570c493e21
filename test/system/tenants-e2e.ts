import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as Nodemailer from 'nodemailer';
import * as Path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { runNode } from '../helpers/child-process';
import { call, expectToolError, structured } from '../helpers/mcp-scenario';
import { serviceBackends } from '../helpers/service-backends';
import { sendError } from '../helpers/smtp-capture';
import { spawnStandalone, type ListeningService } from '../helpers/standalone-service';
import { contextWithKey, openUi, waitForCount } from '../helpers/web-ui';

const { expect } = Code;
const lab = exports.lab = Lab.script();
const { describe, it, before, after } = lab;

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

interface EmailJson {
    messageId: string;
    inbox: string;
    recipient: string;
    subject: string;
}

/** Runs the CLI with the service's environment; answers its stdout, trimmed (fails the test on a non-zero exit). */
async function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
    const result = await runNode([BIN, ...args], { cwd: ROOT, env });
    expect(result.code, result.stderr).to.equal(0);
    return result.stdout.trim();
}

/** What one team has: its SMTP login and its key. */
interface Team {
    prefix: string;
    user: string;
    pass: string;
    key: string;
}

describe('tenants: two teams on one service, from SMTP to API, MCP and the web interface', () => {
    let browser: Browser;

    before(async () => {
        browser = await launchBrowser();
    });

    after(async () => {
        await browser?.close();
    });

    for (const [name, backendEnv] of serviceBackends(lab)) {
        describe(`on ${name}`, () => {

            it('each team\'s key sees only its copy of mail both sent to signup@app.test', { timeout: 180_000 }, async () => {
                const env = { ...await backendEnv(), SMTP_AUTH: 'users', SMTP_AUTH_USERS: 'ops:ops-secret' };
                const team = async (id: string): Promise<Team> => ({
                    prefix: `team-${id}-`,
                    user: `team-${id}`,
                    pass: await cli(env, ['smtp-users', 'create', `team-${id}`, '--inbox-prefix', `team-${id}-`]),
                    key: await cli(env, ['keys', 'create', `team-${id}`, '--inbox-prefix', `team-${id}-`])
                });
                const a = await team('a');
                const b = await team('b');
                const opsKey = await cli(env, ['keys', 'create', 'ops']);

                let service: ListeningService | undefined;
                const transports: Nodemailer.Transporter[] = [];
                try {
                    service = await spawnStandalone(env);
                    const base = service.base;
                    const send = (auth: { user: string; pass: string }, subject: string) => {
                        const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: service!.smtpPort, secure: false, ignoreTLS: true, auth });
                        transports.push(transport);
                        return transport.sendMail({
                            envelope: { from: 'app@app.test', to: ['signup@app.test'] },
                            raw: `From: app@app.test\r\nTo: signup@app.test\r\nSubject: ${subject}\r\nMessage-ID: <signup-1@app.test>\r\n\r\nWelcome.\r\n`
                        });
                    };

                    // The same message, by both teams' applications, over real SMTP sessions with AUTH.
                    await send(a, 'A signs up');
                    await send(b, 'B signs up');
                    expect((await sendError(send({ user: a.user, pass: b.pass }, 'guess'))).responseCode).to.equal(535);

                    const api = async (key: string, path: string) => {
                        const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
                        return { status: res.status, body: await res.json() as Record<string, unknown> };
                    };
                    const inboxNames = async (key: string) => ((await api(key, '/v1/inboxes')).body.inboxes as { name: string }[]).map((i) => i.name);
                    const emails = async (key: string, inbox: string) => (await api(key, `/v1/emails?inbox=${inbox}`)).body.emails as EmailJson[];

                    // The API: each key lists its own inbox, holding its own copy, recipient as sent.
                    expect(await inboxNames(a.key)).to.equal(['team-a-signup']);
                    expect(await inboxNames(b.key)).to.equal(['team-b-signup']);
                    expect((await inboxNames(opsKey)).sort()).to.equal(['team-a-signup', 'team-b-signup']);
                    const [copyA] = await emails(a.key, 'team-a-signup');
                    const [copyB] = await emails(b.key, 'team-b-signup');
                    expect(copyA).to.include({ inbox: 'team-a-signup', recipient: 'signup@app.test', subject: 'A signs up' });
                    expect(copyB).to.include({ inbox: 'team-b-signup', recipient: 'signup@app.test', subject: 'B signs up' });
                    expect((await api(a.key, '/v1/emails?inbox=team-b-signup')).status).to.equal(403);
                    expect((await api(a.key, `/v1/emails/${encodeURIComponent(copyB!.messageId)}`)).status).to.equal(404);
                    expect((await api(a.key, '/v1/emails?inbox=signup')).status).to.equal(403);

                    // MCP, through the SDK's client over Streamable HTTP.
                    const mcp = new Client({ name: 'tenants-e2e', version: '1.0.0' });
                    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${a.key}` } } }));
                    try {
                        const listed = structured<{ inboxes: { name: string }[] }>(await call(mcp, 'list_inboxes'));
                        expect(listed.inboxes.map((i) => i.name)).to.equal(['team-a-signup']);
                        const found = structured<{ emails: { subject: string; recipient: string }[] }>(await call(mcp, 'search_emails', { inbox: 'team-a-signup' }));
                        expect(found.emails.map((e) => e.subject)).to.equal(['A signs up']);
                        expectToolError(await call(mcp, 'search_emails', { inbox: 'team-b-signup' }), 'FORBIDDEN');
                        expectToolError(await call(mcp, 'get_email', { messageId: copyB!.messageId }), 'NOT_FOUND');
                    }
                    finally {
                        await mcp.close();
                    }

                    // The web interface in Chromium, signed in with team B's key.
                    const context = await contextWithKey(browser, b.key);
                    try {
                        const page = await context.newPage();
                        await openUi(page, base, '#/');
                        await waitForCount(page, '#inbox-list a.item', 1);
                        expect(await page.locator('#inbox-list a.item').getAttribute('data-inbox')).to.equal('team-b-signup');
                        await page.locator('#key-scope').waitFor({ state: 'visible' });
                        expect(await page.locator('#key-scope').textContent()).to.equal('Key team-b: Inboxes starting with team-b-');
                        await openUi(page, base, '#/inbox/team-b-signup');
                        await waitForCount(page, '#email-list a.item', 1);
                        expect(await page.locator('#email-list a.item').textContent()).to.contain('B signs up');
                    }
                    finally {
                        await context.close();
                    }
                }
                finally {
                    transports.forEach((t) => t.close());
                    if (service && service.child.exitCode === null && service.child.signalCode === null) {
                        service.child.kill('SIGTERM');
                        await service.exited;
                    }
                }
            });
        });
    }
});
