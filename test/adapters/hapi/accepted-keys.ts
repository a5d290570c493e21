import * as Fs from 'node:fs/promises';
import * as Code from '@hapi/code';
import * as Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import { ACCEPTED_KEY_TTL_MS, MAX_ACCEPTED_KEYS } from '../../../adapters/hapi/accepted-keys';
import { AUTH_STRATEGY, guardKeyLookup, registerAuth, type KeyLookupGuardOptions } from '../../../adapters/hapi/auth-scheme';
import { openEmbeddedStores } from '../../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { hashApiKey } from '../../../lib/service/keys';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The embedded stores in a fresh dir, the key lookup counted and holdable, and a second "process" on the same file. */
interface Rig {
    capture: InboxCapture;
    /** Key lookups the record store served, by key hash. */
    lookups: Map<string, number>;
    /**
     * Holds the next key lookups after they have read the store and before they answer:
     * `read` resolves once the first has read, release() lets them all answer.
     */
    hold(): { read: Promise<void>; release(): void };
    /** Another record store on the same SQLite file, as the CLI in another process would open it. */
    otherProcess: RecordStore;
    cleanup(): Promise<void>;
}

async function startRig(): Promise<Rig> {
    const dir = await tempDir('key-cache');
    const { recordStore, blobStore } = await openEmbeddedStores({ dataDir: dir });
    const lookups = new Map<string, number>();
    let held: { gate: Promise<void>; onRead: () => void } | null = null;
    const counted: RecordStore = {
        ...recordStore,
        async findActiveKeyByHash(hash) {
            lookups.set(hash, (lookups.get(hash) ?? 0) + 1);
            const key = await recordStore.findActiveKeyByHash(hash);
            if (held) {
                held.onRead();
                await held.gate;
            }

            return key;
        }
    };
    const hold = () => {
        let release!: () => void;
        let onRead!: () => void;
        const gate = new Promise<void>((resolve) => {
            release = resolve;
        });
        const read = new Promise<void>((resolve) => {
            onRead = resolve;
        });
        held = { gate, onRead };
        return {
            read,
            release() {
                held = null;
                release();
            }
        };
    };
    const rig: Partial<Rig> = { lookups, hold };
    const capture = createInboxCapture({ recordStore: counted, blobStore });
    await capture.start();
    const other = await openEmbeddedStores({ dataDir: dir });
    return Object.assign(rig, {
        capture,
        otherProcess: other.recordStore,
        async cleanup() {
            await other.recordStore.close();
            await capture.close();
            await Fs.rm(dir, { recursive: true, force: true });
        }
    }) as Rig;
}

/** A bare server whose one route needs the plugin's API-key strategy. */
async function authServer(capture: InboxCapture, guard: KeyLookupGuardOptions = {}): Promise<Hapi.Server> {
    const server = Hapi.server({ debug: false });
    registerAuth(server, capture, guard);
    server.route({ method: 'GET', path: '/who', options: { auth: AUTH_STRATEGY }, handler: (request) => request.auth.credentials.app ?? null });
    await server.initialize();
    return server;
}

async function status(server: Hapi.Server, token: string): Promise<number> {
    return (await server.inject({ url: '/who', headers: { authorization: `Bearer ${token}` } })).statusCode;
}

