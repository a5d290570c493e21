import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { isInboxCaptureError, type InboxCaptureError, type InboxCaptureErrorCode } from '../../../lib/errors';
import { GENERATED_ID_DOMAIN } from '../../../lib/identity/ids';
import type { IngestContext, IngestOptions } from '../../../lib/ingest/ingest';
import { createMessageBudget } from '../../../lib/util/message-budget';
import { createNotifier, type Notifier } from '../../../lib/long-poll/notifier';
import { emptyParsedMessage } from '../../../lib/mime/parse';
import { createParsePool } from '../../../lib/mime/parse-pool';
import { parseSearchQuery } from '../../../lib/search/parse-query';
import { MAX_RECIPIENTS } from '../../../lib/identity/recipients';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import type { RecordStore } from '../../../lib/record-store/record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import type { EmailRecord } from '../../../lib/types';
import { blobKeys, readBlob } from '../../helpers/blob-contents';
import { ingestOnce, testIngestContext } from '../../helpers/ingest-context';
import { manyRecipientsMessage } from '../../helpers/many-recipients';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

type Flags = Lab.script.Flags;

const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'eml');
const fixture = (name: string): Promise<Buffer> => readFile(join(FIXTURES, name));
const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'));

/** 1x1 PNG of the attachments fixture. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

interface Provisioned {
    recordStore: RecordStore;
    blobStore: BlobStore;
    notifier: Notifier;
    logged: Array<{ message: string; error?: unknown }>;
    /** The context the ingest is built from, with the stores above (override any part). */
    context(overrides?: Partial<IngestContext>): IngestContext;
    /** One ingest through an ingest built from context(): envelope options go to the call, the rest to the context. */
    ingest(raw: Buffer | string | Readable, options?: IngestOptions & Partial<IngestContext>): Promise<EmailRecord[]>;
    allBlobKeys(): Promise<string[]>;
    readBlob(key: string): Promise<Buffer | null>;
    records(inbox: string): Promise<EmailRecord[]>;
}

/** Real stores in a fresh temp dir: SQLite records, filesystem blobs. Removed by the test's cleanup. */
async function provision(flags: Flags): Promise<Provisioned> {
    const dir = await tempDir('ingest-test');
    const recordStore = createKnexRecordStore({ knex: openSqliteKnex(join(dir, 'db.sqlite')), destroyKnexOnClose: true });
    const blobStore = createFsBlobStore({ root: join(dir, 'blobs'), signingSecret: randomBytes(32) });
    flags.onCleanup = async () => {
        await recordStore.close();
        await rm(dir, { recursive: true, force: true });
    };

    await recordStore.migrate();
    const notifier = createNotifier();
    const logged: Provisioned['logged'] = [];
    const context = (overrides: Partial<IngestContext> = {}): IngestContext => testIngestContext({
        recordStore,
        blobStore,
        notifier,
        log: (message, error) => logged.push({ message, error }),
        ...overrides
    });

    return {
        recordStore,
        blobStore,
        notifier,
        logged,
        context,
        ingest: (raw, options = {}) => ingestOnce(raw, { ...context(), ...options }),
        allBlobKeys: () => blobKeys(blobStore),
        readBlob: (key) => readBlob(blobStore, key),
        async records(inbox) {
            const page = await recordStore.listEmails({ inbox, limit: 100 });
            return page.records;
        }
    };
}

/** Expects `promise` to reject with an InboxCaptureError of `code` and returns it. */
async function rejectsWith(promise: Promise<unknown>, code: InboxCaptureErrorCode): Promise<InboxCaptureError> {
    const err = await expect(promise).to.reject();
    expect(isInboxCaptureError(err), String(err)).to.be.true();
    expect((err as InboxCaptureError).code).to.equal(code);
    return err as InboxCaptureError;
}

/** An endless stream of 64 KiB chunks that counts how many were pulled from it. */
function endlessMessage(): { stream: Readable; pulled: () => number } {
    let count = 0;
    const head = crlf('To: big@example.com\nSubject: endless\n\n');
    const line = Buffer.alloc(64 * 1024, 0x61);
    const stream = new Readable({
        read() {
            this.push(count++ === 0 ? head : line);
        }
    });

    return { stream, pulled: () => count };
}

