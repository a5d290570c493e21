import * as Fs from 'node:fs';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { EmailPage, EmailView } from '../../../adapters/hapi/api-types';
import { createSmtpListener, type SmtpListener } from '../../../adapters/smtp';
import { isInboxCaptureError, type InboxCaptureErrorCode } from '../../../lib/errors';
import { adversarialMessages } from '../../fixtures/adversarial/generate';
import { followDownload } from '../../helpers/downloads';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';
import { postgresS3Stores, sqliteFsStores, type StoreFactory } from '../../helpers/test-stores';
import { rawRequest } from '../../helpers/raw-http';
import { isWellFormed, strictUtf8, stringsOf } from '../../helpers/text';
import { dataPayload, RawSmtpSession, sendRawMessage } from '../../helpers/raw-smtp';

// Every message of the corpus (and every generated hostile one) goes through every path
// into the service and onto every store: over SMTP onto SQLite + files, and through
// ingestForApi onto Postgres + S3, each message checked end to end (stored or refused,
// and what was stored served back as valid UTF-8, the raw bytes exact). A third pass, SMTP
// onto Postgres + S3, repeats a pairing whose parts the first two already prove for every
// message: the SMTP listener hands the service the same bytes whatever the store, and
// every message's text has been through the Postgres columns and every blob through S3.
// So that pass takes only what could differ there: every hostile message, every message
// whose SMTP delivery is more than a copy of its bytes or carries 8-bit or NUL bytes
// (`specialOverSmtp`), the large ones, and a fixed sample of the rest (every
// SAMPLE_EVERY-th): 86 of 332. That pass took 73 of the file's 180 s in CI
// (docs/testing.md, "Where the time goes").

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const CORPUS_DIR = Path.join(__dirname, '..', '..', 'fixtures', 'corpus');

/** Bound of one message's delivery and checks, ms: the 10,000-part case writes up to 1,000 blobs to s3rver. */
const MESSAGE_TIMEOUT_MS = 120_000;

/** Attachments downloaded per message: enough to check each kind, few enough for the many-parts case. */
const MAX_DOWNLOADS_PER_MESSAGE = 5;

/** SMTP refusals of the message itself (TOO_LARGE, NO_RECIPIENT): permanent, typed, never a 4xx. */
const SMTP_REFUSALS = [550, 552];

/** Core refusals of the message itself; anything else (a store rejecting text) is a bug. */
const INGEST_REFUSALS: InboxCaptureErrorCode[] = ['TOO_LARGE', 'NO_RECIPIENT', 'INVALID_INPUT'];

/** The SMTP pass onto Postgres + S3 takes every n-th message that is not special over SMTP. */
const SAMPLE_EVERY = 8;

/** Messages above this size, bytes, are always in the sampled pass: they stream in many chunks. */
const LARGE_MESSAGE_BYTES = 64 * 1024;

/** Whether a message's DATA payload has a dot doubled (the server must take it out again). */
function dotStuffed(raw: Buffer): boolean {
    const { payload, stored } = dataPayload(raw);
    return payload.length !== stored.length + '.\r\n'.length;
}

/**
 * Whether a message's delivery over SMTP is more than a copy of its bytes, or carries
 * what a store's text columns could choke on: a line starting with a dot (stuffed and
 * unstuffed), a byte above 0x7f or a NUL, or a size that takes many reads. (A missing
 * final CRLF is not special: most of the corpus ends in a bare LF.)
 */
function specialOverSmtp(raw: Buffer): boolean {
    return dotStuffed(raw) || raw.some((byte) => byte > 0x7f || byte === 0) || raw.length > LARGE_MESSAGE_BYTES;
}

/** Every input of this suite: the real-world corpus, then the generated hostile messages. */
function inputs(): Array<{ name: string; raw: Buffer; hostile: boolean }> {
    const corpus = Fs.readdirSync(CORPUS_DIR)
        .filter((file) => file.endsWith('.eml'))
        .sort()
        .map((file) => ({ name: file, raw: Fs.readFileSync(Path.join(CORPUS_DIR, file)), hostile: false }));
    const hostile = adversarialMessages().map((m) => ({ name: `adversarial ${m.name}`, raw: m.raw, hostile: true }));
    return [...corpus, ...hostile];
}

/**
 * The response of a JSON endpoint as a client sees it: valid UTF-8 (a fatal decoder,
 * not Buffer#toString, which repairs silently), parseable, every string well-formed
 * and unchanged by a UTF-8 round trip.
 */
