import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createPop3Listener, type Pop3Listener } from '../../../adapters/pop3';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { poplib, rawPop3, retrieved, type PoplibStep } from '../../helpers/pop3';
import { readAll } from '../../helpers/streams';
import { postgresFsStores, sqliteFsStores, type StoreFactory, type TestStores } from '../../helpers/test-stores';
import type { Pop3ListenerOptions } from '../../../adapters/pop3/pop3-options';
import { takeMaildrop } from '../../../adapters/pop3/maildrop';

const { expect } = Code;
const { describe, it, before, after, afterEach } = exports.lab = Lab.script();

const CRLF = '\r\n';
/** Lines that start with a dot, a line that is only a dot, and one that is two: each must come back as sent. */
const DOTTED_BODY = ['.leading dot', '..two dots', '.', '..', 'middle', '. dot and space', 'end'].join(CRLF) + CRLF;

function message(id: string, subject: string, body: string): string {
    return [`From: sender@example.test`, `To: box@pop.test`, `Subject: ${subject}`, `Message-ID: <${id}>`, '', ''].join(CRLF) + body;
}

interface Fixture {
    stores: TestStores;
    capture: InboxCapture;
    listener: Pop3Listener;
    port: number;
    key: string;
}

async function startFixture(factory: StoreFactory, options: Pop3ListenerOptions = {}): Promise<Fixture> {
    const stores = await factory.create();
    // The stores are the fixture's to close (cleanup()), not the service's.
    const capture = createInboxCapture({ recordStore: { ...stores.recordStore, close: () => Promise.resolve() }, blobStore: { ...stores.blobStore, close: () => Promise.resolve() } });
    await capture.start();
    const listener = createPop3Listener(capture, { port: 0, authFailureDelayMs: 20, ...options });
    const { port } = await listener.listen();
    const key = await capture.createKey('pop3-full');
    return { stores, capture, listener, port, key };
}

async function stopFixture(f: Fixture | undefined): Promise<void> {
    if (!f) {
        return;
    }

    await f.listener.close();
    await f.capture.close();
    await f.stores.cleanup();
}

/** Stores three messages in inbox `box`, oldest first; the second has dotted lines. Answers their ids. */
async function storeThree(capture: InboxCapture): Promise<string[]> {
    const ids: string[] = [];
    const bodies = [['first@pop.test', 'First', `one${CRLF}`], ['dots@pop.test', 'Dots', DOTTED_BODY], ['third@pop.test', 'Third', `three${CRLF}line 2${CRLF}line 3${CRLF}`]];
    for (const [index, [id, subject, body]] of bodies.entries()) {
        const [copy] = await capture.ingestRawEmail(message(id!, subject!, body!), { recipients: ['box@pop.test'], receivedAt: 1_000_000 + index * 1000 });
        ids.push(copy!.messageId);
    }

    return ids;
}

async function rawOf(capture: InboxCapture, messageId: string): Promise<Buffer> {
    const record = await capture.getEmail(messageId);
    return readAll((await capture.blobStore.get(record!.rawKey))!);
}

const login = (key: string): PoplibStep[] => [['user', 'box'], ['pass_', key]];