describe('API key cache', () => {

    let rig: Rig;

    before(async () => {
        rig = await startRig();
    });

    after(() => rig?.cleanup());

    const lookupsOf = (token: string) => rig.lookups.get(hashApiKey(token)) ?? 0;

    describe('guardKeyLookup()', () => {

        it('asks the store about a valid key once per acceptedTtlMs', async () => {
            let clock = 1_000_000;
            const token = await rig.capture.createKey('once-per-ttl');
            const verify = guardKeyLookup((t) => rig.capture.verifyKey(t), { acceptedTtlMs: 1000, now: () => clock });
            for (let i = 0; i < 5; i++) {
                expect((await verify(token))?.name).to.equal('once-per-ttl');
            }

            expect(lookupsOf(token)).to.equal(1);
            clock += 1000;
            expect((await verify(token))?.name).to.equal('once-per-ttl');
            expect(lookupsOf(token)).to.equal(2);
        });

        it('refuses a key revoked by another process once acceptedTtlMs has passed', async () => {
            let clock = 1_000_000;
            const token = await rig.capture.createKey('revoked-elsewhere');
            const verify = guardKeyLookup((t) => rig.capture.verifyKey(t), { acceptedTtlMs: 1000, now: () => clock });
            expect(await verify(token)).to.not.be.null();
            expect(await rig.otherProcess.revokeKey('revoked-elsewhere')).to.be.true();
            clock += 1000;
            expect(await verify(token)).to.be.null();
        });

        it('forgets a key named by keyRevoked() at once', async () => {
            const token = await rig.capture.createKey('revoked-now');
            const verify = guardKeyLookup((t) => rig.capture.verifyKey(t), { acceptedTtlMs: 60_000 });
            expect(await verify(token)).to.not.be.null();
            await rig.otherProcess.revokeKey('revoked-now');
            verify.keyRevoked('someone-else');
            expect(await verify(token)).to.not.be.null();
            verify.keyRevoked('revoked-now');
            expect(await verify(token)).to.be.null();
        });

        it('neither shares nor remembers a lookup that read the key before keyRevoked()', async () => {
            const token = await rig.capture.createKey('revoked-in-flight');
            const verify = guardKeyLookup((t) => rig.capture.verifyKey(t), { acceptedTtlMs: 60_000 });
            const held = rig.hold();
            const before = verify(token);
            await held.read;

            // The lookup has read the key as active; now it is revoked and the guard told.
            expect(await rig.otherProcess.revokeKey('revoked-in-flight')).to.be.true();
            verify.keyRevoked('revoked-in-flight');
            const afterwards = verify(token);
            held.release();
            // The earlier request may pass (it came before the revocation); no later one may.
            expect(await before).to.not.be.null();
            expect(await afterwards).to.be.null();
            expect(await verify(token)).to.be.null();
        });

        it(`holds at most maxAccepted keys, the oldest going first (default ${MAX_ACCEPTED_KEYS})`, async () => {
            const tokens: string[] = [];
            for (let i = 0; i < 12; i++) {
                tokens.push(await rig.capture.createKey(`bounded-${i}`));
            }

            const verify = guardKeyLookup((t) => rig.capture.verifyKey(t), { acceptedTtlMs: 60_000, maxAccepted: 4 });
            for (const token of tokens) {
                expect(await verify(token)).to.not.be.null();
                expect(verify.acceptedCount()).to.be.at.most(4);
            }

            expect(verify.acceptedCount()).to.equal(4);
            // The last four are remembered; the first was pushed out and is looked up again.
            for (const token of tokens.slice(-4)) {
                await verify(token);
                expect(lookupsOf(token)).to.equal(1);
            }

            await verify(tokens[0]);
            expect(lookupsOf(tokens[0])).to.equal(2);
        });
    });

    describe('registerAuth()', () => {

        it(`accepts a valid key from memory for ACCEPTED_KEY_TTL_MS (${ACCEPTED_KEY_TTL_MS} ms) and refuses it once another process revoked it`, async () => {
            let clock = 1_000_000;
            const server = await authServer(rig.capture, { now: () => clock });
            const token = await rig.capture.createKey('http-ttl');
            expect(await status(server, token)).to.equal(200);
            expect(await status(server, token)).to.equal(200);
            expect(lookupsOf(token)).to.equal(1);

            expect(await rig.otherProcess.revokeKey('http-ttl')).to.be.true();
            clock += ACCEPTED_KEY_TTL_MS;
            expect(await status(server, token)).to.equal(401);
        });

        it('refuses a key revoked through the service at once, even when a lookup of it is in flight', async () => {
            const clock = 1_000_000;
            const server = await authServer(rig.capture, { now: () => clock });
            const token = await rig.capture.createKey('http-revoked');
            expect(await status(server, token)).to.equal(200);
            expect(await rig.capture.revokeKey('http-revoked')).to.be.true();
            // Same instant: only the revocation can have dropped the remembered key.
            expect(await status(server, token)).to.equal(401);

            const second = await rig.capture.createKey('http-revoked-2');
            const held = rig.hold();
            const inFlight = status(server, second);
            await held.read;
            expect(await rig.capture.revokeKey('http-revoked-2')).to.be.true();
            const later = status(server, second);
            held.release();
            expect(await inFlight).to.equal(200);
            expect(await later).to.equal(401);
            expect(await status(server, second)).to.equal(401);
        });

        it('stays within its bound with many distinct valid keys', async () => {
            const server = await authServer(rig.capture, { maxAccepted: 3 });
            const tokens: string[] = [];
            for (let i = 0; i < 8; i++) {
                tokens.push(await rig.capture.createKey(`http-bounded-${i}`));
                expect(await status(server, tokens[i])).to.equal(200);
            }

            // Only the last three are remembered: the first is looked up again.
            expect(await status(server, tokens[7])).to.equal(200);
            expect(lookupsOf(tokens[7])).to.equal(1);
            expect(await status(server, tokens[0])).to.equal(200);
            expect(lookupsOf(tokens[0])).to.equal(2);
        });

        it('looks a key up on every request when the service cannot report revocations', async () => {
            const deaf: Partial<InboxCapture> = { ...rig.capture };
            delete deaf.onKeyRevoked;
            const server = await authServer(deaf as InboxCapture);
            const token = await rig.capture.createKey('http-deaf');
            for (let i = 0; i < 3; i++) {
                expect(await status(server, token)).to.equal(200);
            }

            expect(lookupsOf(token)).to.equal(3);
        });
    });

    describe('InboxCapture.onKeyRevoked()', () => {

        it('tells every listener of each revocation through the service, known name or not, until unsubscribed', async () => {
            const heard: string[] = [];
            const unsubscribe = rig.capture.onKeyRevoked((name) => heard.push(name));
            const also = rig.capture.onKeyRevoked((name) => heard.push(`also ${name}`));
            await rig.capture.createKey('told');
            expect(await rig.capture.revokeKey('told')).to.be.true();
            expect(heard).to.equal(['told', 'also told']);
            expect(await rig.capture.revokeKey('nobody')).to.be.false();
            expect(heard).to.equal(['told', 'also told', 'nobody', 'also nobody']);
            unsubscribe();
            also();
            await rig.capture.revokeKey('nobody');
            expect(heard).to.have.length(4);
        });

        it('still revokes when a listener throws', async () => {
            const unsubscribe = rig.capture.onKeyRevoked(() => {
                throw new Error('listener bug');
            });
            const token = await rig.capture.createKey('listener-throws');
            try {
                expect(await rig.capture.revokeKey('listener-throws')).to.be.true();
            }
            finally {
                unsubscribe();
            }

            expect(await rig.capture.verifyKey(token)).to.be.null();
        });
    });
});
