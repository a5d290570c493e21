import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

describe('routes/faults', () => {
    let p: ProvisionedServer;

    before(async () => {
        p = await provisionServer();
    });

    after(() => p.cleanup());

    afterEach(() => p.api.capture.faults.deleteAll());

    const post = (payload: unknown) => p.server.inject({ method: 'POST', url: '/v1/faults', headers: p.auth, payload: payload as object });

    it('POST creates a rule: 201 with its id and remaining uses, defaults applied', async () => {
        const res = await post({ stage: 'rcpt', match: { inbox: 'flaky' }, reply: { code: 451, message: 'Later' }, times: 2 });
        expect(res.statusCode).to.equal(201);
        const rule = res.result as Record<string, unknown>;
        expect(rule.id).to.be.a.string();
        expect(rule).to.include({ stage: 'rcpt', match: { inbox: 'flaky' }, reply: { code: 451, message: 'Later' }, times: 2, remaining: 2, probability: 1 });

        const forever = await post({ stage: 'connect', delayMs: 10 });
        expect(forever.result).to.include({ remaining: null, match: {} });
    });

    it('GET lists the rules oldest first; DELETE one answers deleted, then 404; DELETE all answers the count', async () => {
        const a = (await post({ stage: 'mail', reply: { code: 421 } })).result as { id: string };
        const b = (await post({ stage: 'data', disconnect: true, probability: 0.5 })).result as { id: string };
        const listed = await p.server.inject({ url: '/v1/faults', headers: p.auth });
        expect(listed.statusCode).to.equal(200);
        expect((listed.result as { faults: { id: string }[] }).faults.map((f) => f.id)).to.equal([a.id, b.id]);

        const deleted = await p.server.inject({ method: 'DELETE', url: `/v1/faults/${a.id}`, headers: p.auth });
        expect(deleted.statusCode).to.equal(200);
        expect(deleted.result).to.equal({ deleted: true });
        const again = await p.server.inject({ method: 'DELETE', url: `/v1/faults/${a.id}`, headers: p.auth });
        expect(again.statusCode).to.equal(404);
        expect(JSON.parse(again.payload)).to.equal({ error: 'NOT_FOUND' });

        await post({ stage: 'rcpt', reply: { code: 550 } });
        const all = await p.server.inject({ method: 'DELETE', url: '/v1/faults', headers: p.auth });
        expect(all.result).to.equal({ deleted: 2 });
        expect(await p.api.capture.faults.list()).to.equal([]);
    });

    const malformed: [string, unknown][] = [
        ['no stage', { reply: { code: 451 } }],
        ['an unknown stage', { stage: 'helo', reply: { code: 451 } }],
        ['no effect', { stage: 'rcpt', match: { inbox: 'a' } }],
        ['a reply code under 400', { stage: 'rcpt', reply: { code: 250 } }],
        ['a reply code over 599', { stage: 'rcpt', reply: { code: 600 } }],
        ['a delay over a minute', { stage: 'rcpt', delayMs: 60_001 }],
        ['times 0', { stage: 'rcpt', reply: { code: 451 }, times: 0 }],
        ['a probability over 1', { stage: 'rcpt', reply: { code: 451 }, probability: 1.5 }],
        ['disconnect false alone', { stage: 'rcpt', disconnect: false }],
        ['a match on connect', { stage: 'connect', match: { sender: 'a' }, reply: { code: 421 } }],
        ['a recipient match on mail', { stage: 'mail', match: { recipient: 'a' }, reply: { code: 451 } }],
        ['an inbox match on mail', { stage: 'mail', match: { inbox: 'a' }, reply: { code: 451 } }],
        ['an unknown field', { stage: 'rcpt', reply: { code: 451 }, color: 'red' }],
        ['an empty match field', { stage: 'rcpt', match: { sender: '' }, reply: { code: 451 } }],
        ['not an object', 'rcpt']
    ];
    for (const [what, payload] of malformed) {
        it(`answers 400 VALIDATION_ERROR for ${what}, and stores nothing`, async () => {
            const res = await post(payload);
            expect(res.statusCode).to.equal(400);
            expect(JSON.parse(res.payload)).to.equal({ error: 'VALIDATION_ERROR' });
            expect(await p.api.capture.faults.list()).to.equal([]);
        });
    }

    it('answers 401 before anything else', async () => {
        for (const [method, url] of [['POST', '/v1/faults'], ['GET', '/v1/faults'], ['DELETE', '/v1/faults'], ['DELETE', '/v1/faults/x']]) {
            const res = await p.server.inject({ method: method!, url: url!, payload: method === 'POST' ? { stage: 'nope' } : undefined });
            expect(res.statusCode, `${method} ${url}`).to.equal(401);
        }
    });

    it('a key with an inbox prefix makes, lists and deletes only rules on inboxes inside it; a read-only key changes nothing', async () => {
        const scoped = { authorization: `Bearer ${await p.api.capture.createKey('faults-team-a', { inboxPrefix: 'team-a-' })}` };
        const readOnly = { authorization: `Bearer ${await p.api.capture.createKey('faults-read-only', { readOnly: true })}` };
        const theirs = (await post({ stage: 'rcpt', match: { inbox: 'team-b-signup' }, reply: { code: 451 } })).result as { id: string };

        const made = await p.server.inject({ method: 'POST', url: '/v1/faults', headers: scoped, payload: { stage: 'rcpt', match: { inbox: 'team-a-signup' }, reply: { code: 451 } } });
        expect(made.statusCode).to.equal(201);
        const mine = made.result as { id: string };
        for (const payload of [
            { stage: 'rcpt', match: { inbox: 'team-b-signup' }, reply: { code: 451 } },
            { stage: 'data', match: { recipient: 'team-a-signup@' }, reply: { code: 550 } },
            { stage: 'mail', match: { sender: 'app@' }, reply: { code: 421 } },
            { stage: 'connect', reply: { code: 421 } }
        ]) {
            const refused = await p.server.inject({ method: 'POST', url: '/v1/faults', headers: scoped, payload });
            expect(refused.statusCode, JSON.stringify(payload)).to.equal(403);
            expect(JSON.parse(refused.payload)).to.equal({ error: 'FORBIDDEN' });
        }

        const listed = await p.server.inject({ url: '/v1/faults', headers: scoped });
        expect((listed.result as { faults: { id: string }[] }).faults.map((f) => f.id)).to.equal([mine.id]);
        expect((await p.server.inject({ method: 'DELETE', url: `/v1/faults/${theirs.id}`, headers: scoped })).statusCode).to.equal(404);

        for (const [method, url, payload] of [['POST', '/v1/faults', { stage: 'rcpt', reply: { code: 451 } }], ['DELETE', '/v1/faults', undefined], ['DELETE', `/v1/faults/${mine.id}`, undefined]] as const) {
            const refused = await p.server.inject({ method, url, headers: readOnly, payload });
            expect(refused.statusCode, `${method} ${url}`).to.equal(403);
        }

        expect((await p.server.inject({ url: '/v1/faults', headers: readOnly })).statusCode).to.equal(200);
        expect((await p.server.inject({ method: 'DELETE', url: '/v1/faults', headers: scoped })).result).to.equal({ deleted: 1 });
        expect((await p.api.capture.faults.list()).map((f) => f.id)).to.equal([theirs.id]);
    });

    it('answers 409 FAULT_LIMIT_REACHED past 100 rules for a key prefix; a key without one still makes rules', async () => {
        const scoped = { authorization: `Bearer ${await p.api.capture.createKey('faults-limit', { inboxPrefix: 'limit-' })}` };
        // At once: each create waits out the rules' refresh before it answers.
        const made = await Promise.all(Array.from({ length: 100 }, (_, i) => p.server.inject({ method: 'POST', url: '/v1/faults', headers: scoped, payload: { stage: 'rcpt', match: { inbox: `limit-${i}` }, reply: { code: 451 } } })));
        expect(made.every((res) => res.statusCode === 201)).to.be.true();

        const refused = await p.server.inject({ method: 'POST', url: '/v1/faults', headers: scoped, payload: { stage: 'rcpt', match: { inbox: 'limit-100' }, reply: { code: 451 } } });
        expect(refused.statusCode).to.equal(409);
        expect(JSON.parse(refused.payload)).to.equal({ error: 'FAULT_LIMIT_REACHED' });
        expect(refused.headers['inbox-capture-error-detail']).to.equal('faults: the rules kept are at their limit (1000 in all, 100 for the inboxes of one key prefix); delete some first');
        expect((await post({ stage: 'rcpt', match: { inbox: 'limit-100' }, reply: { code: 451 } })).statusCode).to.equal(201);
    });

    it('is in the OpenAPI document with operation ids that name what they do', async () => {
        const doc = JSON.parse((await p.server.inject('/openapi.json')).payload) as { paths: Record<string, Record<string, { operationId: string }>> };
        expect(doc.paths['/v1/faults']!.post!.operationId).to.equal('createFault');
        expect(doc.paths['/v1/faults']!.get!.operationId).to.equal('listFaults');
        expect(doc.paths['/v1/faults']!.delete!.operationId).to.equal('deleteFaults');
        expect(doc.paths['/v1/faults/{id}']!.delete!.operationId).to.equal('deleteFault');
    });
});
