import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { deliverRaw } from '../helpers/raw-smtp';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// docs/guarantees.md, "Large emails in answers": a message whose text was control characters
// serialised to 5.5 times its size (each one is `\u0001` in JSON), in every GET, list page,
// long-poll answer and webhook POST; a receiver answering 413 was sent the whole of it on
// every retry. Control characters are dropped at ingest, answers share one serialisation
// within the memory budget, and a webhook past 1 MiB is sent without its bodies.

const LIMIT_MS = 30_000;

/** `lines` lines of 998 bytes of C0 control characters (none a line break), between two lines of text. */
function controlCharacterMessage(messageId: string, lines: number): Buffer {
    const controls = Buffer.alloc(998);
    for (let i = 0; i < controls.length; i++) {
        // 0x01..0x08, 0x0b, 0x0c, 0x0e..0x1f: every C0 control but NUL, TAB, LF and CR.
        const pool = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31];
        controls[i] = pool[i % pool.length]!;
    }

    const head = Buffer.from(`From: a@example.test\r\nTo: large@example.test\r\nSubject: controls\r\nMessage-ID: <${messageId}>\r\n\r\nYour code is 482913.\r\n`);
    const body = Buffer.concat(Array.from({ length: lines }, () => Buffer.concat([controls, Buffer.from('\r\n')])));
    return Buffer.concat([head, body, Buffer.from('the end\r\n')]);
}

describe('large emails in answers (standalone service)', () => {
    let service: StandaloneService;
    let hook: WebhookReceiver;

    before(async () => {
        // A receiver that refuses large bodies, as many do: every POST is retried.
        hook = await startWebhookReceiver(() => ({ status: 413 }));
        service = await startStandalone({ env: { INBOX_CAPTURE_WEBHOOK_URL: hook.url(), INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '200' } });
    });

    after(async () => {
        await service.stop();
        await hook.close();
    });

    const deliver = async (raw: Buffer) => expect((await deliverRaw(service.smtpPort, raw, ['large@example.test'])).code).to.equal(250);

    const get = async (path: string) => {
        const res = await fetch(`${service.baseUrl}${path}`, { headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(res.status, path).to.equal(200);
        return Buffer.from(await res.arrayBuffer());
    };

    it('answers an email of control characters in less than its size everywhere, and keeps every byte in the raw download', async () => {
        const raw = controlCharacterMessage('controls@example.test', 3 * 1024);
        const polls = [1, 2, 3].map(() => get('/v1/emails?inbox=large&wait=true&timeout=20'));
        await deliver(raw);
        const answers = [...await Promise.all(polls), ...await Promise.all([1, 2, 3, 4].map(() => get('/v1/emails/controls%40example.test'))), await get('/v1/emails?inbox=large')];
        const largest = Math.max(...answers.map((a) => a.length));
        // Before: each answer was about 5.5 times the message.
        expect(largest, `largest answer ${largest} bytes for a message of ${raw.length}`).to.be.below(raw.length / 100);

        const email = JSON.parse(answers[3]!.toString()) as { body: string; codes: string[]; rawUrl: string };
        expect(email.body).to.equal(`Your code is 482913.\n${'\n'.repeat(3 * 1024)}the end\n`);
        expect(email.codes).to.equal(['482913']);
        const download = await fetch(`${service.baseUrl}${email.rawUrl}`, { headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(Buffer.from(await download.arrayBuffer()).equals(raw)).to.be.true();

        const posts = await hook.waitFor(2, LIMIT_MS);
        expect(Math.max(...posts.map((p) => p.body.length))).to.be.below(raw.length / 100);
    });

    it('sends a webhook past 1 MiB without its bodies, "truncated": true beside "event", on every retry', async () => {
        const text = 'All work and no play makes Jack a dull boy. '.repeat(40_000);
        const before = hook.received.length;
        await deliver(Buffer.from(`From: a@example.test\r\nTo: large@example.test\r\nSubject: long\r\nMessage-ID: <long@example.test>\r\n\r\n${text.replace(/(.{900})/g, '$1\r\n')}\r\n`));
        const posts = (await hook.waitFor(before + 6, LIMIT_MS)).slice(before).filter((p) => p.body.includes('long@example.test'));
        expect(posts.length).to.be.at.least(2);
        for (const post of posts) {
            expect(post.body.length).to.be.below(1024 * 1024);
            expect(post.body.toString()).to.startWith('{"event":"email.received","truncated":true,"email":{');
            const { email } = JSON.parse(post.body.toString()) as { email: { body: string; htmlBody: string; subject: string } };
            expect([email.body, email.htmlBody, email.subject]).to.equal(['', '', 'long']);
        }

        // The API answers it whole.
        const whole = JSON.parse((await get('/v1/emails/long%40example.test')).toString()) as { body: string };
        expect(whole.body.length).to.be.above(text.length);
    });
});
