import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { EmailView } from '../../../../adapters/hapi';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import { startWebhookReceiver } from '../../../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const MAX_MESSAGE_BYTES = 50_000;
const RAW = { 'content-type': 'message/rfc822' };

describe('POST /v1/emails', () => {
    let p: ProvisionedServer;

    before(async () => {
        p = await provisionServer({ plugin: { maxMessageBytes: MAX_MESSAGE_BYTES } });
    });

    after(() => p.cleanup());

    const get = async (messageId: string): Promise<EmailView> => {
        const res = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(messageId)}`, headers: p.auth });
        expect(res.statusCode).to.equal(200);
        return JSON.parse(res.payload) as EmailView;
    };

    it('stores a raw message for the envelope of `to`, not its headers, as SMTP mail is stored', async () => {
        const raw = 'From: App <app@x.test>\r\nTo: header-only@x.test\r\nSubject: Your code\r\nMessage-ID: <raw-1@x.test>\r\n\r\nYour code is 482913. Go to https://app.example/verify?t=1\r\n';
        const res = await p.server.inject({ method: 'POST', url: '/v1/emails?to=raw-a@x.test,Raw B <raw-b@x.test>', headers: { ...p.auth, ...RAW }, payload: raw });
        expect(res.statusCode).to.equal(201);
        const { emails } = JSON.parse(res.payload) as { emails: Array<{ messageId: string; inbox: string }> };
        expect(emails.map((e) => e.inbox).sort()).to.equal(['raw-a', 'raw-b']);
        const email = await get(emails[0]!.messageId);
        expect(email.subject).to.equal('Your code');
        expect(email.sender).to.equal('app@x.test');
        expect(email.codes).to.equal(['482913']);
        expect(email.links.map((l) => l.href)).to.equal(['https://app.example/verify?t=1']);
        // The bytes stored are the bytes sent.
        const download = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(emails[0]!.messageId)}/raw`, headers: p.auth });
        const stored = await p.server.inject({ url: download.headers.location as string });
        expect(stored.payload).to.equal(raw);
        const none = await p.server.inject({ url: '/v1/emails?inbox=header-only', headers: p.auth });
        expect(JSON.parse(none.payload).emails).to.equal([]);
    });

    it('defaults the envelope of a raw message to its To and Cc', async () => {
        const raw = 'From: app@x.test\r\nTo: to-a@x.test, To B <to-b@x.test>\r\nCc: cc-c@x.test\r\nBcc: never@x.test\r\nSubject: default\r\n\r\nhi\r\n';
        const res = await p.server.inject({ method: 'POST', url: '/v1/emails', headers: { ...p.auth, ...RAW }, payload: raw });
        expect(res.statusCode).to.equal(201);
        expect(JSON.parse(res.payload).emails.map((e: { inbox: string }) => e.inbox).sort()).to.equal(['cc-c', 'to-a', 'to-b']);
    });

    it('builds the JSON form into a message: text, HTML, headers, tags and a base64 attachment', async () => {
        const res = await p.server.inject({
            method: 'POST', url: '/v1/emails', headers: p.auth,
            payload: {
                from: 'Shop <shop@x.test>',
                to: ['json-a@x.test'],
                cc: 'json-c@x.test',
                subject: 'Receipt',
                text: 'Thanks. Code 777123.',
                html: '<p>Thanks. <a href="https://shop.example/r/1">Receipt</a></p>',
                headers: { 'X-Tags': 'receipt, shop' },
                attachments: [{ filename: 'receipt.csv', contentType: 'text/csv', contentBase64: Buffer.from('item,price\nmug,9\n').toString('base64') }]
            }
        });
        expect(res.statusCode).to.equal(201);
        const { emails } = JSON.parse(res.payload) as { emails: Array<{ messageId: string; inbox: string }> };
        expect(emails.map((e) => e.inbox).sort()).to.equal(['json-a', 'json-c']);
        const email = await get(emails.find((e) => e.inbox === 'json-a')!.messageId);
        expect(email.subject).to.equal('Receipt');
        expect(email.sender).to.equal('shop@x.test');
        expect(email.body).to.contain('Code 777123.');
        expect(email.htmlBody).to.contain('https://shop.example/r/1');
        expect(email.codes).to.equal(['777123']);
        expect(email.attachments.map((a) => [a.filename, a.contentType, a.size])).to.equal([['0-receipt.csv', 'text/csv', 17]]);
        const link = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(email.messageId)}/attachments/0-receipt.csv`, headers: p.auth });
        expect((await p.server.inject({ url: link.headers.location as string })).payload).to.equal('item,price\nmug,9\n');
        const headers = await p.server.inject({ url: `/v1/emails/${encodeURIComponent(email.messageId)}/headers`, headers: p.auth });
        expect(JSON.parse(headers.payload).headers).to.contain({ name: 'X-Tags', value: 'receipt, shop' });
    });

    it('answers 413 TOO_LARGE for a message over the size cap, raw or built, and stores nothing', async () => {
        const big = `From: a@x.test\r\nTo: big@x.test\r\nSubject: big\r\n\r\n${'x'.repeat(MAX_MESSAGE_BYTES)}\r\n`;
        const raw = await p.server.inject({ method: 'POST', url: '/v1/emails', headers: { ...p.auth, ...RAW }, payload: big });
        expect(raw.statusCode).to.equal(413);
        expect(JSON.parse(raw.payload)).to.equal({ error: 'TOO_LARGE' });
        const built = await p.server.inject({ method: 'POST', url: '/v1/emails', headers: p.auth, payload: { from: 'a@x.test', to: 'big@x.test', subject: 'big', text: 'x'.repeat(MAX_MESSAGE_BYTES) } });
        expect(built.statusCode).to.equal(413);
        expect(JSON.parse(built.payload)).to.equal({ error: 'TOO_LARGE' });
        // Past even what the JSON form of a message at the cap could take: refused while it is read.
        const huge = await p.server.inject({ method: 'POST', url: '/v1/emails', headers: { ...p.auth, ...RAW }, payload: 'x'.repeat(MAX_MESSAGE_BYTES * 2 + 70_000) });
        expect(huge.statusCode).to.equal(413);
        expect(JSON.parse(huge.payload)).to.equal({ error: 'TOO_LARGE' });
        const none = await p.server.inject({ url: '/v1/emails?inbox=big', headers: p.auth });
        expect(JSON.parse(none.payload).emails).to.equal([]);
    });

    it('refuses a body it cannot take: bad JSON, a missing field, no recipient, another media type', async () => {
        const cases: Array<[Record<string, string>, string, number, string]> = [
            [{}, '{"from":', 400, 'VALIDATION_ERROR'],
            [{}, JSON.stringify({ from: 'a@x.test', subject: 's' }), 400, 'VALIDATION_ERROR'],
            [{}, JSON.stringify({ from: 'a@x.test', to: 'b@x.test', subject: 's', attachments: [{ filename: 'a', contentBase64: 'not base64!' }] }), 400, 'VALIDATION_ERROR'],
            [RAW, 'From: a@x.test\r\nSubject: nobody\r\n\r\nhi\r\n', 400, 'VALIDATION_ERROR'],
            [RAW, '', 400, 'VALIDATION_ERROR'],
            [{ 'content-type': 'text/plain' }, 'hello', 415, 'UNSUPPORTED_MEDIA_TYPE']
        ];
        for (const [headers, payload, status, code] of cases) {
            const res = await p.server.inject({ method: 'POST', url: '/v1/emails', headers: { 'content-type': 'application/json', ...p.auth, ...headers }, payload });
            expect(res.statusCode, payload).to.equal(status);
            expect(JSON.parse(res.payload)).to.equal({ error: code });
        }
    });

    it('tells the webhooks, as for SMTP mail', async () => {
        const hook = await startWebhookReceiver();
        const q = await provisionServer({ plugin: { webhooks: [{ url: hook.url('/h') }], webhookDelivery: { pollIntervalMs: 50 } } });
        try {
            const res = await q.server.inject({ method: 'POST', url: '/v1/emails', headers: q.auth, payload: { from: 'a@x.test', to: 'hooked@x.test', subject: 'hooked', text: 'hi' } });
            expect(res.statusCode).to.equal(201);
            const [received] = await hook.waitFor(1);
            const body = JSON.parse(received!.body.toString());
            expect(body.email.inbox).to.equal('hooked');
            expect(body.email.subject).to.equal('hooked');
        }
        finally {
            await q.cleanup();
            await hook.close();
        }
    });
});
