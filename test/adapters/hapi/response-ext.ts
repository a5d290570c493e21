import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { RequestEvent } from '@hapi/hapi';
import type { RecordStore } from '../../../lib/record-store/record-store';
import type { EmailRecord, RecordPage } from '../../../lib/types';
import { buildMail } from '../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

describe('response-ext', () => {
    describe('shapePluginResponse()', () => {
        let p: ProvisionedServer;
        let store: RecordStore;
        let restore: (() => void) | undefined;
        const logged: RequestEvent[] = [];

        before(async () => {
            p = await provisionServer();
            store = p.stores.recordStore;
            p.server.events.on({ name: 'request', channels: 'app' }, (_request, event) => {
                logged.push(event);
            });
            await p.api.ingestForApi(buildMail({ messageId: 'bad@x' }), { recipients: ['bad@x'] });
        });

        after(() => p.cleanup());

        afterEach(() => {
            restore?.();
            restore = undefined;
        });

        // The stored record with a value JSON.stringify refuses (a BigInt), as a broken store might hand out.
        const unserialisable = (record: EmailRecord): EmailRecord => ({ ...record, codes: [BigInt(1) as unknown as string] });

        const breakReads = () => {
            const { getEmail, listEmails } = store;
            store.getEmail = async (id) => {
                const record = await getEmail.call(store, id);
                return record && unserialisable(record);
            };

            store.listEmails = async (query): Promise<RecordPage> => {
                const page = await listEmails.call(store, query);
                return { ...page, records: page.records.map(unserialisable) };
            };

            restore = () => {
                store.getEmail = getEmail;
                store.listEmails = listEmails;
            };
        };

        for (const url of ['/v1/emails/bad%40x', '/v1/emails?inbox=bad', '/v1/emails?inbox=bad&wait=true&timeout=1']) {
            it(`answers a body that cannot be serialised with 500 { error } and the security headers (GET ${url})`, async () => {
                breakReads();
                const res = await p.server.inject({ url, headers: p.auth });
                expect(res.statusCode).to.equal(500);
                // Not hapi's own { statusCode, error, message } body.
                expect(JSON.parse(res.payload)).to.equal({ error: 'INTERNAL_ERROR' });
                expect(res.headers['x-content-type-options']).to.equal('nosniff');
                expect(res.headers['x-frame-options']).to.equal('DENY');
                expect(res.headers['content-security-policy']).to.exist();
                const entry = logged.pop()!;
                expect(entry.tags).to.include(['error', 'inbox-capture']);
                expect(entry.error).to.be.an.error(TypeError, /BigInt/);
            });
        }

        it('sends the JSON it serialised with the route\'s status, headers and result', async () => {
            const res = await p.server.inject({ url: '/v1/emails/bad%40x', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
            expect(Number(res.headers['content-length'])).to.equal(res.rawPayload.length);
            expect(JSON.parse(res.payload)).to.equal(res.result);
            expect((res.result as { messageId: string }).messageId).to.equal('bad@x');
        });

        it('leaves the host\'s own routes to hapi', async () => {
            p.server.route({ method: 'GET', path: '/host', handler: () => ({ big: BigInt(1) }) });
            const res = await p.server.inject('/host');
            expect(res.statusCode).to.equal(500);
            expect(res.headers['x-content-type-options']).to.not.exist();
        });
    });
});
