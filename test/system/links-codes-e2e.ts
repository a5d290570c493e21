import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Nodemailer from 'nodemailer';
import { runNode } from '../helpers/child-process';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { startS3, type S3Fixture } from '../helpers/s3';
import { isolatedEnv, postgresS3Env } from '../helpers/service-env';
import { spawnStandalone } from '../helpers/standalone-service';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');

/** Longest wait for the service to start, ms: a hang, not a speed claim. */
const START_LIMIT_MS = 30_000;

/** The sign-up mail as a real sender writes it: a tracked button, the code, a footer. */
const SIGNUP = {
    from: 'Example <noreply@example.test>',
    subject: 'Your Example code is 482913',
    text: [
        'Welcome to Example!',
        '',
        'Your code: 482913.',
        'Or confirm here: https://example.test/confirm?token=t0k3n&utm=mail',
        '',
        'Questions? Call +1 (555) 010-2024 or write to support@example.test.',
        '© 2026 Example Inc.'
    ].join('\n'),
    html: '<html><body><h1>Welcome</h1><p>Your code: <b>482913</b></p>' +
        '<p><A HREF="https://click.example.test/ls/click?upn=abc&amp;u=1" class=button>Confirm <span>my</span>\n account</A></p>' +
        '<p><a href=\'mailto:support@example.test\'>Support</a> &middot; <a href="#top">Top</a></p>' +
        '<!-- <a href="https://example.test/hidden">hidden</a> --><p>&copy; 2026 Example Inc.</p></body></html>'
};

/** Its links and codes (docs/api.md, "Links and codes"). */
const EXPECTED = {
    links: [
        { href: 'https://click.example.test/ls/click?upn=abc&u=1', text: 'Confirm my account' },
        { href: 'mailto:support@example.test', text: 'Support' },
        { href: 'https://example.test/confirm?token=t0k3n&utm=mail', text: 'https://example.test/confirm?token=t0k3n&utm=mail' }
    ],
    codes: ['482913']
};

interface EmailJson {
    messageId: string;
    links: { href: string; text: string }[];
    codes: string[];
}

/**
 * Starts `examples/standalone.js` with `env`, creates a key with the CLI, sends the
 * sign-up mail by SMTP and reads it back from the list and by id; stops the service by its handle.
 */
async function signUpRoundTrip(env: NodeJS.ProcessEnv): Promise<{ listed: EmailJson; one: EmailJson }> {
    // On free ports, started again if one was taken meanwhile.
    const spawned = await spawnStandalone(env, START_LIMIT_MS);
    const transport = Nodemailer.createTransport({ host: '127.0.0.1', port: spawned.smtpPort, secure: false, ignoreTLS: true });
    try {
        const created = await runNode([BIN, 'keys', 'create', 'links-codes'], { cwd: ROOT, env });
        expect(created.code, created.stderr).to.equal(0);
        const headers = { authorization: `Bearer ${created.stdout.trim()}` };
        const base = spawned.base;

        const info = await transport.sendMail({ ...SIGNUP, to: 'signup-e2e@example.test' });
        expect(info.response).to.startWith('250');

        const listed = await fetch(`${base}/v1/emails?inbox=signup-e2e`, { headers });
        expect(listed.status).to.equal(200);
        const [email] = (await listed.json() as { emails: EmailJson[] }).emails;
        const one = await fetch(`${base}/v1/emails/${encodeURIComponent(email.messageId)}`, { headers });
        expect(one.status).to.equal(200);
        return { listed: email, one: await one.json() as EmailJson };
    }
    finally {
        transport.close();
        spawned.child.kill('SIGTERM');
        const limit = setTimeout(() => spawned.child.kill('SIGKILL'), START_LIMIT_MS);
        await spawned.exited;
        clearTimeout(limit);
    }
}

describe('links and codes end to end (standalone service, real SMTP)', () => {
    let postgres: PostgresServer;
    let s3: S3Fixture;
    const dirs: string[] = [];

    before(async () => {
        postgres = await startPostgres();
        s3 = await startS3();
    });

    after(async () => {
        await Promise.all(dirs.map((dir) => Fs.rm(dir, { recursive: true, force: true })));
        await s3?.stop();
        await postgres?.stop();
    });

    it('answers the sign-up mail\'s links and codes in the list and by id, on SQLite', async () => {
        const dataDir = await tempDir('links-e2e');
        dirs.push(dataDir);
        const { listed, one } = await signUpRoundTrip(isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir }));
        expect({ links: listed.links, codes: listed.codes }).to.equal(EXPECTED);
        expect({ links: one.links, codes: one.codes }).to.equal(EXPECTED);
    });

    it('answers the sign-up mail\'s links and codes in the list and by id, on Postgres + S3', async () => {
        const dataDir = await tempDir('links-e2e-pg');
        dirs.push(dataDir);
        const { listed, one } = await signUpRoundTrip(postgresS3Env(await postgres.createDatabase(), s3, { INBOX_CAPTURE_DATA_DIR: dataDir }));
        expect({ links: listed.links, codes: listed.codes }).to.equal(EXPECTED);
        expect({ links: one.links, codes: one.codes }).to.equal(EXPECTED);
    });
});
