import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { readAll } from '../../../helpers/streams';
import { startSmtpSink, startTlsAuthSink, type SmtpSink } from '../../../helpers/smtp-sink';
import { freePort } from '../../../helpers/net';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** A message with what a careless relay would change: a leading dot, 8-bit bytes, long and trailing-space lines. */
function rawMessage(id: string, to: string): Buffer {
    return Buffer.concat([
        Buffer.from(`From: Shop <orders@shop.test>\r\nTo: ${to}\r\nSubject: Your order\r\nMessage-ID: <${id}>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`),
        Buffer.from('.a line that starts with a dot\r\n..two dots\r\nwith a trailing space \r\nGr\xfc\xdfe in Latin-1, not UTF-8\r\n', 'latin1'),
        Buffer.from('Grüße, 東京\r\n', 'utf8'),
        Buffer.from(`${'x'.repeat(990)}\r\n.\r\nend\r\n`)
    ]);
}

async function storedRaw(p: ProvisionedServer, messageId: string): Promise<Buffer> {
    const record = (await p.api.capture.getEmail(messageId))!;
    return readAll((await p.api.capture.blobStore.get(record.rawKey))!);
}

describe('routes/release', () => {

    describe('with a plain relay', () => {
        let sink: SmtpSink;
        let p: ProvisionedServer;

        before(async () => {
            sink = await startSmtpSink();
            p = await provisionServer({ plugin: { relay: { url: sink.url(), allow: ['*@example.org', 'Bob@Example.net'] } } });
        });

        after(async () => {
            await p?.cleanup();
            await sink?.close();
        });

        const release = (messageId: string, payload?: unknown) => p.server.inject({
            method: 'POST',
            url: `/v1/emails/${encodeURIComponent(messageId)}/release`,
            headers: p.auth,
            ...(payload === undefined ? {} : { payload: payload as object })
        });

        it('sends the stored raw message byte for byte to the email\'s recipient, with its sender as MAIL FROM', async () => {
            const raw = rawMessage('release-1@shop.test', 'alice@example.org');
            await p.api.ingestForApi(raw, { recipients: ['alice@example.org'] });
            const res = await release('release-1@shop.test');
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ released: true, to: ['alice@example.org'] });
            const sunk = sink.received.at(-1)!;
            expect(sunk.from).to.equal('orders@shop.test');
            expect(sunk.to).to.equal(['alice@example.org']);
            expect(sunk.raw.equals(await storedRaw(p, 'release-1@shop.test'))).to.be.true();
            expect(sunk.raw.equals(raw)).to.be.true();
        });

        it('sends to the given addresses when they are all allowed (domains and addresses, case-insensitive)', async () => {
            await p.api.ingestForApi(rawMessage('release-2@shop.test', 'qa@capture.test'), { recipients: ['qa@capture.test'] });
            const res = await release('release-2@shop.test', { to: ['carol@EXAMPLE.org', 'bob@example.net'] });
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ released: true, to: ['carol@EXAMPLE.org', 'bob@example.net'] });
            // smtp-server lowercases the domains it is given.
            expect(sink.received.at(-1)!.to.map((a) => a.toLowerCase())).to.equal(['carol@example.org', 'bob@example.net']);
        });

        it('answers 400 RECIPIENT_NOT_ALLOWED and sends nothing when any address is not allowed, the default recipient included', async () => {
            await p.api.ingestForApi(rawMessage('release-3@shop.test', 'qa@capture.test'), { recipients: ['qa@capture.test'] });
            const before = sink.received.length;
            for (const payload of [undefined, { to: ['alice@example.org', 'mallory@evil.test'] }, { to: ['bob@sub.example.org'] }, { to: ['bobby@example.net'] }]) {
                const res = await release('release-3@shop.test', payload);
                expect(res.statusCode, JSON.stringify(payload)).to.equal(400);
                expect(JSON.parse(res.payload)).to.equal({ error: 'RECIPIENT_NOT_ALLOWED' });
            }

            expect(sink.received.length).to.equal(before);
        });

        it('refuses percent-hack, bang-path, quoted and source-routed local parts at an allowed domain, asked for or captured, and sends nothing', async () => {
            await p.api.ingestForApi(rawMessage('release-route@shop.test', 'qa@capture.test'), { recipients: ['qa@capture.test'] });
            const before = sink.received.length;
            for (const to of ['evil%evil.test@example.org', 'evil!evil.test@example.org', '"evil@evil.test"@example.org']) {
                const res = await release('release-route@shop.test', { to: [to] });
                expect(res.statusCode, to).to.equal(400);
                expect(JSON.parse(res.payload), to).to.equal({ error: to.startsWith('"') ? 'VALIDATION_ERROR' : 'RECIPIENT_NOT_ALLOWED' });
            }

            // The same address captured over SMTP, released to its own recipient (no `to`).
            await p.api.ingestForApi(rawMessage('release-route-2@shop.test', 'evil%evil.test@example.org'), { recipients: ['evil%evil.test@example.org'] });
            const res = await release('release-route-2@shop.test');
            expect(res.statusCode).to.equal(400);
            expect(JSON.parse(res.payload)).to.equal({ error: 'RECIPIENT_NOT_ALLOWED' });
            expect(sink.received.length).to.equal(before);
        });

        it('answers 502 RELAY_FAILED when the relay refuses the message', async () => {
            await p.api.ingestForApi(rawMessage('release-4@shop.test', 'alice@example.org'), { recipients: ['alice@example.org'] });
            sink.refuseNext(554);
            const res = await release('release-4@shop.test');
            expect(res.statusCode).to.equal(502);
            expect(JSON.parse(res.payload)).to.equal({ error: 'RELAY_FAILED' });
        });

        it('answers 404 NOT_FOUND for an unknown email, 400 VALIDATION_ERROR for a malformed body, 401 before both', async () => {
            expect((await release('nope@shop.test')).statusCode).to.equal(404);
            // Addresses of `to` are checked before the email is looked for.
            expect(JSON.parse((await release('nope@shop.test', { to: ['mallory@evil.test'] })).payload)).to.equal({ error: 'RECIPIENT_NOT_ALLOWED' });
            for (const payload of [{ to: [] }, { to: ['not an address'] }, { to: 'alice@example.org' }, { cc: ['alice@example.org'] }]) {
                const res = await release('nope@shop.test', payload);
                expect(res.statusCode, JSON.stringify(payload)).to.equal(400);
                expect(JSON.parse(res.payload)).to.equal({ error: 'VALIDATION_ERROR' });
            }

            const anonymous = await p.server.inject({ method: 'POST', url: '/v1/emails/nope%40shop.test/release', payload: { to: 'x' } });
            expect(anonymous.statusCode).to.equal(401);
        });

        it('is in the OpenAPI document as releaseEmail', async () => {
            const doc = JSON.parse((await p.server.inject('/openapi.json')).payload) as { paths: Record<string, Record<string, { operationId: string }>> };
            expect(doc.paths['/v1/emails/{messageId}/release']!.post!.operationId).to.equal('releaseEmail');
        });
    });

    describe('with a relay that needs STARTTLS and AUTH', () => {
        let sink: SmtpSink & { ca: Buffer };
        let p: ProvisionedServer;

        before(async () => {
            sink = await startTlsAuthSink({ user: 'relay@user', pass: 'p:ss w0rd' });
            p = await provisionServer({ plugin: { relay: { url: sink.url('relay@user', 'p:ss w0rd'), allow: ['*@example.org'], tls: { ca: sink.ca } } } });
        });

        after(async () => {
            await p?.cleanup();
            await sink?.close();
        });

        it('logs in inside TLS and delivers the same bytes', async () => {
            const raw = rawMessage('release-tls@shop.test', 'alice@example.org');
            await p.api.ingestForApi(raw, { recipients: ['alice@example.org'] });
            const res = await p.server.inject({ method: 'POST', url: '/v1/emails/release-tls%40shop.test/release', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            const sunk = sink.received.at(-1)!;
            expect(sunk).to.include({ secure: true, user: 'relay@user' });
            expect(sunk.raw.equals(raw)).to.be.true();
        });
    });

    describe('without a relay, or with one that cannot be reached', () => {
        it('answers 409 RELAY_NOT_CONFIGURED without a relay, before looking for the email', async () => {
            const p = await provisionServer();
            try {
                const res = await p.server.inject({ method: 'POST', url: '/v1/emails/any%40shop.test/release', headers: p.auth });
                expect(res.statusCode).to.equal(409);
                expect(JSON.parse(res.payload)).to.equal({ error: 'RELAY_NOT_CONFIGURED' });
            }
            finally {
                await p.cleanup();
            }
        });

        it('answers 502 RELAY_FAILED when nothing listens at the relay\'s address', async () => {
            const port = await freePort();
            const p = await provisionServer({ plugin: { relay: { url: `smtp://127.0.0.1:${port}`, allow: ['*@example.org'], timeoutMs: 2_000 } } });
            try {
                await p.api.ingestForApi(rawMessage('release-down@shop.test', 'alice@example.org'), { recipients: ['alice@example.org'] });
                const res = await p.server.inject({ method: 'POST', url: '/v1/emails/release-down%40shop.test/release', headers: p.auth });
                expect(res.statusCode).to.equal(502);
                expect(JSON.parse(res.payload)).to.equal({ error: 'RELAY_FAILED' });
            }
            finally {
                await p.cleanup();
            }
        });
    });
});
