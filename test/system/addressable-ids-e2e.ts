import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { sha256Hex } from '../../lib/identity/ids';
import { run, runNode } from '../helpers/child-process';
import { HEADERS_EXPECTED, HEADERS_MESSAGE } from '../helpers/headers-message';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { startS3, type S3Fixture } from '../helpers/s3';
import { isolatedEnv, postgresS3Env } from '../helpers/service-env';
import { spawnStandalone, type ListeningService } from '../helpers/standalone-service';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// Hostile Message-IDs and the headers endpoint end to end (docs/api.md, "Addressable message ids"
// and "Header fields"): mail in over real SMTP, out over real HTTP with plain fetch() and
// the curl binary, on SQLite + files and on Postgres + S3.

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
const PROCESS_LIMIT_MS = 30_000;
const INBOX = 'hostile';
// Over the addressable length once encoded (each `日` is 9 characters): its URLs would pass 16 KiB.
const LONG_ID = `${'日'.repeat(1400)}@example.test`;

/** Hostile Message-IDs and the messageId each must be stored under (docs/design.md). */
const HOSTILE: Array<[string, string]> = [
    ['.', `.~${INBOX}`],
    ['..', `..~${INBOX}`],
    ['./x', './x'],
    ['../x', '../x'],
    ['a/b/../c@example.test', 'a/b/../c@example.test'],
    ['%2e', '%2e'],
    ['%2E%2E', '%2E%2E'],
    ['.%2e', '.%2e'],
    ['space in id@example.test', 'space in id@example.test'],
    ['q?h#p%@example.test', 'q?h#p%@example.test'],
    [LONG_ID, `${sha256Hex(LONG_ID)}@inbox-capture`]
];

/** An attachment name that is awkward in a URL (kept as the attachment's `filename` after `0-`). */
const ATTACHMENT_NAME = 'a b?c#d%2e..e.txt';
const ATTACHMENT = 'attached bytes\r\n';