for (const factory of [sqliteFsStores(), postgresFsStores()]) {
    describe(`pop3 listener on ${factory.name}`, () => {
        let release: (() => Promise<void>) | undefined;
        let f: Fixture | undefined;

        before(async () => {
            release = await factory.hold?.();
        });

        after(async () => {
            await release?.();
        });

        afterEach(async () => {
            await stopFixture(f);
            f = undefined;
        });

        it('answers every command of RFC 1939 to poplib, RETR byte for byte with dotted lines, DELE made at QUIT', async () => {
            f = await startFixture(factory);
            const ids = await storeThree(f.capture);
            const raws = await Promise.all(ids.map((id) => rawOf(f!.capture, id)));
            const session = await poplib(f.port, [
                ['capa'], ...login(f.key), ['stat'], ['list'], ['list', 2], ['uidl'], ['uidl', 2],
                ['retr', 2], ['top', 2, 0], ['top', 2, 2], ['noop'],
                ['dele', 1], ['list', 1], ['retr', 1], ['stat'], ['rset'], ['stat'], ['dele', 3], ['list', 9], ['quit']
            ]);
            const [capa, user, pass, stat, list, list2, uidl, uidl2, retr, top0, top2, noop, dele1, listDeleted, retrDeleted, statAfterDele, rset, statAfterRset, dele3, list9, quit] = session.steps;
            expect(session.welcome!).to.startWith('+OK');
            expect(Object.keys(capa!.capa!)).to.include(['TOP', 'UIDL', 'USER', 'RESP-CODES']);
            expect(Object.keys(capa!.capa!)).to.not.include('STLS');
            expect(user!.resp!).to.startWith('+OK');
            expect(pass!.resp!).to.startWith('+OK');
            const total = raws.reduce((sum, raw) => sum + raw.length, 0);
            expect(stat).to.equal({ count: 3, size: total });
            expect(list!.lines).to.equal(raws.map((raw, i) => `${i + 1} ${raw.length}`));
            expect(list2!.resp!).to.equal(`+OK 2 ${raws[1]!.length}`);
            expect(uidl!.lines).to.equal(ids.map((id, i) => `${i + 1} ${id}`));
            expect(uidl2!.resp!).to.equal(`+OK 2 ${ids[1]}`);
            // poplib un-stuffs the dots and splits the lines: joined again, the stored bytes exactly.
            expect(retrieved(retr!).equals(raws[1]!)).to.be.true();
            expect(retrieved(retr!).toString()).to.contain(`${CRLF}.leading dot${CRLF}..two dots${CRLF}.${CRLF}..${CRLF}`);
            const head = raws[1]!.toString('latin1');
            const headerEnd = head.indexOf(CRLF + CRLF) + 4;
            expect(retrieved(top0!).toString('latin1')).to.equal(head.slice(0, headerEnd));
            expect(retrieved(top2!).toString('latin1')).to.equal(head.slice(0, headerEnd) + `.leading dot${CRLF}..two dots${CRLF}`);
            expect(noop!.resp!).to.startWith('+OK');
            expect(dele1!.resp!).to.startWith('+OK');
            expect(listDeleted!.error!).to.startWith('-ERR');
            expect(retrDeleted!.error!).to.startWith('-ERR');
            expect(statAfterDele).to.equal({ count: 2, size: total - raws[0]!.length });
            expect(rset!.resp!).to.startWith('+OK');
            expect(statAfterRset).to.equal({ count: 3, size: total });
            expect(dele3!.resp!).to.startWith('+OK');
            expect(list9!.error!).to.startWith('-ERR');
            expect(quit!.resp!).to.startWith('+OK');

            // Message 3 went at QUIT, message 1 (unmarked by RSET) stayed; the UIDs did not change.
            expect(await f.capture.getEmail(ids[2]!)).to.be.null();
            expect(await f.capture.getEmail(ids[0]!)).to.not.be.null();
            const again = await poplib(f.port, [...login(f.key), ['uidl'], ['quit']]);
            expect(again.steps[2]!.lines).to.equal([`1 ${ids[0]}`, `2 ${ids[1]}`]);
        });

        it('deletes nothing when the connection drops without QUIT', async () => {
            f = await startFixture(factory);
            const ids = await storeThree(f.capture);
            const session = await poplib(f.port, [...login(f.key), ['dele', 1], ['dele', 2]]);
            expect(session.steps.map((s) => s.resp?.slice(0, 3))).to.equal(['+OK', '+OK', '+OK', '+OK']);
            for (const id of ids) {
                expect(await f.capture.getEmail(id)).to.not.be.null();
            }
        });

        it('lets a read-only key read but not DELE, and refuses a key whose prefix does not reach the inbox', async () => {
            f = await startFixture(factory);
            const ids = await storeThree(f.capture);
            const readOnly = await f.capture.createKey('pop3-reader', { readOnly: true });
            const reader = await poplib(f.port, [...login(readOnly), ['retr', 1], ['dele', 1], ['quit']]);
            expect(reader.steps[1]!.resp!).to.startWith('+OK');
            expect(retrieved(reader.steps[2]!).equals(await rawOf(f.capture, ids[0]!))).to.be.true();
            expect(reader.steps[3]!.error!).to.equal('-ERR this key is read-only: it cannot delete');
            expect(reader.steps[4]!.resp!).to.startWith('+OK');
            expect(await f.capture.getEmail(ids[0]!)).to.not.be.null();

            const elsewhere = await f.capture.createKey('pop3-other', { inboxPrefix: 'other-' });
            const refused = await poplib(f.port, [...login(elsewhere), ['stat']]);
            expect(refused.steps[1]!.error!).to.equal('-ERR [AUTH] wrong inbox or key');
            expect(refused.steps[2]!.error!).to.startWith('-ERR');
        });
    });
}

