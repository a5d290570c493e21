import * as Code from '@hapi/code';
import type { EmailPage } from '../../../../adapters/hapi/api-types';
import { createInboxCapture, type InboxCapture } from '../../../../lib/service/inbox-capture';
import { openPostgresKnex } from '../../../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../../../lib/record-store/record-store';
import { buildMail } from '../../../helpers/mail';
import { provisionServer, type ProvisionedServer } from '../../../helpers/provision-server';
import type { StoreFactory } from '../../../helpers/test-stores';
import type { SuiteLab } from './lab-types';
import { until } from './long-poll-suite';

const { expect } = Code;

/** Polls an asynchronous condition every 20 ms; fails after `limitMs` (a hang, not a timing claim). */
async function untilAsync(condition: () => Promise<boolean>, limitMs = 10_000): Promise<void> {
    const start = Date.now();
    while (!await condition()) {
        if (Date.now() - start > limitMs) {
            throw new Error('condition not reached');
        }

        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

/** The same records without cross-process notifications: as if every NOTIFY were lost. */
function withoutNotifications(store: RecordStore): RecordStore {
    const lossy: RecordStore = { ...store };
    delete lossy.watchInboxes;
    return lossy;
}

/**
 * Makes a service's inbox versions stand still and counts its version probes and
 * list queries. A scheduled check queries only when the version moved, so from here
 * on only a notification (a forced check) can answer a waiting request.
 */
function freezeVersions(capture: InboxCapture): { probes: () => number; queries: () => number; restore: () => void } {
    const store = capture.recordStore;
    const { inboxVersion, listEmails } = store;
    let probes = 0;
    let queries = 0;
    store.inboxVersion = async () => {
        probes++;
        return 0;
    };

    store.listEmails = (query) => {
        queries++;
        return listEmails.call(store, query);
    };

    return {
        probes: () => probes,
        queries: () => queries,
        restore: () => {
            store.inboxVersion = inboxVersion;
            store.listEmails = listEmails;
        }
    };
}

/** Counts a service's version probes without changing them. */
function countProbes(capture: InboxCapture): { probes: () => number; restore: () => void } {
    const store = capture.recordStore;
    const real = store.inboxVersion;
    let probes = 0;
    store.inboxVersion = (inbox) => {
        probes++;
        return real.call(store, inbox);
    };

    return {
        probes: () => probes,
        restore: () => {
            store.inboxVersion = real;
        }
    };
}

/** Records the inboxes a service's notifier announces (from its own ingests or from the record store's notifications). */
function heardBy(capture: InboxCapture): { heard: string[]; restore: () => void } {
    const { notifier } = capture;
    const real = notifier.publish;
    const heard: string[] = [];
    notifier.publish = (inbox) => {
        heard.push(inbox);
        real.call(notifier, inbox);
    };

    return {
        heard,
        restore: () => {
            notifier.publish = real;
        }
    };
}

/**
 * Long-polling across processes (docs/design.md, "Listing and long-polling"): mail another
 * process stores is found by the scheduled checks on every backend, and on Postgres at once
 * through LISTEN/NOTIFY.
 * "Another process" is a second service on the same data through connections of its own.
 */
export function crossProcessSuite(lab: SuiteLab, factory: StoreFactory): void {
    const { describe, it, before, after } = lab;

    describe('GET /v1/emails?wait=true across processes', () => {
        let p: ProvisionedServer;
        let other: Awaited<ReturnType<ProvisionedServer['stores']['connectAgain']>>;
        let otherCapture: InboxCapture;

        before(async () => {
            p = await provisionServer({ stores: factory });
            other = await p.stores.connectAgain();
            // Not started: it only writes, like an SMTP instance, and never listens.
            otherCapture = createInboxCapture({ recordStore: other.recordStore, blobStore: other.blobStore });
        });

        after(async () => {
            await other.close();
            await p.cleanup();
        });

        const waiters = (server: ProvisionedServer) => server.api.capture.longPoller.waiterCount();

        // A second service on the same data whose notifications are all lost.
        const withLossyService = async (test: (q: ProvisionedServer) => Promise<void>) => {
            const stores = await p.stores.connectAgain();
            const q = await provisionServer({ recordStore: withoutNotifications(stores.recordStore), blobStore: stores.blobStore });
            try {
                await test(q);
            }
            finally {
                await q.cleanup();
                await stores.close();
            }
        };

        it('answers mail another process stored', async () => {
            const pending = p.server.inject({ url: '/v1/emails?inbox=xp-other&wait=true&timeout=10', headers: p.auth });
            await until(() => waiters(p) === 1);
            const [view] = await otherCapture.ingestRawEmail(buildMail({ messageId: 'other-process@x' }), { recipients: ['xp-other@x'] });
            const res = await pending;
            expect(res.statusCode).to.equal(200);
            expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal([view.messageId]);
        });

        it('still answers at a scheduled check when every notification is lost', async () => {
            await withLossyService(async (q) => {
                const heard = heardBy(q.api.capture);
                const counter = countProbes(q.api.capture);
                try {
                    const pending = q.server.inject({ url: '/v1/emails?inbox=xp-lost&wait=true&timeout=10', headers: q.auth });
                    await until(() => waiters(q) === 1);
                    const probesBefore = counter.probes();
                    const [view] = await otherCapture.ingestRawEmail(buildMail({ messageId: 'lost-notify@x' }), { recipients: ['xp-lost@x'] });
                    const res = await pending;
                    expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal([view.messageId]);
                    // Nothing was announced to this service: a version probe of a scheduled check found the mail.
                    expect(heard.heard).to.equal([]);
                    expect(counter.probes()).to.be.above(probesBefore);
                }
                finally {
                    counter.restore();
                    heard.restore();
                }
            });
        });

        // The control of the notification test below: it shows that with frozen versions
        // a scheduled check cannot answer, so an answer there can only come from a notification.
        it('does not answer at a scheduled check while versions stand still, but does at a notification', async () => {
            await withLossyService(async (q) => {
                const frozen = freezeVersions(q.api.capture);
                try {
                    const pending = q.server.inject({ url: '/v1/emails?inbox=xp-frozen&wait=true&timeout=20', headers: q.auth });
                    await until(() => waiters(q) === 1);
                    const [view] = await otherCapture.ingestRawEmail(buildMail({ messageId: 'frozen@x' }), { recipients: ['xp-frozen@x'] });
                    // A scheduled check that started after the mail was stored has run ...
                    const stored = frozen.probes();
                    await until(() => frozen.probes() > stored);
                    await new Promise((resolve) => setImmediate(resolve));
                    // ... and neither queried (only the request's own first query ran) nor answered.
                    expect(frozen.queries()).to.equal(1);
                    expect(waiters(q)).to.equal(1);
                    q.api.capture.notifier.publish('xp-frozen');
                    const res = await pending;
                    expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal([view.messageId]);
                }
                finally {
                    frozen.restore();
                }
            });
        });

        if (factory.records === 'postgres') {
            // Postgres LISTEN/NOTIFY: the answer comes from the notification, proven by
            // freezing versions (see the control above) instead of by a clock.
            it('is woken by the other process\'s NOTIFY, not by a scheduled check', async () => {
                const frozen = freezeVersions(p.api.capture);
                const heard = heardBy(p.api.capture);
                try {
                    const pending = p.server.inject({ url: '/v1/emails?inbox=xp-notify&wait=true&timeout=10', headers: p.auth });
                    await until(() => waiters(p) === 1);
                    const [view] = await otherCapture.ingestRawEmail(buildMail({ messageId: 'notified@x' }), { recipients: ['xp-notify@x'] });
                    const res = await pending;
                    expect(res.statusCode).to.equal(200);
                    expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal([view.messageId]);
                    // Other tests' notifications may still trickle in: this one must be among them.
                    expect(heard.heard).to.include('xp-notify');
                }
                finally {
                    heard.restore();
                    frozen.restore();
                }
            });

            it('is woken by NOTIFY again after its LISTEN connection is killed', async () => {
                const admin = openPostgresKnex(p.stores.databaseUrl!);
                const frozen = freezeVersions(p.api.capture);
                const heard = heardBy(p.api.capture);
                try {
                    // Backends of this database that have finished a LISTEN (idle after it).
                    const listeners = async () => {
                        const result = await admin.raw(
                            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND state = 'idle'"
                        ) as { rows: { pid: number }[] };
                        return result.rows.map((r) => r.pid);
                    };

                    const [killed, ...more] = await listeners();
                    expect(killed).to.be.a.number();
                    expect(more).to.equal([]);
                    await admin.raw('SELECT pg_terminate_backend(?)', [killed]);
                    await untilAsync(async () => {
                        const now = await listeners();
                        return now.length === 1 && now[0] !== killed;
                    });

                    const pending = p.server.inject({ url: '/v1/emails?inbox=xp-relisten&wait=true&timeout=10', headers: p.auth });
                    await until(() => waiters(p) === 1);
                    const [view] = await otherCapture.ingestRawEmail(buildMail({ messageId: 'relisten@x' }), { recipients: ['xp-relisten@x'] });
                    const res = await pending;
                    expect((res.result as EmailPage).emails.map((e) => e.messageId)).to.equal([view.messageId]);
                    expect(heard.heard).to.include('xp-relisten');
                }
                finally {
                    heard.restore();
                    frozen.restore();
                    await admin.destroy();
                }
            });
        }
        else {
            it('has no cross-process notifications on SQLite: scheduled checks are the only way', () => {
                expect(p.api.capture.recordStore.watchInboxes).to.be.undefined();
            });
        }
    });
}
