import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Http from 'node:http';
import { createEmailJsonSource } from '../../../adapters/hapi/email-json';
import { toEmailView } from '../../../adapters/hapi/email-view';
import { SLICE_CHARS } from '../../../adapters/hapi/json-chunks';
import { isInboxCaptureError } from '../../../lib/errors';
import { createMessageBudget } from '../../../lib/util/message-budget';
import type { EmailRecord } from '../../../lib/types';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

function record(body: string, rawKey = 'k1'): EmailRecord {
    return {
        messageId: 'm@x', sourceId: 'm@x', inbox: 'box', sender: 's@x', senderName: '', recipient: 'box@x', subject: 's',
        body, htmlBody: '', receivedAt: 1_750_000_000_000, rawKey, rawSize: 1, rawSha256: 'a'.repeat(64), attachments: [], links: [], codes: [], tags: [], seen: false
    };
}

describe('email-json', () => {

    describe('createEmailJsonSource()', () => {

        it('builds an email\'s JSON once for concurrent answers, its bytes reserved once until the last one releases', async () => {
            const budget = createMessageBudget(64 * 1024 * 1024);
            const source = createEmailJsonSource(budget, '/mail');
            const large = record('x'.repeat(3 * SLICE_CHARS));
            const held = await Promise.all([1, 2, 3, 4].map(() => source.acquire(large)));
            const [first] = held;
            expect(held.every((h) => h.json === first!.json)).to.be.true();
            expect(Buffer.concat(first!.json.chunks).toString()).to.equal(JSON.stringify(toEmailView(large, '/mail')));
            expect(budget.heldBytes).to.equal(first!.json.bytes);

            held.slice(0, 3).forEach((h) => h.release());
            held[0]!.release();
            expect(budget.heldBytes).to.equal(first!.json.bytes);
            held[3]!.release();
            expect(budget.heldBytes).to.equal(0);

            // Released: the next answer builds it again.
            const again = await source.acquire(large);
            expect(again.json).to.not.shallow.equal(first!.json);
            again.release();
        });

        it('builds a replaced copy (another raw blob) anew', async () => {
            const source = createEmailJsonSource(createMessageBudget(1024 * 1024), '');
            const a = await source.acquire(record('old', 'k1'));
            const b = await source.acquire(record('new', 'k2'));
            expect(b.json.view.body).to.equal('new');
            a.release();
            b.release();
        });

        it('builds a copy whose tags changed anew, while the JSON of its old tags is still held', async () => {
            const source = createEmailJsonSource(createMessageBudget(1024 * 1024), '');
            const a = await source.acquire(record('same'));
            const b = await source.acquire({ ...record('same'), tags: ['reviewed'] });
            expect(a.json.view.tags).to.equal([]);
            expect(b.json.view.tags).to.equal(['reviewed']);
            a.release();
            b.release();
        });

        it('fails with BUSY, holding nothing, when the budget cannot hold the JSON', async () => {
            const budget = createMessageBudget(4 * SLICE_CHARS);
            // An SMTP session in DATA holds most of it.
            const other = budget.reserve(3 * SLICE_CHARS)!;
            const source = createEmailJsonSource(budget, '');
            const err = await expect(source.acquire(record('y'.repeat(2 * SLICE_CHARS)))).to.reject();
            expect(isInboxCaptureError(err, 'BUSY')).to.be.true();
            expect(budget.heldBytes).to.equal(3 * SLICE_CHARS);
            other.release();
            const fits = await source.acquire(record('y'.repeat(2 * SLICE_CHARS)));
            fits.release();
            expect(budget.heldBytes).to.equal(0);
        });
    });

    describe('through the plugin', () => {
        let p: ProvisionedServer;
        let port: number;
        /** Text of the large email: its JSON alone takes most of the budget. */
        const BODY_CHARS = 4 * SLICE_CHARS;

        before(async () => {
            p = await provisionServer({ listen: true, plugin: { maxMessageBytesInFlight: 6 * SLICE_CHARS } });
            port = (p.server.listener.address() as { port: number }).port;
            await p.api.ingestForApi(buildMail({ messageId: 'large@x', text: 'z'.repeat(BODY_CHARS) }), { recipients: ['large@x'] });
        });

        after(() => p.cleanup());

        // A GET whose body is not read until `go`: its answer stays in flight meanwhile.
        const held = (path: string) => new Promise<Http.IncomingMessage>((resolve, reject) => {
            Http.get({ port, path, headers: p.auth, agent: false }, (res) => {
                res.pause();
                resolve(res);
            }).on('error', reject);
        });

        const bodyOf = (res: Http.IncomingMessage) => new Promise<Buffer>((resolve) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
            res.resume();
        });

        it('answers four GETs of one large email at once within a budget that holds its JSON only once', async () => {
            const answers = [];
            // One after another, each still being sent when the next one asks.
            for (let i = 0; i < 4; i++) {
                answers.push(await held('/v1/emails/large%40x'));
            }

            expect(answers.map((res) => res.statusCode)).to.equal([200, 200, 200, 200]);
            const bodies = await Promise.all(answers.map(bodyOf));
            expect(bodies.every((b) => b.equals(bodies[0]!))).to.be.true();
            expect((JSON.parse(bodies[0]!.toString()) as { body: string }).body.length).to.be.at.least(BODY_CHARS);
            expect(p.api.capture.messageBudget.heldBytes).to.equal(0);
        });

        it('shares it with a list page and a long-poll\'s answer too, and answers 503 with Retry-After when the budget is held elsewhere', async () => {
            const answers = [await held('/v1/emails/large%40x'), await held('/v1/emails?inbox=large'), await held('/v1/emails?inbox=large&wait=true&timeout=1')];
            expect(answers.map((res) => res.statusCode)).to.equal([200, 200, 200]);
            await Promise.all(answers.map(bodyOf));

            const other = p.api.capture.messageBudget.reserve(5 * SLICE_CHARS)!;
            try {
                const res = await p.server.inject({ url: '/v1/emails/large%40x', headers: p.auth });
                expect(res.statusCode).to.equal(503);
                expect(res.result).to.equal({ error: 'SERVICE_UNAVAILABLE' });
                expect(res.headers['retry-after']).to.equal('5');
            }
            finally {
                other.release();
            }

            expect(p.api.capture.messageBudget.heldBytes).to.equal(0);
        });
    });
});