describe('ingest', () => {

    describe('createIngest()', () => {

        it('stores a plain message with every field of the email object and returns the stored copy', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('plain-text.eml');
            const copies = await p.ingest(raw, { receivedAt: 1_750_000_000_000 });

            expect(copies).to.equal([{
                messageId: 'plain-1@example.com',
                sourceId: 'plain-1@example.com',
                inbox: 'inbox',
                sender: 'sender@example.com',
                senderName: 'Sender Name',
                recipient: 'inbox@example.com',
                subject: 'Plain text',
                body: 'Hello,\nthis is the plain text body.\n',
                htmlBody: '',
                attachments: [],
                receivedAt: 1_750_000_000_000,
                rawKey: copies[0].rawKey,
                rawSize: raw.length,
                rawSha256: createHash('sha256').update(raw).digest('hex'),
                links: [],
                codes: [],
                tags: [],
                seen: false
            }]);

            const stored = await p.recordStore.getEmail('plain-1@example.com');
            expect(stored).to.include({ sourceId: 'plain-1@example.com', inbox: 'inbox', receivedAt: 1_750_000_000_000, rawSize: raw.length });
        });

        it('refuses with BUSY and stores nothing when its memory budget is spent, and gives the budget back when done', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('plain-text.eml');
            const messageBudget = createMessageBudget(raw.length + 10);
            const held = messageBudget.reserve(20)!;
            await rejectsWith(p.ingest(raw, { messageBudget }), 'BUSY');
            await rejectsWith(p.ingest(Readable.from([raw]), { messageBudget }), 'BUSY');
            expect(await p.allBlobKeys()).to.equal([]);
            held.release();
            expect(messageBudget.heldBytes).to.equal(0);
            const [copy] = await p.ingest(raw, { messageBudget });
            expect(copy.messageId).to.exist();
            expect(messageBudget.heldBytes).to.equal(0);
        });

        it('takes over a reservation the caller holds and releases it, stored or refused', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('plain-text.eml');
            const messageBudget = createMessageBudget(10 * raw.length);
            const stored = messageBudget.reserve(raw.length)!;
            await p.ingest(raw, { messageBudget, reservation: stored });
            expect(stored.bytes).to.equal(0);
            const refused = messageBudget.reserve(0)!;
            await rejectsWith(p.ingest(raw, { messageBudget, reservation: refused, maxMessageBytes: 10 }), 'TOO_LARGE');
            expect(messageBudget.heldBytes).to.equal(0);
        });

        for (const [name, shows] of [['attachments.eml', 'attachments'], ['html-only.eml', 'links and codes']] as const) {
            it(`stores from a worker parse exactly what the in-thread parse stores, attachments byte for byte, links and codes found in the worker (${name})`, async (flags: Flags) => {
                const p = await provision(flags);
                const pool = createParsePool();
                try {
                    const raw = await fixture(name);
                    const options = { receivedAt: 1_000, recipients: ['a@example.com'] };
                    const [inThread] = await p.ingest(raw, options);
                    const [inWorker] = await p.ingest(raw, { ...options, recipients: ['b@example.com'], parse: (bytes) => pool.parse(bytes) });
                    const fields = (r: EmailRecord) => ({ ...r, messageId: undefined, inbox: undefined, recipient: undefined, rawKey: undefined, attachments: r.attachments.map((a) => ({ ...a, blobKey: undefined })) });
                    expect(fields(inWorker!)).to.equal(fields(inThread!));
                    if (shows === 'attachments') {
                    expect(inWorker!.attachments.length).to.be.above(0);
                }
                else {
                    expect(inWorker!.links).to.equal([{ href: 'https://example.com/verify?token=abc&x=1', text: 'this link' }]);
                    expect(inWorker!.codes).to.equal(['123456']);
                }
                    for (const [i, a] of inWorker!.attachments.entries()) {
                        expect(await p.readBlob(a.blobKey)).to.equal(await p.readBlob(inThread!.attachments[i]!.blobKey));
                    }
                }
                finally {
                    await pool.close();
                }
            });
        }

        it('fails the ingest whose parse worker dies, stores nothing of it, gives its budget back, and stores the next one', async (flags: Flags) => {
            const p = await provision(flags);
            const pool = createParsePool({ workerFile: join(__dirname, '..', '..', 'fixtures', 'workers', 'crashing-parse-worker.js') });
            try {
                const raw = await fixture('plain-text.eml');
                const messageBudget = createMessageBudget(raw.length * 4);
                await expect(p.ingest(raw, { messageBudget, parse: (bytes) => pool.parse(bytes) })).to.reject(/the parse worker exited/);
                expect(await p.allBlobKeys()).to.equal([]);
                expect(messageBudget.heldBytes).to.equal(0);
                const [copy] = await p.ingest(raw, { messageBudget });
                expect(copy!.messageId).to.equal('plain-1@example.com');
            }
            finally {
                await pool.close();
            }
        });

        it('stores a message whose parse was abandoned with its header fields read again, its raw message, and empty bodies and attachments, found by a search of its envelope and headers', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('attachments.eml');
            const abandoned = async () => ({ ...emptyParsedMessage(), abandoned: true, error: new Error('the parse took longer than 10000 ms and was abandoned') });
            const [copy] = await p.ingest(raw, { recipients: ['<envelope@example.com>'], mailFrom: 'bounce@sender.test', parse: abandoned });
            expect({ ...copy!, messageId: undefined, rawKey: undefined, receivedAt: undefined }).to.equal({
                messageId: undefined, rawKey: undefined, receivedAt: undefined, sourceId: 'att-1@example.com',
                inbox: 'envelope', recipient: 'envelope@example.com', sender: 'sender@example.com', senderName: '',
                subject: 'Attachments', body: '', htmlBody: '', rawSize: raw.length, rawSha256: createHash('sha256').update(raw).digest('hex'),
                attachments: [], links: [], codes: [], tags: [], seen: false,
                // The envelope sender is kept for the authentication check too.
                smtpClient: { address: null, helo: null, mailFrom: 'bounce@sender.test' }
            });
            const found = await p.recordStore.listEmails({ inbox: 'envelope', limit: 10, q: parseSearchQuery('from:sender@example to:envelope@example subject:attachments') });
            expect(found.records.map((r) => r.messageId)).to.equal([copy!.messageId]);
            expect((await p.recordStore.listEmails({ inbox: 'envelope', limit: 10, q: parseSearchQuery('from:someone-else') })).records).to.equal([]);
            expect(await p.readBlob(copy!.rawKey)).to.equal(raw);
            expect(p.logged.map((l) => (l.error as Error).message)).to.equal(['the parse took longer than 10000 ms and was abandoned']);
            // Without an envelope recipient its To header routes it, as after a whole parse.
            const [byHeader] = await p.ingest(raw, { parse: abandoned });
            expect([byHeader!.inbox, byHeader!.recipient, byHeader!.subject]).to.equal(['inbox', 'inbox@example.com', 'Attachments']);
            await rejectsWith(p.ingest(Buffer.from('From: a@example.com\r\nSubject: nobody\r\n\r\nbody\r\n'), { parse: abandoned }), 'NO_RECIPIENT');
        });

        it('takes receivedAt from the clock when no override is given', async (flags: Flags) => {
            const p = await provision(flags);
            const before = Date.now();
            const [view] = await p.ingest(await fixture('plain-text.eml'));
            const after = Date.now();
            expect(view.receivedAt).to.be.within(before, after);
        });

        it('refuses a receivedAt that is not Unix milliseconds with INVALID_INPUT', async (flags: Flags) => {
            const p = await provision(flags);
            await rejectsWith(p.ingest(await fixture('plain-text.eml'), { receivedAt: -5 }), 'INVALID_INPUT');
            await rejectsWith(p.ingest(await fixture('plain-text.eml'), { receivedAt: 1.5 }), 'INVALID_INPUT');
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('keeps the SMTP client\'s address, HELO name and envelope sender with every copy; none given: no smtpClient', async (flags: Flags) => {
            const p = await provision(flags);
            const copies = await p.ingest(await fixture('plain-text.eml'), { recipients: ['one@example.test', 'two@example.test'], clientAddress: '::ffff:192.0.2.7', clientHelo: '[192.0.2.7]', mailFrom: '' });
            expect(copies.map((c) => c.smtpClient)).to.equal([
                { address: '::ffff:192.0.2.7', helo: '[192.0.2.7]', mailFrom: '' },
                { address: '::ffff:192.0.2.7', helo: '[192.0.2.7]', mailFrom: '' }
            ]);
            expect((await p.recordStore.getEmail(copies[1].messageId))!.smtpClient).to.equal({ address: '::ffff:192.0.2.7', helo: '[192.0.2.7]', mailFrom: '' });
            const [plain] = await p.ingest(crlf('From: a@example.test\nTo: plain@example.test\nSubject: no session\n\nbody\n'));
            expect(plain).to.not.include('smtpClient');
            expect((await p.recordStore.getEmail(plain.messageId))).to.not.include('smtpClient');
        });

        it('refuses a client address, HELO name or envelope sender that is not one with INVALID_INPUT, before storing anything', async (flags: Flags) => {
            const p = await provision(flags);
            for (const options of [
                { clientAddress: 'mail.example.test' }, { clientAddress: '192.0.2.300' }, { clientAddress: 'fe80::1%eth0' },
                { clientHelo: 'two words' }, { clientHelo: '' }, { clientHelo: 'h'.repeat(256) }, { clientHelo: 'caf\u00e9.test' },
                { mailFrom: 'a@b.test\r\nRCPT TO:<x@y>' }, { mailFrom: `${'a'.repeat(992)}@b.test` }
            ] as IngestOptions[]) {
                await rejectsWith(p.ingest(await fixture('plain-text.eml'), options), 'INVALID_INPUT');
            }

            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('stores the raw message byte for byte as message/rfc822 under a key of our own', async (flags: Flags) => {
            const p = await provision(flags);
            const puts: Array<{ key: string; contentType: string }> = [];
            const blobStore: BlobStore = {
                ...p.blobStore,
                put(key, body, contentType) {
                    puts.push({ key, contentType });
                    return p.blobStore.put(key, body, contentType);
                }
            };

            // CRLF, a bare LF, trailing spaces and 8-bit bytes: nothing may be normalised.
            const raw = Buffer.concat([crlf('To: raw@example.com\nSubject: raw  \n\nline one  \n'), Buffer.from('bare\nlf\r\n\xff\xfe end', 'latin1')]);
            await p.ingest(raw, { blobStore });
            const [record] = await p.records('raw');

            expect(record.rawKey).to.match(/^[0-9a-f]{28}\/raw\.eml$/);
            expect(record.rawSize).to.equal(raw.length);
            expect((await p.readBlob(record.rawKey))!.equals(raw)).to.be.true();
            expect(puts).to.equal([{ key: record.rawKey, contentType: 'message/rfc822' }]);
        });

        it('accepts the message as a string (UTF-8) and as a stream', async (flags: Flags) => {
            const p = await provision(flags);
            const text = 'To: str@example.com\r\nSubject: Grüße\r\nMessage-ID: <str@x>\r\n\r\nÜber\r\n';
            await p.ingest(text);
            await p.ingest(Readable.from([Buffer.from('To: stream@example.com\r\nMessage-ID: <stream@x>\r\n'), Buffer.from('\r\nchunked\r\n')]));

            const [fromString] = await p.records('str');
            expect(fromString.subject).to.equal('Grüße');
            expect((await p.readBlob(fromString.rawKey))!.equals(Buffer.from(text, 'utf8'))).to.be.true();
            const [fromStream] = await p.records('stream');
            expect(fromStream.body).to.equal('chunked\n');
        });

        it('stores each attachment byte for byte, in message order, with its decoded size, name and type', async (flags: Flags) => {
            const p = await provision(flags);
            const [copy] = await p.ingest(await fixture('attachments.eml'));
            const prefix = copy.rawKey.slice(0, -'/raw.eml'.length);

            expect(copy.attachments).to.equal([
                { filename: '0-logo.png', contentType: 'image/png', size: PNG.length, blobKey: `${prefix}/att/0`, contentId: 'logo@example.com' },
                { filename: '1-report.pdf', contentType: 'application/pdf', size: 77, blobKey: `${prefix}/att/1` },
                { filename: '2-attachment.bin', contentType: 'application/octet-stream', size: 256, blobKey: `${prefix}/att/2` }
            ]);

            const record = (await p.recordStore.getEmail('att-1@example.com'))!;
            expect(record.attachments).to.equal(copy.attachments);
            expect(record.attachments.map((a) => a.blobKey)).to.equal([`${prefix}/att/0`, `${prefix}/att/1`, `${prefix}/att/2`]);

            const contents = await Promise.all(record.attachments.map((a) => p.readBlob(a.blobKey)));
            expect(contents[0]!.equals(PNG)).to.be.true();
            expect(contents[1]!.toString('latin1')).to.equal('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
            expect(contents[2]!.equals(Buffer.from(Array.from({ length: 256 }, (_, i) => i)))).to.be.true();
            contents.forEach((content, i) => expect(content!.length).to.equal(record.attachments[i].size));
        });

        it('keeps the HTML as sent, cid: references included', async (flags: Flags) => {
            const p = await provision(flags);
            const [view] = await p.ingest(await fixture('attachments.eml'));
            expect(view.htmlBody).to.equal('<p>See the logo <img src="cid:logo@example.com"> and the report.</p>');
            expect(view.body).to.equal('See the logo and the report.');
        });

        it('names attachments from RFC 2047 (B and Q) and RFC 2231 file names', async (flags: Flags) => {
            const p = await provision(flags);
            const [encoded] = await p.ingest(await fixture('encoded-words.eml'));
            const [rfc2231] = await p.ingest(await fixture('rfc2231.eml'));
            expect(encoded.attachments.map((a) => a.filename)).to.equal(['0-Rechnung März.txt', '1-Grüße à vous.pdf']);
            expect(rfc2231.attachments.map((a) => a.filename)).to.equal(['0-€ rates 2025.csv', '1-Sehr langer Dateiname für den Test.txt']);
            expect(encoded.messageId).to.equal('encoded-1@example.com');
        });

        it('makes hostile attachment names safe and keeps the blob keys our own', async (flags: Flags) => {
            const p = await provision(flags);
            const [view] = await p.ingest(await fixture('hostile-names.eml'));
            expect(view.attachments.map((a) => a.filename)).to.equal([
                '0-_.._etc_passwd',
                '1-C:_evil.exe',
                '2-invoice_fdp.exe',
                '3-evil_name__.txt',
                '4-htaccess'
            ]);

            const record = (await p.recordStore.getEmail(view.messageId))!;
            for (const attachment of record.attachments) {
                expect(attachment.blobKey).to.match(/^[0-9a-f]{28}\/att\/\d$/);
            }

            expect((await p.readBlob(record.attachments[0].blobKey))!.toString()).to.equal('root:x:0:0');
        });

        it('keeps two attachments with the same name apart by their index', async (flags: Flags) => {
            const p = await provision(flags);
            const [view] = await p.ingest(await fixture('same-name.eml'));
            expect(view.attachments.map((a) => a.filename)).to.equal(['0-data.csv', '1-data.csv']);
            const record = (await p.recordStore.getEmail(view.messageId))!;
            expect((await p.readBlob(record.attachments[0].blobKey))!.toString()).to.equal('first,file');
            expect((await p.readBlob(record.attachments[1].blobKey))!.toString()).to.equal('second,file');
        });

        it('takes the Message-ID trimmed and without angle brackets, odd characters kept', async (flags: Flags) => {
            const p = await provision(flags);
            const [special] = await p.ingest(await fixture('message-id-special.eml'));
            const [spaces] = await p.ingest(await fixture('message-id-space.eml'));
            const [unicode] = await p.ingest(await fixture('message-id-unicode.eml'));

            expect(special.messageId).to.equal('a/b+c%d#e?f&g=h@example.com');
            expect(spaces.messageId).to.equal('with some spaces@example.com');
            expect(unicode.messageId).to.equal('ünïcødé-東京@exämple.com');
            expect(await p.recordStore.getEmail('ünïcødé-東京@exämple.com')).to.exist();
        });

        it('generates a URL-safe id for a message without Message-ID', async (flags: Flags) => {
            const p = await provision(flags);
            const [first] = await p.ingest(await fixture('no-message-id.eml'));
            const [second] = await p.ingest(await fixture('no-message-id.eml'));
            const pattern = new RegExp(`^[A-Za-z0-9_-]{22}@${GENERATED_ID_DOMAIN}$`);
            expect(first.messageId).to.match(pattern);
            expect(second.messageId).to.match(pattern);
            // No id to recognise it by: the second delivery is a second email, not a replacement.
            expect(second.messageId).to.not.equal(first.messageId);
            expect(await p.records('inbox')).to.have.length(2);
        });

        it('works out links and codes once from the parsed fields and stores them on every copy', async (flags: Flags) => {
            // Worked out once, at ingest, and shared by the copies (docs/design.md, "The email object").
            const p = await provision(flags);
            const raw = crlf([
                'From: Example <noreply@example.com>',
                'To: a@example.com, b@example.com',
                'Subject: Your code is 482913',
                'Message-ID: <signup-links@example.com>',
                'MIME-Version: 1.0',
                'Content-Type: multipart/alternative; boundary="b"',
                '',
                '--b',
                'Content-Type: text/plain; charset=utf-8',
                '',
                'Confirm: https://example.com/confirm?t=abc',
                'Help: https://example.com/help.',
                '--b',
                'Content-Type: text/html; charset=utf-8',
                '',
                '<p><a href="https://example.com/confirm?t=abc&amp;src=mail">Confirm <b>account</b></a></p>',
                '--b--',
                ''
            ].join('\n'));
            const copies = await p.ingest(raw);
            const expected = {
                links: [
                    { href: 'https://example.com/confirm?t=abc&src=mail', text: 'Confirm account' },
                    { href: 'https://example.com/confirm?t=abc', text: 'https://example.com/confirm?t=abc' },
                    { href: 'https://example.com/help', text: 'https://example.com/help' }
                ],
                codes: ['482913']
            };
            expect(copies).to.have.length(2);
            for (const copy of copies) {
                expect(copy).to.include(expected);
                expect(await p.recordStore.getEmail(copy.messageId)).to.include(expected);
            }
        });

        it('finds the code and link of a message with only HTML in the body derived from it', async (flags: Flags) => {
            const p = await provision(flags);
            const [root] = await p.ingest(await fixture('html-only.eml'));
            expect(root.links).to.equal([{ href: 'https://example.com/verify?token=abc&x=1', text: 'this link' }]);
            expect(root.codes).to.equal(['123456']);
        });

        it('stores one copy per inbox of the To and Cc addresses, with derived ids', async (flags: Flags) => {
            const p = await provision(flags);
            const views = await p.ingest(await fixture('recipients.eml'));

            expect(views.map((v) => [v.inbox, v.recipient, v.messageId])).to.equal([
                ['alice-tag', 'Alice+Tag@example.com', 'rcpt-1@example.com~alice-tag'],
                ['john-doe', '"john doe"@example.com', 'rcpt-1@example.com~john-doe'],
                ['carol', 'carol@example.com', 'rcpt-1@example.com~carol'],
                ['dave', 'dave@example.com', 'rcpt-1@example.com~dave'],
                ['bob', 'bob@example.com', 'rcpt-1@example.com~bob'],
                ['upper', 'UPPER@Example.com', 'rcpt-1@example.com~upper']
            ]);

            // alice+tag@another.example maps to alice-tag too: still one copy there.
            expect(await p.records('alice-tag')).to.have.length(1);

            // The copies share the delivery's one raw blob (docs/design.md, "What happens to a message › Deletes and shared blobs").
            const records = await Promise.all(views.map((v) => p.recordStore.getEmail(v.messageId)));
            expect(new Set(records.map((r) => r!.rawKey)).size).to.equal(1);
            expect(await p.allBlobKeys()).to.equal([records[0]!.rawKey]);
        });

        it('takes the envelope recipients instead of the headers when given', async (flags: Flags) => {
            const p = await provision(flags);
            const views = await p.ingest(await fixture('recipients.eml'), { recipients: ['<Envelope+One@example.com>', 'two@example.com', 'ENVELOPE+one@other.example'] });
            expect(views.map((v) => [v.inbox, v.recipient])).to.equal([
                ['envelope-one', 'Envelope+One@example.com'],
                ['two', 'two@example.com']
            ]);
            expect(await p.records('bob')).to.equal([]);
        });

        it('falls back to the headers when the envelope list is empty', async (flags: Flags) => {
            const p = await provision(flags);
            const views = await p.ingest(await fixture('plain-text.eml'), { recipients: [] });
            expect(views.map((v) => v.inbox)).to.equal(['inbox']);
        });

        it('derives the id of a later copy in another inbox from the Message-ID and the inbox', async (flags: Flags) => {
            const p = await provision(flags);
            const [first] = await p.ingest(await fixture('plain-text.eml'));
            const [second] = await p.ingest(await fixture('plain-text.eml'), { recipients: ['other@example.com'] });
            expect(first.messageId).to.equal('plain-1@example.com');
            expect(second.messageId).to.equal('plain-1@example.com~other');
        });

        it('maps addresses with the inboxFromAddress option and skips names the API could not query', async (flags: Flags) => {
            const p = await provision(flags);
            const seen: string[] = [];
            const inboxFromAddress = (address: string) => {
                seen.push(address);
                return address.startsWith('bad') ? 'Not Valid!' : 'custom';
            };

            const views = await p.ingest(await fixture('plain-text.eml'), { recipients: ['bad@x', 'a@x', 'b@x'], inboxFromAddress });
            expect(seen).to.equal(['bad@x', 'a@x', 'b@x']);
            expect(views.map((v) => [v.inbox, v.recipient])).to.equal([['custom', 'a@x']]);
            expect(p.logged.some((l) => l.message.includes('invalid inbox'))).to.be.true();

            await rejectsWith(p.ingest(await fixture('plain-text.eml'), { recipients: ['bad@x'], inboxFromAddress }), 'NO_RECIPIENT');
        });

        it('refuses a message whose To header maps to more than MAX_RECIPIENTS inboxes with TOO_MANY_RECIPIENTS and stores nothing', async (flags: Flags) => {
            const p = await provision(flags);
            // 2,000 To addresses used to be 2,000 copies.
            await rejectsWith(p.ingest(manyRecipientsMessage(2000)), 'TOO_MANY_RECIPIENTS');
            await rejectsWith(p.ingest(manyRecipientsMessage(MAX_RECIPIENTS + 1)), 'TOO_MANY_RECIPIENTS');
            expect(await p.records('0')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);

            const copies = await p.ingest(manyRecipientsMessage(MAX_RECIPIENTS));
            expect(copies).to.have.length(MAX_RECIPIENTS);
            expect(await p.records(String(MAX_RECIPIENTS - 1))).to.have.length(1);
        });

        it('refuses explicit recipients of more than MAX_RECIPIENTS inboxes, and counts inboxes, not addresses', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('plain-text.eml');
            const distinct = Array.from({ length: MAX_RECIPIENTS + 1 }, (_, i) => `e${i}@x`);
            await rejectsWith(p.ingest(raw, { recipients: distinct }), 'TOO_MANY_RECIPIENTS');
            expect(await p.records('e0')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);

            // 2,000 envelope addresses of one inbox are one copy.
            const sameInbox = Array.from({ length: 2000 }, (_, i) => `same@host-${i}.test`);
            expect(await p.ingest(raw, { recipients: sameInbox })).to.have.length(1);
        });

        it('refuses a message without usable recipients with NO_RECIPIENT and stores nothing', async (flags: Flags) => {
            const p = await provision(flags);
            await rejectsWith(p.ingest(crlf('From: a@example.com\nSubject: nobody\nMessage-ID: <nobody@x>\n\nbody\n')), 'NO_RECIPIENT');
            await rejectsWith(p.ingest(crlf('To: @example.com, "" <>\nMessage-ID: <empty-local@x>\n\nbody\n')), 'NO_RECIPIENT');
            await rejectsWith(p.ingest(await fixture('plain-text.eml'), { inboxFromAddress: () => null }), 'NO_RECIPIENT');
            expect(await p.recordStore.getEmail('nobody@x')).to.be.null();
            expect(await p.records('inbox')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('takes the sender from From, else from the envelope MAIL FROM, else ""', async (flags: Flags) => {
            const p = await provision(flags);
            const [fromHeader] = await p.ingest(await fixture('unicode.eml'), { mailFrom: 'envelope@example.com' });
            const [fromEnvelope] = await p.ingest(await fixture('no-from.eml'), { mailFrom: '<bounce@example.com>' });
            const [none] = await p.ingest(crlf('To: nofrom@example.com\nMessage-ID: <none@x>\n\nbody\n'));
            expect(fromHeader.sender).to.equal('juergen@example.com');
            expect(fromEnvelope.sender).to.equal('bounce@example.com');
            expect(none.sender).to.equal('');
        });

        it('takes body and htmlBody from multipart/alternative', async (flags: Flags) => {
            const p = await provision(flags);
            const [view] = await p.ingest(await fixture('alternative.eml'));
            expect(view.body).to.equal('Plain version');
            expect(view.htmlBody).to.equal('<html><body><p>HTML version</p></body></html>');
        });

        it('derives the body from the HTML of a message with only HTML', async (flags: Flags) => {
            const p = await provision(flags);
            const [root] = await p.ingest(await fixture('html-only.eml'));
            const [mixed] = await p.ingest(await fixture('html-with-attachment.eml'));
            expect(root.body).to.equal('Welcome\n\nYour code is 123456.\n\nOpen this link [https://example.com/verify?token=abc&x=1] to verify.\n\nFish & chips <3');
            expect(root.htmlBody).to.contain('<script>alert(\'never shown\')</script>');
            expect(mixed.body).to.equal('Only HTML here');
            expect(mixed.attachments.map((a) => a.filename)).to.equal(['0-a.pdf']);
        });

        it('stores "" for a missing subject and for a message with neither text nor HTML', async (flags: Flags) => {
            const p = await provision(flags);
            const [noSubject] = await p.ingest(await fixture('no-subject.eml'));
            const [noBody] = await p.ingest(crlf('To: nobody-text@example.com\nSubject: only a file\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: application/pdf\n\n%PDF\n--b--\n'));
            expect(noSubject.subject).to.equal('');
            expect(noBody).to.include({ body: '', htmlBody: '', subject: 'only a file' });
            expect(noBody.attachments.map((a) => [a.filename, a.size])).to.equal([['0-attachment.pdf', 4]]);
        });

        it('stores unicode subject and body', async (flags: Flags) => {
            const p = await provision(flags);
            const [view] = await p.ingest(await fixture('unicode.eml'));
            expect(view.subject).to.equal('Grüße aus Köln – 東京 🎉');
            expect(view.body).to.equal('Grüße, 東京, emoji 🎉 and a rocket 🚀.\n');
            const [encoded] = await p.ingest(await fixture('encoded-words.eml'));
            expect(encoded.subject).to.equal('Überweisung für März');
        });

        it('replaces an earlier copy in the same inbox: one record, newest receivedAt, old blobs gone', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('attachments.eml');
            await p.ingest(raw, { receivedAt: 1000 });
            const old = (await p.recordStore.getEmail('att-1@example.com'))!;
            const oldKeys = [old.rawKey, ...old.attachments.map((a) => a.blobKey)];

            const [view] = await p.ingest(raw, { receivedAt: 2000 });
            expect(view.messageId).to.equal('att-1@example.com');
            expect(view.receivedAt).to.equal(2000);

            const records = await p.records('inbox');
            expect(records).to.have.length(1);
            expect(records[0].receivedAt).to.equal(2000);
            for (const key of oldKeys) {
                expect(await p.readBlob(key), key).to.be.null();
            }

            const fresh = [records[0].rawKey, ...records[0].attachments.map((a) => a.blobKey)].sort();
            expect(await p.allBlobKeys()).to.equal(fresh);
        });

        it('keeps an earlier copy when its Message-ID arrives again with other bytes: another email under <id>~<inbox>~<digest>', async (flags: Flags) => {
            const p = await provision(flags);
            const message = (code: string) => Buffer.from(`From: a@x.test\r\nTo: inbox@x.test\r\nMessage-ID: <same@x.test>\r\nSubject: code\r\n\r\nYour code is ${code}.\r\n`);
            await p.ingest(message('482913'), { receivedAt: 1000 });
            const [second] = await p.ingest(message('777777'), { receivedAt: 2000 });
            const digest = createHash('sha256').update(message('777777')).digest('hex');
            expect(second.messageId).to.equal(`same@x.test~inbox~${digest.slice(0, 12)}`);
            expect((await p.recordStore.getEmail('same@x.test'))!.codes).to.equal(['482913']);
            expect((await p.records('inbox')).map((r) => [r.messageId, r.codes[0]])).to.equal([[second.messageId, '777777'], ['same@x.test', '482913']]);

            // Each of them sent again as it was replaces only itself; a third content is a third email.
            expect((await p.ingest(message('482913'), { receivedAt: 3000 }))[0].messageId).to.equal('same@x.test');
            expect((await p.ingest(message('777777'), { receivedAt: 4000 }))[0].messageId).to.equal(second.messageId);
            await p.ingest(message('111111'), { receivedAt: 5000 });
            expect((await p.records('inbox')).map((r) => r.codes[0])).to.equal(['111111', '777777', '482913']);
        });

        it('refuses a Buffer over maxMessageBytes with TOO_LARGE and stores nothing', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('attachments.eml');
            await rejectsWith(p.ingest(raw, { maxMessageBytes: raw.length - 1 }), 'TOO_LARGE');
            expect(await p.records('inbox')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);

            // Exactly at the cap is accepted.
            expect(await p.ingest(raw, { maxMessageBytes: raw.length })).to.have.length(1);
        });

        it('stops reading a stream over maxMessageBytes early, with TOO_LARGE, and stores nothing', async (flags: Flags) => {
            const p = await provision(flags);
            const { stream, pulled } = endlessMessage();
            await rejectsWith(p.ingest(stream, { maxMessageBytes: 1024 * 1024 }), 'TOO_LARGE');
            expect(stream.destroyed).to.be.true();
            // 1 MiB is 16 chunks of 64 KiB; a few more may be buffered ahead, never the endless rest.
            expect(pulled()).to.be.at.most(16 + 5);
            expect(await p.records('big')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('caps messages at 25 MiB by default', async (flags: Flags) => {
            const p = await provision(flags);
            const head = crlf('To: huge@example.com\n\n');
            const raw = Buffer.concat([head, Buffer.alloc(25 * 1024 * 1024 - head.length + 1, 0x61)]);
            await rejectsWith(p.ingest(raw), 'TOO_LARGE');
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('removes what it wrote and throws BLOB_STORE_FAILED when a blob write fails midway', async (flags: Flags) => {
            const p = await provision(flags);
            let puts = 0;
            const failure = new Error('disk full');
            const blobStore: BlobStore = {
                ...p.blobStore,
                put(key, body, contentType) {
                    return ++puts === 2 ? Promise.reject(failure) : p.blobStore.put(key, body, contentType);
                }
            };

            const err = await rejectsWith(p.ingest(await fixture('attachments.eml'), { blobStore }), 'BLOB_STORE_FAILED');
            expect(err.cause).to.shallow.equal(failure);
            expect(puts).to.equal(2);
            expect(await p.recordStore.getEmail('att-1@example.com')).to.be.null();
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('writes one raw blob and one blob per attachment for a delivery to 100 inboxes, shared by every copy', async (flags: Flags) => {
            const p = await provision(flags);
            const puts: string[] = [];
            const blobStore: BlobStore = {
                ...p.blobStore,
                put(key, body, contentType) {
                    puts.push(key);
                    return p.blobStore.put(key, body, contentType);
                }
            };

            const recipients = Array.from({ length: MAX_RECIPIENTS }, (_, i) => `r${i}@x`);
            const views = await p.ingest(await fixture('attachments.eml'), { blobStore, recipients });
            expect(views).to.have.length(MAX_RECIPIENTS);
            const first = views[0]!;
            const keys = [first.rawKey, ...first.attachments.map((a) => a.blobKey)];
            expect(keys).to.have.length(4);
            expect(puts).to.equal(keys);
            expect(await p.allBlobKeys()).to.equal([...keys].sort());
            for (const view of views) {
                expect([view.rawKey, ...view.attachments.map((a) => a.blobKey)]).to.equal(keys);
            }
        });

        it('removes the blobs it wrote when a later attachment fails to write', async (flags: Flags) => {
            const p = await provision(flags);
            let puts = 0;
            const blobStore: BlobStore = {
                ...p.blobStore,
                put(key, body, contentType) {
                    // The raw message and the first attachment are written, the second fails.
                    return ++puts === 3 ? Promise.reject(new Error('quota')) : p.blobStore.put(key, body, contentType);
                }
            };

            await rejectsWith(p.ingest(await fixture('attachments.eml'), { blobStore, recipients: ['one@x', 'two@x'] }), 'BLOB_STORE_FAILED');
            expect(puts).to.equal(3);
            expect(await p.records('one')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('replacing one copy keeps the blobs the other copies share; replacing the last removes them', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = await fixture('attachments.eml');
            const [one] = await p.ingest(raw, { recipients: ['one@x', 'two@x'], receivedAt: 1000 });
            const oldKeys = [one!.rawKey, ...one!.attachments.map((a) => a.blobKey)];

            // The same message again for one: two's copy still references the first delivery's blobs.
            const [again] = await p.ingest(raw, { recipients: ['one@x'], receivedAt: 2000 });
            const newKeys = [again!.rawKey, ...again!.attachments.map((a) => a.blobKey)];
            expect(await p.allBlobKeys()).to.equal([...oldKeys, ...newKeys].sort());
            const [two] = await p.records('two');
            expect(await p.readBlob(two!.rawKey)).to.equal(raw);
            expect(p.logged).to.equal([]);

            // And for two: nothing references them any more.
            const [last] = await p.ingest(raw, { recipients: ['two@x'], receivedAt: 3000 });
            expect(await p.allBlobKeys()).to.equal([...newKeys, last!.rawKey, ...last!.attachments.map((a) => a.blobKey)].sort());
        });

        it('logs a failed cleanup and still throws BLOB_STORE_FAILED', async (flags: Flags) => {
            const p = await provision(flags);
            const blobStore: BlobStore = {
                ...p.blobStore,
                put: (key, body, contentType) => key.endsWith('/att/0') ? Promise.reject(new Error('io')) : p.blobStore.put(key, body, contentType),
                delete: () => Promise.reject(new Error('delete failed'))
            };

            await rejectsWith(p.ingest(await fixture('attachments.eml'), { blobStore }), 'BLOB_STORE_FAILED');
            expect(p.logged.map((l) => (l.error as Error).message)).to.equal(['delete failed']);
            expect(await p.records('inbox')).to.equal([]);
        });

        it('removes what it wrote and throws RECORD_STORE_UNAVAILABLE when saving the records fails', async (flags: Flags) => {
            const p = await provision(flags);
            const failure = new Error('database is locked');
            const recordStore: RecordStore = { ...p.recordStore, saveEmails: () => Promise.reject(failure) };

            const err = await rejectsWith(p.ingest(await fixture('attachments.eml'), { recordStore, recipients: ['one@x', 'two@x'] }), 'RECORD_STORE_UNAVAILABLE');
            expect(err.cause).to.shallow.equal(failure);
            expect(await p.records('one')).to.equal([]);
            expect(await p.allBlobKeys()).to.equal([]);
        });

        it('leaves the blobs to the orphan sweep when it cannot tell whether the failed save committed', async (flags: Flags) => {
            const p = await provision(flags);
            const recordStore: RecordStore = {
                ...p.recordStore,
                saveEmails: () => Promise.reject(new Error('connection lost')),
                referencedBlobKeys: () => Promise.reject(new Error('still down'))
            };

            await rejectsWith(p.ingest(await fixture('plain-text.eml'), { recordStore }), 'RECORD_STORE_UNAVAILABLE');
            expect(await p.allBlobKeys()).to.have.length(1);
            expect(p.logged.map((l) => (l.error as Error).message)).to.equal(['still down']);
        });

        it('keeps the blobs a failed save did commit (a lost answer after the commit)', async (flags: Flags) => {
            const p = await provision(flags);
            const recordStore: RecordStore = {
                ...p.recordStore,
                saveEmails: async (drafts) => {
                    await p.recordStore.saveEmails(drafts);
                    throw new Error('connection reset after commit');
                }
            };

            await rejectsWith(p.ingest(await fixture('attachments.eml'), { recordStore }), 'RECORD_STORE_UNAVAILABLE');
            const record = (await p.recordStore.getEmail('att-1@example.com'))!;
            for (const key of [record.rawKey, ...record.attachments.map((a) => a.blobKey)]) {
                expect(await p.readBlob(key), key).to.exist();
            }
        });

        it('publishes each inbox that received mail once', async (flags: Flags) => {
            const p = await provision(flags);
            const published: string[] = [];
            for (const inbox of ['alice-tag', 'john-doe', 'carol', 'dave', 'bob', 'upper', 'absent']) {
                p.notifier.subscribe(inbox, () => published.push(inbox));
            }

            await p.ingest(await fixture('recipients.eml'));
            expect(published).to.equal(['alice-tag', 'john-doe', 'carol', 'dave', 'bob', 'upper']);
        });

        it('publishes only after the records are visible', async (flags: Flags) => {
            const p = await provision(flags);
            const visible: boolean[] = [];
            const notifier: Notifier = {
                ...p.notifier,
                publish: (inbox) => {
                    // saveEmails has resolved when this runs; check through the store right away.
                    visible.push(inbox === 'inbox');
                    void p.records(inbox).then((records) => visible.push(records.length === 1));
                }
            };

            await p.ingest(await fixture('plain-text.eml'), { notifier });
            await new Promise((resolve) => setTimeout(resolve, 50));
            expect(visible).to.equal([true, true]);
        });

        it('does not fail an ingest whose notifier throws', async (flags: Flags) => {
            const p = await provision(flags);
            const notifier: Notifier = { ...p.notifier, publish: () => {
                throw new Error('listener broke');
            } };

            const views = await p.ingest(await fixture('plain-text.eml'), { notifier });
            expect(views).to.have.length(1);
            expect(p.logged.map((l) => (l.error as Error).message)).to.equal(['listener broke']);
        });

        it('stores garbage bytes addressed by the envelope, raw bytes intact, fields empty', async (flags: Flags) => {
            const p = await provision(flags);
            // Deterministic, and without CR/LF: a blank line would make the rest a body.
            const raw = Buffer.alloc(32 * 1024);
            let seed = 0x2545f491;
            for (let i = 0; i < raw.length; i++) {
                seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
                const byte = seed >>> 24;
                raw[i] = byte === 0x0a || byte === 0x0d ? 0x20 : byte;
            }

            const [view] = await p.ingest(raw, { recipients: ['garbage@example.com'], mailFrom: 'who@example.com' });
            expect(view).to.include({ inbox: 'garbage', recipient: 'garbage@example.com', sender: 'who@example.com', subject: '', body: '', htmlBody: '' });
            expect(view.messageId).to.endWith(`@${GENERATED_ID_DOMAIN}`);
            const record = (await p.recordStore.getEmail(view.messageId))!;
            expect((await p.readBlob(record.rawKey))!.equals(raw)).to.be.true();
        });

        it('stores an empty message addressed by the envelope', async (flags: Flags) => {
            const p = await provision(flags);
            const [view] = await p.ingest(Buffer.alloc(0), { recipients: ['empty@example.com'] });
            expect(view).to.include({ inbox: 'empty', sender: '', subject: '', body: '', htmlBody: '', attachments: [] });
            const record = (await p.recordStore.getEmail(view.messageId))!;
            expect(record.rawSize).to.equal(0);
            expect((await p.readBlob(record.rawKey))!.length).to.equal(0);
        });

        it('stores HTML nested 5,000 deep with its text (regression: html-to-text overflowed the stack)', async (flags: Flags) => {
            const p = await provision(flags);
            const html = '<div>'.repeat(5000) + 'deep inside' + '</div>'.repeat(5000);
            const [view] = await p.ingest(crlf(`To: deep@example.com\nMessage-ID: <deep@x>\nContent-Type: text/html\n\n${html}\n`));
            expect(view.htmlBody).to.equal(html + '\n');
            expect(view.body).to.equal('deep inside');
        });

        it('stores a message the parser gives up on, with what it read, and logs why', async (flags: Flags) => {
            const p = await provision(flags);
            const raw = crlf(`X-Huge: ${'a'.repeat(1024 * 1024 + 10)}\nTo: lost@example.com\nSubject: lost\n\nbody\n`);
            const [view] = await p.ingest(raw, { recipients: ['kept@example.com'] });
            expect(view).to.include({ inbox: 'kept', subject: '', body: '' });
            const record = (await p.recordStore.getEmail(view.messageId))!;
            expect((await p.readBlob(record.rawKey))!.equals(raw)).to.be.true();
            expect(p.logged).to.have.length(1);
            expect(p.logged[0].error).to.be.an.error();
        });

        it('returns the stored copies as the record store holds them (the adapters build views)', async (flags: Flags) => {
            const p = await provision(flags);
            const copies = await p.ingest(await fixture('recipients.eml'));
            expect(copies).to.have.length(6);
            for (const copy of copies) {
                expect(Object.keys(copy).sort()).to.equal([
                    'attachments', 'body', 'codes', 'htmlBody', 'inbox', 'links', 'messageId', 'rawKey', 'rawSha256', 'rawSize', 'receivedAt', 'recipient',
                    'seen', 'sender', 'senderName', 'sourceId', 'subject', 'tags'
                ]);
                expect(await p.recordStore.getEmail(copy.messageId)).to.equal(copy);
            }
        });
    });
});
