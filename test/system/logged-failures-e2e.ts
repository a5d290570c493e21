import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { deliverRaw } from '../helpers/raw-smtp';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';
import { freePort } from '../helpers/net';
import { waitUntil } from '../helpers/wait-until';

const { expect } = Code;
const { describe, it, afterEach } = exports.lab = Lab.script();

// docs/design.md, "Errors": a 500 tells the client nothing, and its details go to the server
// log. A missing blob file and a corrupted SQLite file both answered a clean 500 with
// nothing on the standalone service's stderr: the plugin logged on the request's `app`
// channel, which the service did not listen to.

/** Over the 256 KiB the embedded store keeps in SQLite, so the raw message is a file of its own. */
const LARGE_BODY = 'x'.repeat(400 * 1024);

async function deliver(port: number, raw: string, recipient: string): Promise<void> {
    expect((await deliverRaw(port, Buffer.from(raw), [recipient])).code).to.equal(250);
}

function message(messageId: string, recipient: string, body: string): string {
    return `From: a@example.test\r\nTo: ${recipient}\r\nSubject: logged\r\nMessage-ID: <${messageId}>\r\n\r\n${body}\r\n`;
}

async function filesUnder(dir: string): Promise<string[]> {
    const entries = await Fs.readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => Path.join(e.parentPath, e.name));
}

describe('every 500 in the server log (standalone service)', () => {
    let service: StandaloneService | undefined;

    afterEach(async () => {
        await service?.stop();
        service = undefined;
    });

    const get = (path: string, key: string) => fetch(`${service!.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` }, redirect: 'manual' });

    it('answers 500 for a raw message whose blob file is gone, and writes the cause to stderr', async () => {
        service = await startStandalone();
        const { apiKey, smtpPort, dataDir, spawned } = service;
        await deliver(smtpPort, message('gone@example.test', 'logged@example.test', LARGE_BODY), 'logged@example.test');
        const [blob, ...others] = await filesUnder(Path.join(dataDir, 'blobs'));
        expect(others).to.equal([]);
        await Fs.rm(blob!);

        const redirect = await get('/v1/emails/gone%40example.test/raw', apiKey);
        expect(redirect.status).to.equal(302);
        const download = await fetch(`${service.baseUrl}${redirect.headers.get('location')!}`);
        expect(download.status).to.equal(500);
        expect(await download.json()).to.equal({ error: 'INTERNAL_ERROR' });
        await waitUntil('the cause is logged', () => spawned.stderr().includes('is missing from the blob store'), { limitMs: 5_000 });
        expect(spawned.stderr()).to.match(/GET \/v1\/blobs\/[^ ]+ failed: Error: blob [0-9a-f]+\/raw\.eml is missing from the blob store, yet a stored email references it/);

        // The header fields are read from the same file.
        const headers = await get('/v1/emails/gone%40example.test/headers', apiKey);
        expect(headers.status).to.equal(500);
        expect(await headers.json()).to.equal({ error: 'INTERNAL_ERROR' });
        await waitUntil('the cause is logged', () => spawned.stderr().includes('/headers failed'), { limitMs: 5_000 });
        expect(spawned.stderr()).to.include('GET /v1/emails/gone@example.test/headers failed: InboxCaptureError: the raw message of gone@example.test is missing');
    });

    it('answers 500 when the SQLite file is corrupted under it, and writes the cause to stderr', async () => {
        service = await startStandalone();
        const { apiKey, smtpPort, dataDir, spawned } = service;
        await deliver(smtpPort, message('corrupt@example.test', 'corrupt@example.test', 'a small one'), 'corrupt@example.test');

        // The records are in the write-ahead log until a checkpoint: every page after the first
        // (its header page) is overwritten, as a failing disk might.
        const wal = Path.join(dataDir, 'inbox-capture.sqlite-wal');
        const { size } = await Fs.stat(wal);
        const frame = 24 + 4096;
        const file = await Fs.open(wal, 'r+');
        try {
            for (let at = 32 + frame; at + frame <= size; at += frame) {
                await file.write(Buffer.alloc(4096, 0x55), 0, 4096, at + 24);
            }
        }
        finally {
            await file.close();
        }

        const res = await get('/v1/emails?inbox=corrupt', apiKey);
        expect(res.status).to.equal(500);
        expect(await res.json()).to.equal({ error: 'INTERNAL_ERROR' });
        await waitUntil('the cause is logged', () => spawned.stderr().includes('GET /v1/emails failed'), { limitMs: 5_000 });
        expect(spawned.stderr()).to.match(/GET \/v1\/emails failed: .*SQLITE_(NOTADB|CORRUPT)/);
    });
});

