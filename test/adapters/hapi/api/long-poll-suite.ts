import * as Code from '@hapi/code';
import * as Http from 'node:http';
import type { EmailPage } from '../../../../adapters/hapi/api-types';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import type { SuiteLab } from './lab-types';

const { expect } = Code;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `condition` every 5 ms until it holds; fails after `limitMs` (a hang, not a timing claim). */
export async function until(condition: () => boolean, limitMs = 10_000): Promise<void> {
    const start = Date.now();
    while (!condition()) {
        if (Date.now() - start > limitMs) {
            throw new Error('condition not reached');
        }

        await sleep(5);
    }
}

/** Long-polling over HTTP (docs/design.md, "Listing and long-polling"). */
export function longPollSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('GET /v1/emails?wait=true', () => {
        let p: ProvisionedServer;

        before(async () => {
            p = await provisionServer({ stores: factory });
        });

        after(() => p.cleanup());

        const waiters = () => p.api.capture.longPoller.waiterCount();

        it('answers at once when mail already matches', async () => {
            await p.api.ingestForApi(buildMail({ messageId: 'ready@x' }), { recipients: ['lp-ready@x'] });
            const res = await p.server.inject({ url: '/v1/emails?inbox=lp-ready&wait=true&timeout=28', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal(['ready@x']);
        });

        it('wakes when this process ingests matching mail through the exposed ingestRawEmail', async () => {
            const pending = p.server.inject({ url: '/v1/emails?inbox=lp-wake&wait=true&timeout=20', headers: p.auth });
            await until(() => waiters() === 1);
            const before = p.api.capture.notifier.subscriberCount();
            let ingested = 0;
            const [view] = await p.api.ingestForApi(buildMail({ messageId: 'wake@x' }), { recipients: ['lp-wake@x'] });
            ingested = performance.now();
            const res = await pending;
            const latency = performance.now() - ingested;
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ emails: [view], hasMore: false });
            expect(waiters()).to.equal(0);
            expect(p.api.capture.notifier.subscriberCount()).to.equal(before - 1);
            // A figure for the report, not an assertion: speed belongs in bench/.
            console.log(`\n[${factory.name}] long-poll wake latency after ingest: ${latency.toFixed(1)} ms`);
        });

        it('ignores mail for other inboxes and mail the filters exclude, then wakes for a match', async () => {
            const pending = p.server.inject({ url: '/v1/emails?inbox=lp-filter&wait=true&timeout=20&subject=wanted', headers: p.auth });
            await until(() => waiters() === 1);
            await p.api.ingestForApi(buildMail({ subject: 'wanted' }), { recipients: ['lp-elsewhere@x'] });
            await p.api.ingestForApi(buildMail({ subject: 'not this one' }), { recipients: ['lp-filter@x'] });
            await sleep(50);
            expect(waiters()).to.equal(1);
            await p.api.ingestForApi(buildMail({ subject: 'the wanted one', messageId: 'wanted@x' }), { recipients: ['lp-filter@x'] });
            const res = await pending;
            expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal(['wanted@x']);
        });

        it('answers 200 with an empty page at the timeout', async () => {
            const subscribers = p.api.capture.notifier.subscriberCount();
            const res = await p.server.inject({ url: '/v1/emails?inbox=lp-timeout&wait=true&timeout=1', headers: p.auth });
            expect(res.statusCode).to.equal(200);
            expect(res.result).to.equal({ emails: [], hasMore: false });
            expect(waiters()).to.equal(0);
            expect(p.api.capture.notifier.subscriberCount()).to.equal(subscribers);
        });

        it('answers at once with wait=false even when the inbox is empty', async () => {
            const res = await p.server.inject({ url: '/v1/emails?inbox=lp-nowait&timeout=28', headers: p.auth });
            expect(res.result).to.equal({ emails: [], hasMore: false });
            expect(waiters()).to.equal(0);
        });

        it('answers many waiters of one inbox from one ingest, sharing the store work', async () => {
            const counts = { listEmails: 0, inboxVersion: 0 };
            const store = p.api.capture.recordStore;
            const listEmails = store.listEmails;
            const inboxVersion = store.inboxVersion;
            const n = 200;
            const pending: Array<Promise<{ result: unknown }>> = [];
            for (let i = 0; i < n; ++i) {
                pending.push(p.server.inject({ url: '/v1/emails?inbox=lp-many&wait=true&timeout=20', headers: p.auth }));
            }

            await until(() => waiters() === n);
            store.listEmails = (query) => {
                counts.listEmails++;
                return listEmails.call(store, query);
            };

            store.inboxVersion = (inbox) => {
                counts.inboxVersion++;
                return inboxVersion.call(store, inbox);
            };

            try {
                // Idle: over 1.2 s (two scheduled checks each), probes are shared per inbox.
                await sleep(1200);
                const idle = { ...counts };
                await p.api.ingestForApi(buildMail({ messageId: 'many@x' }), { recipients: ['lp-many@x'] });
                const results = await Promise.all(pending);
                for (const res of results) {
                    expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal(['many@x']);
                }

                console.log(`\n[${factory.name}] ${n} waiters: ${idle.inboxVersion} version probes and ${idle.listEmails} queries while idle for 1.2 s; ${counts.listEmails - idle.listEmails} queries to answer all after the ingest`);
                expect(idle.listEmails).to.equal(0);
                expect(idle.inboxVersion).to.be.below(n / 10);
                expect(counts.listEmails - idle.listEmails).to.be.below(n / 10);
            }
            finally {
                store.listEmails = listEmails;
                store.inboxVersion = inboxVersion;
            }
        });

        it('releases its timers, listeners and waiter when the client goes away', async () => {
            await p.server.start();
            try {
                const subscribers = p.api.capture.notifier.subscriberCount();
                const req = Http.get({
                    host: '127.0.0.1',
                    port: p.server.info.port,
                    path: '/v1/emails?inbox=lp-abandoned&wait=true&timeout=28',
                    headers: p.auth
                });
                req.on('error', () => undefined);
                await until(() => waiters() === 1);
                expect(p.api.capture.notifier.subscriberCount()).to.equal(subscribers + 1);
                req.destroy();
                // Far less than the 28 s timeout: only the disconnect can have ended it.
                await until(() => waiters() === 0, 5000);
                expect(p.api.capture.notifier.subscriberCount()).to.equal(subscribers);
            }
            finally {
                await p.server.stop();
            }
        });

        it('answers waiting requests with an empty page when the server stops', async () => {
            const q = await provisionServer({ stores: factory });
            try {
                const pending = q.server.inject({ url: '/v1/emails?inbox=lp-stop&wait=true&timeout=28', headers: q.auth });
                await until(() => q.api.capture.longPoller.waiterCount() === 1);
                const stopped = q.server.stop({ timeout: 20_000 });
                const res = await pending;
                expect(res.statusCode).to.equal(200);
                expect(res.result).to.equal({ emails: [], hasMore: false });
                await stopped;
            }
            finally {
                await q.cleanup();
            }
        });
    });
}