function hostileMessage(id: string): Buffer {
    return Buffer.from([
        'From: Tester <tester@example.test>',
        `To: ${INBOX}@example.test`,
        `Subject: id ${id.length > 40 ? 'long' : id}`,
        `Message-ID: <${id}>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'body',
        '--b1',
        'Content-Type: text/plain',
        `Content-Disposition: attachment; filename="${ATTACHMENT_NAME}"`,
        '',
        ATTACHMENT.trimEnd(),
        '--b1--',
        ''
    ].join('\r\n'));
}

interface EmailJson {
    messageId: string;
    subject: string;
    rawUrl: string;
    attachments: { filename: string; url: string }[];
}

/** `curl -s` without --path-as-is: status, Location and body of one request. */
async function curl(url: string, headers: string[] = []): Promise<{ status: number; location: string; body: string }> {
    const marker = '\n--curl-status--';
    const args = ['-s', '--noproxy', '*', '-w', `${marker}%{http_code} %{redirect_url}`, ...headers.flatMap((h) => ['-H', h]), url];
    const result = await run('curl', args, { cwd: ROOT, env: { PATH: process.env.PATH } });
    expect(result.code, result.stderr).to.equal(0);
    const at = result.stdout.lastIndexOf(marker);
    const [status, location] = result.stdout.slice(at + marker.length).split(' ');
    return { status: Number(status), location: location ?? '', body: result.stdout.slice(0, at) };
}

/** Follows a 302 of the API with plain fetch: the redirect, then its target without the key. */
async function fetchDownload(base: string, url: string, auth: Record<string, string>): Promise<string> {
    const redirect = await fetch(`${base}${url}`, { headers: auth, redirect: 'manual' });
    expect(redirect.status, url).to.equal(302);
    const target = await fetch(new URL(redirect.headers.get('location')!, base));
    expect(target.status, url).to.equal(200);
    return Buffer.from(await target.arrayBuffer()).toString('latin1');
}

interface Backend {
    name: string;
    env(dataDir: string): NodeJS.ProcessEnv;
}

describe('every stored messageId is addressable (standalone service, real SMTP, fetch and curl)', () => {
    let postgres: PostgresServer | undefined;
    let s3: S3Fixture | undefined;

    before(async () => {
        postgres = await startPostgres();
        s3 = await startS3();
    });

    after(async () => {
        await s3?.stop();
        await postgres?.stop();
    });

    const backends: Backend[] = [
        { name: 'SQLite + files', env: (dataDir) => isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir }) },
        { name: 'Postgres + S3', env: (dataDir) => postgresS3Env(postgres!.connectionString, s3!, { INBOX_CAPTURE_DATA_DIR: dataDir }) }
    ];

    for (const backend of backends) {
        it(`serves hostile ids, their downloads and their headers on ${backend.name}`, async () => {
            const dataDir = await tempDir('ids-e2e');
            const env = backend.env(dataDir);
            let service: ListeningService | undefined;
            let transport: Nodemailer.Transporter | undefined;
            try {
                // On free ports, started again if one was taken meanwhile.
                service = await spawnStandalone(env, PROCESS_LIMIT_MS);
                const { base } = service;
                const smtp = Nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true });
                transport = smtp;
                const created = await runNode([BIN, 'keys', 'create', `ids-${Date.now()}`], { cwd: ROOT, env });
                expect(created.code, created.stderr).to.equal(0);
                const key = created.stdout.trim();
                const auth = { authorization: `Bearer ${key}` };

                for (const [id] of HOSTILE) {
                    const info = await smtp.sendMail({ envelope: { from: 'tester@example.test', to: [`${INBOX}@example.test`] }, raw: hostileMessage(id) });
                    expect(info.response, id).to.startWith('250');
                }

                await smtp.sendMail({ envelope: { from: 'tester@example.test', to: ['headers@example.test'] }, raw: HEADERS_MESSAGE });

                // The list shows the derived ids.
                const listed = await fetch(`${base}/v1/emails?inbox=${INBOX}&limit=100`, { headers: auth });
                expect(listed.status).to.equal(200);
                const emails = (await listed.json() as { emails: EmailJson[] }).emails;
                expect(emails.map((e) => e.messageId).sort()).to.equal(HOSTILE.map(([, stored]) => stored).sort());

                for (const email of emails) {
                    const id = email.messageId;
                    const one = `${base}/v1/emails/${encodeURIComponent(id)}`;
                    expect(email.rawUrl, id).to.equal(`/v1/emails/${encodeURIComponent(id)}/raw`);

                    // GET one and its headers, with plain fetch and with curl.
                    const got = await fetch(one, { headers: auth });
                    expect(got.status, id).to.equal(200);
                    expect((await got.json() as EmailJson).messageId, id).to.equal(id);
                    const curled = await curl(one, [`Authorization: Bearer ${key}`]);
                    expect(curled.status, id).to.equal(200);
                    expect((JSON.parse(curled.body) as EmailJson).messageId, id).to.equal(id);

                    const headers = await fetch(`${one}/headers`, { headers: auth });
                    expect(headers.status, id).to.equal(200);
                    const fields = (await headers.json() as { headers: { name: string; value: string }[] }).headers;
                    const source = HOSTILE.find(([, stored]) => stored === id)![0];
                    expect(fields.find((f) => f.name === 'Message-ID'), id).to.equal({ name: 'Message-ID', value: `<${source}>` });

                    // The raw message and the attachment, with plain fetch and with curl.
                    expect(await fetchDownload(base, email.rawUrl, auth), id).to.equal(hostileMessage(source).toString('latin1'));
                    const [attachment] = email.attachments;
                    expect(attachment.filename, id).to.startWith('0-');
                    expect(await fetchDownload(base, attachment.url, auth), id).to.equal(ATTACHMENT.trimEnd());

                    for (const url of [email.rawUrl, attachment.url]) {
                        const redirect = await curl(`${base}${url}`, [`Authorization: Bearer ${key}`]);
                        expect(redirect.status, `${id} ${url}`).to.equal(302);
                        const target = await curl(new URL(redirect.location, base).href);
                        expect(target.status, `${id} ${url}`).to.equal(200);
                        expect(target.body.length, `${id} ${url}`).to.be.above(0);
                    }
                }

                // The header fields over real SMTP and HTTP.
                const headers = await fetch(`${base}/v1/emails/headers-test%40example.test/headers`, { headers: auth });
                expect(headers.status).to.equal(200);
                expect(await headers.json()).to.equal({ headers: HEADERS_EXPECTED });
                expect((await fetch(`${base}/v1/emails/headers-test%40example.test/headers`)).status).to.equal(401);
                expect((await fetch(`${base}/v1/emails/no-such%40example.test/headers`, { headers: auth })).status).to.equal(404);
            }
            finally {
                transport?.close();
                if (service && service.child.exitCode === null && service.child.signalCode === null) {
                    service.child.kill('SIGTERM');
                    const limit = setTimeout(() => service!.child.kill('SIGKILL'), PROCESS_LIMIT_MS);
                    await service.exited;
                    clearTimeout(limit);
                }

                await Fs.rm(dataDir, { recursive: true, force: true });
            }
        });
    }
});