function jsonOf(res: { statusCode: number; headers: Record<string, unknown>; body: Buffer }, what: string): unknown {
    expect(res.statusCode, `${what}: status`).to.equal(200);
    expect(String(res.headers['content-type']), `${what}: content type`).to.startWith('application/json');
    const text = strictUtf8(res.body);
    const value: unknown = JSON.parse(text);
    for (const [path, string] of stringsOf(value)) {
        expect(isWellFormed(string), `${what}: ${path} is well-formed`).to.be.true();
        expect(Buffer.from(string, 'utf8').toString('utf8') === string, `${what}: ${path} survives UTF-8`).to.be.true();
    }

    return value;
}

/** One backend under test: the plugin on a listening server and an SMTP listener feeding the same service. */
interface Rig {
    provisioned: ProvisionedServer;
    httpPort: number;
    smtp: SmtpListener;
    smtpPort: number;
    smtpLog: string[];
    session: RawSmtpSession | null;
}

async function startRig(stores: StoreFactory): Promise<Rig> {
    const provisioned = await provisionServer({ stores, listen: true });
    const smtpLog: string[] = [];
    const smtp = createSmtpListener({
        capture: provisioned.api.capture,
        port: 0,
        log: (message, error) => smtpLog.push(`${message}: ${String(error)}`)
    });
    const { port: smtpPort } = await smtp.listen();
    return { provisioned, httpPort: provisioned.server.info.port as number, smtp, smtpPort, smtpLog, session: null };
}

async function stopRig(rig: Rig | undefined): Promise<void> {
    if (!rig) {
        return;
    }

    if (rig.session) {
        await rig.session.end();
    }

    await rig.smtp.close();
    await rig.provisioned.cleanup();
}

/** Sends one message over the rig's SMTP session (opened, or reopened after a close, as needed). */
async function sendOverSmtp(rig: Rig, raw: Buffer, recipient: string): Promise<number> {
    if (!rig.session || rig.session.socket.destroyed) {
        const { session, greeting } = await RawSmtpSession.open(rig.smtpPort);
        expect(greeting.code).to.equal(220);
        expect((await session.command('EHLO corpus.test')).code).to.equal(250);
        rig.session = session;
    }

    return (await sendRawMessage(rig.session, raw, [recipient])).code;
}

/**
 * Everything a client can read of an inbox that holds the one message `stored` was
 * made from: the list page, the email by its id, the raw .eml (byte for byte) and
 * its attachments, all valid UTF-8 JSON (or the exact bytes) and never a 5xx.
 */
async function expectServed(rig: Rig, inbox: string, stored: Buffer): Promise<void> {
    const { provisioned, httpPort } = rig;
    const get = (path: string) => rawRequest(httpPort, path, { headers: provisioned.auth });

    const page = jsonOf(await get(`/v1/emails?inbox=${inbox}`), 'list') as EmailPage;
    expect(page.emails).to.have.length(1);
    const listed = page.emails[0];

    const one = jsonOf(await get(`/v1/emails/${encodeURIComponent(listed.messageId)}`), 'get') as EmailView;
    expect(one).to.equal(listed);

    const raw = await get(one.rawUrl);
    expect(raw.statusCode, 'raw download redirects').to.equal(302);
    const rawDownload = await followDownload(provisioned.server, String(raw.headers.location));
    expect(rawDownload.statusCode).to.equal(200);
    expect(rawDownload.body.equals(stored), 'the raw .eml is the message as delivered').to.be.true();

    for (const attachment of one.attachments.slice(0, MAX_DOWNLOADS_PER_MESSAGE)) {
        const link = await get(attachment.url);
        expect(link.statusCode, `attachment ${JSON.stringify(attachment.filename)} redirects`).to.equal(302);
        const download = await followDownload(provisioned.server, String(link.headers.location));
        expect(download.statusCode).to.equal(200);
        expect(download.body.length).to.equal(attachment.size);
    }
}

async function expectEmpty(rig: Rig, inbox: string): Promise<void> {
    const page = jsonOf(await rawRequest(rig.httpPort, `/v1/emails?inbox=${inbox}`, { headers: rig.provisioned.auth }), 'list') as EmailPage;
    expect(page.emails).to.equal([]);
}