describe('pop3 listener, sqlite+fs only', () => {
    const factory = sqliteFsStores();
    let f: Fixture | undefined;

    afterEach(async () => {
        await stopFixture(f);
        f = undefined;
    });

    it('takes the newest emails of the inbox, page by page, oldest first', async () => {
        f = await startFixture(factory);
        // Stored out of order: the maildrop follows the time received.
        const ids: string[] = [];
        for (const at of [5, 1, 4, 2, 6, 3]) {
            const [copy] = await f.capture.ingestRawEmail(message(`m${at}@pop.test`, `M${at}`, `x${CRLF}`), { recipients: ['box@pop.test'], receivedAt: at * 1000 });
            ids.push(copy!.messageId);
        }

        await f.capture.ingestRawEmail(message('elsewhere@pop.test', 'Other inbox', `x${CRLF}`), { recipients: ['other@pop.test'], receivedAt: 9_000 });
        const drop = await takeMaildrop(f.capture, 'box', 4, 3);
        expect(drop.map((m) => m.messageId)).to.equal(['m3@pop.test', 'm4@pop.test', 'm5@pop.test', 'm6@pop.test']);
        expect((await takeMaildrop(f.capture, 'box')).map((m) => m.messageId)).to.equal(['m1@pop.test', 'm2@pop.test', 'm3@pop.test', 'm4@pop.test', 'm5@pop.test', 'm6@pop.test']);
        expect(ids).to.have.length(6);
    });

    it('answers a wrong key after the delay, then locks the address out and closes', async () => {
        f = await startFixture(factory, { authFailureDelayMs: 1500, authLockout: { failures: 3 } });
        // The -ERR comes no sooner than the delay (the store alone answers in milliseconds).
        const started = Date.now();
        const slow = await rawPop3(f.port, 'USER box\r\nPASS ic_wrong\r\nQUIT\r\n');
        expect(Date.now() - started).to.be.at.least(1500);
        expect(slow).to.contain('-ERR [AUTH] wrong inbox or key\r\n+OK inbox-capture signing off\r\n');
        const first = await poplib(f.port, [['user', 'box'], ['pass_', 'ic_wrong'], ['user', 'box'], ['pass_', 'ic_wrong-again'], ['user', 'box'], ['pass_', f.key]]);
        expect(first.steps[1]!.error!).to.equal('-ERR [AUTH] wrong inbox or key');
        // The second failure locked the address: the session was closed after it.
        expect(first.steps[3]!.error!).to.equal('-ERR [AUTH] wrong inbox or key');
        expect(first.steps[4]!.closed).to.exist();
        // Locked: even the right key is refused from this address.
        const second = await poplib(f.port, [['user', 'box'], ['pass_', f.key]]);
        expect(second.steps[1]!.error!).to.startWith('-ERR [AUTH] too many failed logins');
    });

    it('offers STLS and serves the session inside TLS', async () => {
        f = await startFixture(factory, { tls: 'starttls' });
        const ids = await storeThree(f.capture);
        const before = await poplib(f.port, [['capa']]);
        expect(Object.keys(before.steps[0]!.capa!)).to.include('STLS');
        const session = await poplib(f.port, [['capa'], ...login(f.key), ['retr', 2], ['quit']], 'stls');
        expect(session.stls!).to.startWith('+OK');
        expect(Object.keys(session.steps[0]!.capa!)).to.not.include('STLS');
        expect(retrieved(session.steps[3]!).equals(await rawOf(f.capture, ids[1]!))).to.be.true();
    });

    it('serves POP3S (implicit TLS)', async () => {
        f = await startFixture(factory, { tls: 'implicit' });
        const ids = await storeThree(f.capture);
        const session = await poplib(f.port, [...login(f.key), ['retr', 2], ['quit']], 'implicit');
        expect(session.welcome!).to.startWith('+OK');
        expect(retrieved(session.steps[2]!).equals(await rawOf(f.capture, ids[1]!))).to.be.true();
    });

    it('closes a silent session after the idle timeout, its DELE not made', async () => {
        f = await startFixture(factory, { idleTimeoutMs: 500 });
        const ids = await storeThree(f.capture);
        const reply = await rawPop3(f.port, `USER box\r\nPASS ${f.key}\r\nDELE 1\r\n`);
        expect(reply).to.endWith('+OK message 1 deleted\r\n-ERR [SYS/TEMP] idle too long, closing\r\n');
        expect(await f.capture.getEmail(ids[0]!)).to.not.be.null();
    });

    it('answers a line too long and closes the connection', async () => {
        f = await startFixture(factory);
        const reply = await rawPop3(f.port, `USER ${'x'.repeat(300)}\r\nNOOP\r\n`);
        expect(reply).to.match(/^\+OK [^\r]*\r\n-ERR line too long \(at most 255 octets with CRLF\), closing\r\n$/);
        // 255 octets with the CRLF is still a line.
        const longest = await rawPop3(f.port, `USER ${'x'.repeat(248)}\r\nQUIT\r\n`);
        expect(longest).to.match(/^\+OK [^\r]*\r\n\+OK send the API key with PASS\r\n\+OK inbox-capture signing off\r\n$/);
    });

    it('answers the command past the allowance and closes the connection', async () => {
        f = await startFixture(factory, { maxCommands: 3 });
        const reply = await rawPop3(f.port, 'CAPA\r\nUSER box\r\nUSER box\r\nUSER box\r\nUSER box\r\n');
        const lines = reply.split(CRLF);
        expect(lines.filter((l) => l === '+OK send the API key with PASS')).to.have.length(2);
        expect(reply).to.endWith('-ERR too many commands in one session (at most 3), closing\r\n');
    });

    it('gives an email whose id is no valid unique-id a hashed UIDL, the same in every session', async () => {
        f = await startFixture(factory);
        const longId = `${'long-'.repeat(20)}@pop.test`;
        await f.capture.ingestRawEmail(message(longId, 'Long', `x${CRLF}`), { recipients: ['box@pop.test'] });
        const one = await poplib(f.port, [...login(f.key), ['uidl', 1], ['quit']]);
        const two = await poplib(f.port, [...login(f.key), ['uidl', 1], ['quit']]);
        const uid = one.steps[2]!.resp!.split(' ')[2]!;
        expect(uid).to.match(/^~[A-Za-z0-9_-]{43}$/);
        expect(two.steps[2]!.resp!).to.equal(one.steps[2]!.resp!);
    });
});