describe('every refused relay in the server log (standalone service)', () => {
    let service: StandaloneService | undefined;
    let sink: SmtpSink | undefined;

    afterEach(async () => {
        await service?.stop();
        await sink?.close();
        service = undefined;
        sink = undefined;
    });

    const release = (messageId: string) => fetch(`${service!.baseUrl}/v1/emails/${encodeURIComponent(messageId)}/release`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service!.apiKey}` }
    });

    it('logs a release the relay refuses with the relay\'s reply, and one it cannot reach with the cause, never the password', async () => {
        sink = await startSmtpSink();
        sink.refuseNext(554, 1);
        service = await startStandalone({ env: { INBOX_CAPTURE_RELAY_URL: sink.url(), INBOX_CAPTURE_RELAY_ALLOW: '*@example.org' } });
        await deliver(service.smtpPort, message('refused@example.test', 'alice@example.org', 'release me'), 'alice@example.org');
        const res = await release('refused@example.test');
        expect(res.status).to.equal(502);
        expect(await res.json()).to.equal({ error: 'RELAY_FAILED' });
        await waitUntil('the refusal is logged', () => service!.spawned.stderr().includes('Refused by the test relay'), { limitMs: 5_000 });
        expect(service.spawned.stderr()).to.match(/POST \/v1\/emails\/refused@example\.test\/release failed: InboxCaptureError: the relay did not take refused@example\.test: .*554 Refused by the test relay/);
        await service.stop();

        const closed = await freePort();
        service = await startStandalone({ env: { INBOX_CAPTURE_RELAY_URL: `smtp://relay-user:s3cret-Pa55@127.0.0.1:${closed}`, INBOX_CAPTURE_RELAY_ALLOW: '*@example.org' } });
        await deliver(service.smtpPort, message('unreachable@example.test', 'alice@example.org', 'release me'), 'alice@example.org');
        const down = await release('unreachable@example.test');
        expect(down.status).to.equal(502);
        await waitUntil('the cause is logged', () => service!.spawned.stderr().includes('ECONNREFUSED'), { limitMs: 15_000 });
        expect(service.spawned.stderr()).to.include(`the relay did not take unreachable@example.test`);
        expect(service.spawned.stderr() + service.spawned.stdout()).to.not.include('s3cret-Pa55');
    });

    it('logs every refused auto-relay attempt with the relay\'s reply', async () => {
        sink = await startSmtpSink();
        sink.refuseNext(451, 1);
        service = await startStandalone({ env: { INBOX_CAPTURE_RELAY_URL: sink.url(), INBOX_CAPTURE_RELAY_ALLOW: '*@example.org', INBOX_CAPTURE_RELAY_AUTO_MATCH: 'subject:logged' } });
        await deliver(service.smtpPort, message('auto@example.test', 'bob@example.org', 'relay me'), 'bob@example.org');
        await waitUntil('the refusal is logged', () => service!.spawned.stderr().includes('Refused by the test relay'), { limitMs: 10_000 });
        expect(service.spawned.stderr()).to.match(/auto-relay of auto@example\.test to bob@example\.org failed; retried with backoff: InboxCaptureError: the relay did not take auto@example\.test: .*451 Refused by the test relay/);
    });
});