describe('corpus over SMTP and HTTP', () => {

    const messages = inputs();
    // `<backend> <path>` → outcome → count, printed at the end: the figures of the README.
    const outcomes = new Map<string, Record<string, number>>();
    const tally = (where: string, outcome: string) => {
        const counts = outcomes.get(where) ?? {};
        counts[outcome] = (counts[outcome] ?? 0) + 1;
        outcomes.set(where, counts);
    };

    after(() => {
        for (const [where, counts] of outcomes) {
            console.log(`corpus-smtp-postgres ${where}: ${JSON.stringify(counts)}`);
        }
    });

    it('has the corpus and the hostile messages', () => {
        expect(messages.length).to.be.at.least(300);
    });

    // The passes: a path onto a store, and which messages it takes (by index).
    const every = () => true;
    const sampled = (index: number) => messages[index].hostile || index % SAMPLE_EVERY === 0 || specialOverSmtp(messages[index].raw);
    const backends: Array<{ stores: StoreFactory; paths: Array<{ path: 'smtp' | 'ingestForApi'; takes: (index: number) => boolean }> }> = [
        { stores: sqliteFsStores(), paths: [{ path: 'smtp', takes: every }] },
        { stores: postgresS3Stores(), paths: [{ path: 'ingestForApi', takes: every }, { path: 'smtp', takes: sampled }] }
    ];

    it('sends every message over SMTP onto one store and through ingestForApi onto the other, and every special one over SMTP onto both', () => {
        const left = messages.filter((_, index) => !sampled(index));
        expect(left.length, 'the sampled pass leaves most messages to the other two').to.be.above(messages.length / 2);
        const kinds: Record<string, (raw: Buffer) => boolean> = {
            hostile: (raw) => messages.some((m) => m.hostile && m.raw === raw),
            'dot-stuffed': dotStuffed,
            '8-bit': (raw) => raw.some((byte) => byte > 0x7f),
            NUL: (raw) => raw.includes(0),
            large: (raw) => raw.length > LARGE_MESSAGE_BYTES
        };
        for (const [kind, is] of Object.entries(kinds)) {
            expect(messages.some((m) => is(m.raw)), `the inputs hold a ${kind} message`).to.be.true();
            expect(left.filter((m) => is(m.raw)).map((m) => m.name), `${kind} messages left out`).to.equal([]);
        }
    });

    for (const { stores, paths } of backends) {
        describe(stores.name, () => {

            let rig: Rig | undefined;
            let release: (() => Promise<void>) | undefined;

            before(async () => {
                release = await stores.hold?.();
                rig = await startRig(stores);
            });

            after(async () => {
                await stopRig(rig);
                await release?.();
            });

            for (const { path, takes } of paths) {
                describe(`through ${path}`, () => {

                    for (const [index, { name, raw }] of messages.entries()) {
                        if (!takes(index)) {
                            continue;
                        }

                        // One inbox per message: a repeated Message-ID elsewhere in the corpus must not replace it.
                        const inbox = `${path === 'smtp' ? 's' : 'i'}-${String(index).padStart(4, '0')}`;
                        const recipient = `${inbox}@example.test`;

                        it(`stores or refuses ${name}, and serves what it stored as valid UTF-8`, { timeout: MESSAGE_TIMEOUT_MS }, async () => {
                            const where = `${stores.name} ${path}`;
                            if (path === 'smtp') {
                                const code = await sendOverSmtp(rig!, raw, recipient);
                                tally(where, String(code));
                                if (code === 250) {
                                    await expectServed(rig!, inbox, dataPayload(raw).stored);
                                    return;
                                }

                                expect(SMTP_REFUSALS, `reply ${code} is a refusal of the message, not a failure`).to.include(code);
                                await expectEmpty(rig!, inbox);
                                return;
                            }

                            try {
                                await rig!.provisioned.api.ingestForApi(raw, { recipients: [recipient] });
                            }
                            catch (err) {
                                if (!isInboxCaptureError(err) || !INGEST_REFUSALS.includes(err.code)) {
                                    throw err;
                                }

                                tally(where, err.code);

                                await expectEmpty(rig!, inbox);
                                return;
                            }

                            tally(where, 'stored');
                            await expectServed(rig!, inbox, raw);
                        });
                    }
                });
            }

            // Lab runs a describe's own tests before its nested ones: a nested block declared
            // last runs after every delivery.
            describe('afterwards', () => {

                it('logged no storage failure', () => {
                    expect(rig!.smtpLog).to.equal([]);
                });
            });
        });
    }
});
