import { randomBytes } from 'node:crypto';
import * as Code from '@hapi/code';
import type * as Lab from '@hapi/lab';
import { isInboxCaptureError } from '../../lib/errors';
import { contentDerivedId, deriveMessageId, MAX_MESSAGE_ID_BYTES, sha256Hex } from '../../lib/identity/ids';
import type { RecordStore } from '../../lib/record-store/record-store';
import { searchTextFor } from '../helpers/email-draft';
import type { CursorPosition, EmailDraft, EmailRecord, ListQuery } from '../../lib/types';

const { expect } = Code;

/** A store to test and how to dispose of it. */
export interface OpenedRecordStore {
    store: RecordStore;
    cleanup: () => Promise<void>;
}

/** The parts of a lab script the contract registers its tests with. */
export type ContractScript = Pick<ReturnType<typeof Lab.script>, 'describe' | 'it' | 'before' | 'after'>;

/** A fixed clock far from "now", so receivedAt values are ours alone. */
const BASE_TIME = 1_700_000_000_000;

/** Every key an EmailRecord has: nothing more may leak out of a store. */
const RECORD_KEYS = [
    'attachments', 'body', 'codes', 'htmlBody', 'inbox', 'links', 'messageId', 'rawKey', 'rawSha256', 'rawSize',
    'receivedAt', 'recipient', 'seen', 'sender', 'senderName', 'sourceId', 'subject', 'tags'
];

let counter = 0;

/** A name no other test of this process uses (ids and inboxes are global to a store). */
function unique(prefix: string): string {
    return `${prefix}${++counter}-${randomBytes(4).toString('hex')}`;
}

function newInbox(): string {
    return unique('box');
}

function draft(inbox: string, overrides: Partial<EmailDraft> = {}): EmailDraft {
    const n = ++counter;
    const tag = randomBytes(4).toString('hex');
    const fields = {
        sourceId: `msg-${n}-${tag}@example.test`,
        inbox,
        sender: 'alice@example.test',
        senderName: '',
        recipient: `${inbox}@example.test`,
        subject: `Subject ${n}`,
        body: `Body ${n}`,
        htmlBody: `<p>Body ${n}</p>`,
        receivedAt: BASE_TIME + n,
        rawKey: `raw-${tag}-${n}`,
        rawSize: 1000 + n,
        rawSha256: 'a'.repeat(64),
        attachments: [],
        links: [],
        codes: [],
        tags: [],
        ...overrides
    };
    return { ...fields, searchText: overrides.searchText ?? searchTextFor(fields) };
}

/** The record a store holds for a draft saved under `messageId`: the draft's fields, without what is stored beside them. */
function recordOf(d: EmailDraft, messageId: string): EmailRecord {
    const fields: Partial<EmailDraft> = { ...d };
    delete fields.searchText;
    return { messageId, links: [], codes: [], seen: false, ...fields } as EmailRecord;
}

/** Byte order of UTF-8 (= code point order), what both backends must sort by. */
function byteCompare(a: string, b: string): number {
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The order listEmails promises: receivedAt desc, then messageId desc in byte order. */
function newestFirst(records: EmailRecord[]): EmailRecord[] {
    return [...records].sort((a, b) => b.receivedAt - a.receivedAt || byteCompare(b.messageId, a.messageId));
}

function positionOf(record: EmailRecord): CursorPosition {
    return { receivedAt: record.receivedAt, messageId: record.messageId };
}

function ids(records: EmailRecord[]): string[] {
    return records.map((r) => r.messageId);
}

async function saveOne(store: RecordStore, d: EmailDraft): Promise<EmailRecord> {
    const result = await store.saveEmails([d]);
    return result.saved[0]!;
}

/** Pages through a whole query with the cursor; checks the page envelope on the way. */
async function listAll(store: RecordStore, query: ListQuery): Promise<EmailRecord[]> {
    const all: EmailRecord[] = [];
    let after: CursorPosition | undefined;
    for (let pages = 0; pages < 1000; pages++) {
        const page = await store.listEmails({ ...query, after });
        all.push(...page.records);
        if (!page.hasMore) {
            expect(page.records.length).to.be.at.most(query.limit);
            return all;
        }

        expect(page.records.length).to.equal(query.limit);
        after = positionOf(page.records[page.records.length - 1]!);
    }

    throw new Error('listAll did not finish');
}

/**
 * Registers the behaviour every RecordStore must have. Call it from a test file
 * with that file's lab script; `open` gives a migrated store, used by every test
 * of the run (tests keep apart by using inboxes, ids and key names of their own).
 */
export function recordStoreContract(script: ContractScript, name: string, open: () => Promise<OpenedRecordStore>): void {
    const { describe, it, before, after } = script;

    describe(`RecordStore contract (${name})`, () => {
        let opened: OpenedRecordStore | undefined;
        const store = () => opened!.store;

        before(async () => {
            opened = await open();
        });

        after(async () => {
            await opened?.cleanup();
        });

        describe('migrate()', () => {
            it('is safe to run again and keeps what is stored', async () => {
                const saved = await saveOne(store(), draft(newInbox()));
                await store().migrate();
                expect(await store().getEmail(saved.messageId)).to.equal(saved);
            });
        });

        describe('saveEmails()', () => {
            it('returns nothing for no drafts', async () => {
                expect(await store().saveEmails([])).to.equal({ saved: [], replaced: [] });
            });

            it('stores a single-inbox delivery under the bare Message-ID', async () => {
                const d = draft(newInbox());
                const result = await store().saveEmails([d]);
                expect(result.replaced).to.equal([]);
                expect(result.saved).to.have.length(1);
                expect(result.saved[0]!.messageId).to.equal(d.sourceId);
                expect(await store().getEmail(d.sourceId)).to.equal(result.saved[0]!);
            });

            it('stores every field as given and returns plain records', async () => {
                const d = draft(newInbox(), {
                    sender: 'Zoë <zoe@example.test>',
                    subject: 'Grüße 👋',
                    body: 'line 1\r\nline 2',
                    htmlBody: '<p>Grüße</p>',
                    rawSize: 123_456_789,
                    rawSha256: 'a'.repeat(64),
                    attachments: [
                        { filename: '0-report.pdf', contentType: 'application/pdf', size: 5000, blobKey: unique('att') },
                        { filename: '1-image.png', contentType: 'image/png', size: 0, blobKey: unique('att') }
                    ]
                });

                const saved = await saveOne(store(), d);
                expect(saved).to.equal(recordOf(d, d.sourceId));

                const got = await store().getEmail(saved.messageId);
                expect(got).to.equal(saved);
                expect(Object.keys(got!).sort()).to.equal(RECORD_KEYS);
                expect(Object.keys(got!.attachments[0]!).sort()).to.equal(['blobKey', 'contentType', 'filename', 'size']);

                const page = await store().listEmails({ inbox: d.inbox, limit: 10 });
                expect(page.records).to.equal([saved]);
                expect(Object.keys(page.records[0]!).sort()).to.equal(RECORD_KEYS);
            });

            it('stores texts of several MiB exactly, astral characters at every 4 Mi-character cut', async () => {
                // 'x' then pairs: a cut at an even index would fall inside a surrogate pair.
                const body = `x${'\u{1f4e8}é'.repeat(3 * 1024 * 1024)}`;
                const htmlBody = `<p>${'中'.repeat(5 * 1024 * 1024)}</p>`;
                const d = draft(newInbox(), { body, htmlBody });
                const saved = await saveOne(store(), d);
                const got = await store().getEmail(saved.messageId);
                expect(got!.body === body).to.be.true();
                expect(got!.htmlBody === htmlBody).to.be.true();
                const [listed] = (await store().listEmails({ inbox: d.inbox, limit: 10 })).records;
                expect(listed!.body === body && listed!.htmlBody === htmlBody).to.be.true();
            });

            it('stores the links and codes given and returns them from get and list', async () => {
                // A store keeps what it is given and never works them out again (docs/design.md, "The email object").
                const links = [{ href: 'https://x.test/a?b=1&c=2', text: 'Öffnen 👋' }, { href: 'mailto:a@x.test', text: '' }];
                const d = draft(newInbox(), { links, codes: ['482913', '0042'] });
                const saved = await saveOne(store(), d);
                expect(saved).to.include({ links, codes: ['482913', '0042'] });
                expect(await store().getEmail(saved.messageId)).to.equal(saved);
                expect((await store().listEmails({ inbox: d.inbox, limit: 10 })).records).to.equal([saved]);
            });

            it('stores links and codes as given and never works them out: none given for a body full of them reads back none', async () => {
                // Ingest works them out once (docs/design.md, "The email object"); a store that
                // did it again would answer these on one of the reads below.
                const d = draft(newInbox(), {
                    subject: 'Your code 739201',
                    body: 'Open https://x.test/t or https://x.test/u, code 482913, mail a@x.test.',
                    htmlBody: '<a href="https://x.test/v">Verify</a> <A HREF=\'mailto:help@x.test\'>Help</A> 551177',
                    links: [],
                    codes: []
                });
                const saved = await saveOne(store(), d);
                expect(saved).to.include({ links: [], codes: [] });
                expect(await store().getEmail(saved.messageId)).to.include({ links: [], codes: [] });
                expect((await store().listEmails({ inbox: d.inbox, limit: 10 })).records[0]).to.include({ links: [], codes: [] });
                expect((await store().listEmails({ inbox: d.inbox, limit: 10, maxBytes: 1 })).records[0]).to.include({ links: [], codes: [] });

                // Given ones that are not what a search would find are kept as they are, too.
                const kept = { links: [{ href: 'https://elsewhere.test/', text: 'not in the body' }], codes: ['0000'] };
                const other = await saveOne(store(), draft(d.inbox, { subject: 'Code 739201', body: 'https://x.test/w', ...kept }));
                expect(await store().getEmail(other.messageId)).to.include(kept);
                const deleted = await store().deleteEmail(saved.messageId);
                expect(deleted).to.include({ links: [], codes: [] });
            });

            it('gives every copy of a multi-inbox delivery the derived id', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const source = unique('multi') + '@example.test';
                const result = await store().saveEmails([draft(a, { sourceId: source }), draft(b, { sourceId: source })]);
                expect(ids(result.saved)).to.equal([deriveMessageId(source, a), deriveMessageId(source, b)]);
                expect(result.replaced).to.equal([]);
                expect(await store().getEmail(source)).to.be.null();
                expect((await store().getEmail(deriveMessageId(source, a)))!.inbox).to.equal(a);
                expect((await store().getEmail(deriveMessageId(source, b)))!.inbox).to.equal(b);
            });

            it('derives the id of a later delivery of the same message to another inbox', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const source = unique('later') + '@example.test';
                const first = await saveOne(store(), draft(a, { sourceId: source }));
                const second = await store().saveEmails([draft(b, { sourceId: source })]);
                expect(first.messageId).to.equal(source);
                expect(second.saved[0]!.messageId).to.equal(deriveMessageId(source, b));
                expect(second.replaced).to.equal([]);
                expect((await store().getEmail(source))!.inbox).to.equal(a);
            });

            it('derives the id when another message holds the bare id', async () => {
                const [a, b, c] = [newInbox(), newInbox(), newInbox()];
                const source = unique('holder') + '@example.test';
                await store().saveEmails([draft(a, { sourceId: source }), draft(b, { sourceId: source })]);

                // A different message whose Message-ID equals the derived id of the first.
                const lookalike = deriveMessageId(source, a);
                const saved = await saveOne(store(), draft(c, { sourceId: lookalike }));
                expect(saved.messageId).to.equal(deriveMessageId(lookalike, c));
                expect((await store().getEmail(lookalike))!.sourceId).to.equal(source);
            });

            it('finds a free id when the derived id belongs to another message', async () => {
                const [a, b, c] = [newInbox(), newInbox(), newInbox()];
                const source = unique('clash') + '@example.test';
                const squatter = await saveOne(store(), draft(c, { sourceId: deriveMessageId(source, b) }));
                expect(squatter.messageId).to.equal(deriveMessageId(source, b));

                const result = await store().saveEmails([draft(a, { sourceId: source }), draft(b, { sourceId: source })]);
                const [copyA, copyB] = result.saved;
                expect(copyA!.messageId).to.equal(deriveMessageId(source, a));
                expect(copyB!.messageId).to.not.equal(squatter.messageId);
                expect(await store().getEmail(copyB!.messageId)).to.equal(copyB!);
                expect(await store().getEmail(squatter.messageId)).to.equal(squatter);
            });

            it('replaces the copy of the same message in the same inbox and keeps its id', async () => {
                const inbox = newInbox();
                const source = unique('again') + '@example.test';
                const old = await saveOne(store(), draft(inbox, { sourceId: source, subject: 'old', receivedAt: BASE_TIME + 1 }));
                const newer = draft(inbox, { sourceId: source, subject: 'new', receivedAt: BASE_TIME + 2 });
                const result = await store().saveEmails([newer]);

                expect(result.replaced).to.equal([old]);
                expect(result.saved).to.equal([recordOf(newer, old.messageId)]);
                expect(await store().getEmail(source)).to.equal(result.saved[0]!);
                expect(ids((await store().listEmails({ inbox, limit: 10 })).records)).to.equal([source]);
            });

            it('keeps the copy when the same message arrives with other raw bytes: another email under <id>~<inbox>~<digest>', async () => {
                const inbox = newInbox();
                const source = unique('other-bytes') + '@example.test';
                const first = await saveOne(store(), draft(inbox, { sourceId: source, codes: ['482913'], rawSha256: '1'.repeat(64) }));
                const other = await store().saveEmails([draft(inbox, { sourceId: source, codes: ['777777'], rawSha256: '2'.repeat(64) })]);
                expect(other.replaced).to.equal([]);
                expect(ids(other.saved)).to.equal([contentDerivedId(source, inbox, '2'.repeat(64))]);
                expect(await store().getEmail(source)).to.equal(first);

                // The same bytes again replace only their own copy.
                const again = await store().saveEmails([draft(inbox, { sourceId: source, codes: ['777777'], rawSha256: '2'.repeat(64) })]);
                expect(again.replaced).to.equal(other.saved);
                expect(ids(again.saved)).to.equal(ids(other.saved));
                expect((await store().listEmails({ inbox, limit: 10 })).records.map((r) => r.codes)).to.equal([['777777'], ['482913']]);

                // A copy whose digest is unknown (stored before digests were kept) is replaced by nothing.
                const unknown = await store().saveEmails([draft(inbox, { sourceId: source, rawSha256: '' })]);
                expect(unknown.replaced).to.equal([]);
                const unknownAgain = await store().saveEmails([draft(inbox, { sourceId: source, rawSha256: '' })]);
                expect(unknownAgain.replaced).to.equal([]);
                expect((await store().listEmails({ inbox, limit: 10 })).records).to.have.length(4);
            });

            it('replaces every copy of a multi-inbox delivery that arrives again', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const source = unique('again-multi') + '@example.test';
                const first = await store().saveEmails([draft(a, { sourceId: source }), draft(b, { sourceId: source })]);
                const second = await store().saveEmails([
                    draft(a, { sourceId: source, subject: 'second a' }),
                    draft(b, { sourceId: source, subject: 'second b' })
                ]);

                expect(ids(second.saved)).to.equal(ids(first.saved));
                expect(second.replaced).to.equal(first.saved);
                expect((await store().getEmail(deriveMessageId(source, a)))!.subject).to.equal('second a');
                expect((await store().listEmails({ inbox: b, limit: 10 })).records).to.have.length(1);
            });

            it('keeps the bare id of a copy replaced by a delivery to several inboxes', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const source = unique('bare-kept') + '@example.test';
                const old = await saveOne(store(), draft(a, { sourceId: source }));
                const result = await store().saveEmails([draft(a, { sourceId: source }), draft(b, { sourceId: source })]);
                expect(ids(result.saved)).to.equal([source, deriveMessageId(source, b)]);
                expect(result.replaced).to.equal([old]);
            });

            it('stores all copies of a delivery or none', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const source = unique('atomic') + '@example.test';
                const broken = draft(b, { sourceId: source, receivedAt: Number.NaN });
                await expect(store().saveEmails([draft(a, { sourceId: source }), broken])).to.reject();
                expect(await store().getEmail(deriveMessageId(source, a))).to.be.null();
                expect((await store().listEmails({ inbox: a, limit: 10 })).records).to.equal([]);
                expect(await store().inboxVersion(a)).to.equal(0);
            });

            it('stores one record when 50 deliveries of the same message race', async () => {
                const inbox = newInbox();
                const d = draft(inbox);
                const results = await Promise.all(Array.from({ length: 50 }, () => store().saveEmails([{ ...d }])));

                for (const result of results) {
                    expect(ids(result.saved)).to.equal([d.sourceId]);
                }

                const replaced = results.flatMap((r) => r.replaced);
                expect(replaced).to.have.length(49);
                expect(replaced.every((r) => r.messageId === d.sourceId)).to.be.true();
                const page = await store().listEmails({ inbox, limit: 100 });
                expect(ids(page.records)).to.equal([d.sourceId]);
            });

            it('gives one bare id when a message races into several inboxes one by one', async () => {
                const inboxes = Array.from({ length: 10 }, newInbox);
                const source = unique('race') + '@example.test';
                const results = await Promise.all(inboxes.map((inbox) => store().saveEmails([draft(inbox, { sourceId: source })])));
                const saved = results.map((r) => r.saved[0]!);

                expect(saved.filter((r) => r.messageId === source)).to.have.length(1);
                for (const record of saved.filter((r) => r.messageId !== source)) {
                    expect(record.messageId).to.equal(deriveMessageId(source, record.inbox));
                }

                expect(new Set(ids(saved)).size).to.equal(10);
            });

            it('stores text with NUL and lone surrogates as valid strings', async () => {
                const inbox = newInbox();
                const saved = await saveOne(store(), draft(inbox, {
                    subject: 'a\u0000b\uD800c',
                    body: 'x\u0000y\uDC00z',
                    htmlBody: '<p>\u0000</p>',
                    sender: 'nul\u0000@example.test',
                    attachments: [{ filename: '0-a\u0000b', contentType: 'text/plain', size: 1, blobKey: unique('att') }]
                }));

                const got = (await store().getEmail(saved.messageId))!;
                expect(got).to.equal(saved);
                expect(got.subject).to.equal('ab\uFFFDc');
                expect(got.body).to.equal('xy\uFFFDz');
                expect(got.htmlBody).to.equal('<p></p>');
                expect(got.sender).to.equal('nul@example.test');
                expect(got.attachments[0]!.filename).to.equal('0-ab');

                const page = await store().listEmails({ inbox, limit: 10, subject: 'b\uFFFDc', sender: 'nul\u0000@' });
                expect(ids(page.records)).to.equal([saved.messageId]);
            });

            it('stores, finds and pages Message-IDs at the longest kept length', async () => {
                const inbox = newInbox();
                const stem = unique('long') + 'x'.repeat(MAX_MESSAGE_ID_BYTES);
                const longA = stem.slice(0, MAX_MESSAGE_ID_BYTES - 1) + 'a';
                const longB = stem.slice(0, MAX_MESSAGE_ID_BYTES - 1) + 'b';
                // 4 bytes each: exactly at the limit (docs/design.md).
                const wide = '😀'.repeat(MAX_MESSAGE_ID_BYTES / 4 - 4) + unique('w').slice(-16).padStart(16, 'w');
                const receivedAt = BASE_TIME + 5;
                const a = await saveOne(store(), draft(inbox, { sourceId: longA, receivedAt }));
                const b = await saveOne(store(), draft(inbox, { sourceId: longB, receivedAt }));
                const w = await saveOne(store(), draft(inbox, { sourceId: wide, receivedAt: receivedAt - 1 }));

                expect(a.messageId).to.equal(longA);
                expect(await store().getEmail(longB)).to.equal(b);
                expect(await store().getEmail(wide)).to.equal(w);

                // The two long ids differ only in their last character: the exact
                // tie-break has to look at the whole id.
                const first = await store().listEmails({ inbox, limit: 1 });
                expect(ids(first.records)).to.equal([longB]);
                expect(first.hasMore).to.be.true();
                const second = await store().listEmails({ inbox, limit: 1, after: positionOf(b) });
                expect(ids(second.records)).to.equal([longA]);
                const third = await store().listEmails({ inbox, limit: 1, after: positionOf(a) });
                expect(ids(third.records)).to.equal([wide]);
                expect(third.hasMore).to.be.false();
            });

            it('stores a Message-ID over the addressable length under its digest id, and replaces that copy on re-delivery', async () => {
                const inbox = newInbox();
                const sourceId = unique('over') + 'y'.repeat(MAX_MESSAGE_ID_BYTES);
                const first = await saveOne(store(), draft(inbox, { sourceId }));
                expect(first.messageId).to.equal(`${sha256Hex(sourceId)}@inbox-capture`);
                expect(first.sourceId).to.equal(sourceId);
                const again = await saveOne(store(), draft(inbox, { sourceId, subject: 'again' }));
                expect(again.messageId).to.equal(first.messageId);
                expect((await store().getEmail(first.messageId))!.subject).to.equal('again');
            });

            it('stores the Message-IDs . and .. as <id>~<inbox>', async () => {
                const inbox = newInbox();
                for (const sourceId of ['.', '..']) {
                    const saved = await saveOne(store(), draft(inbox, { sourceId }));
                    expect(saved.messageId).to.equal(`${sourceId}~${inbox}`);
                    expect(await store().getEmail(saved.messageId)).to.equal(saved);
                }
            });
        });

        describe('getEmail()', () => {
            it('returns null for an unknown id', async () => {
                expect(await store().getEmail(unique('nobody') + '@example.test')).to.be.null();
            });

            it('finds ids with URL-special, space and non-ASCII characters', async () => {
                const inbox = newInbox();
                for (const special of ['a/b+c%20d#e?f&g@h', 'with space@x', 'ünïcødé@例え.jp', '<angle>@x']) {
                    const saved = await saveOne(store(), draft(inbox, { sourceId: unique(special) }));
                    expect(await store().getEmail(saved.messageId)).to.equal(saved);
                }
            });
        });

        describe('listEmails()', () => {
            it('answers an empty page for an empty inbox', async () => {
                expect(await store().listEmails({ inbox: newInbox(), limit: 20 })).to.equal({ records: [], hasMore: false });
            });

            it('lists newest first', async () => {
                const inbox = newInbox();
                const saved = [];
                for (const offset of [5, 1, 9, 3]) {
                    saved.push(await saveOne(store(), draft(inbox, { receivedAt: BASE_TIME + offset })));
                }

                const page = await store().listEmails({ inbox, limit: 10 });
                expect(page.records.map((r) => r.receivedAt)).to.equal([9, 5, 3, 1].map((o) => BASE_TIME + o));
            });

            it('orders ties on receivedAt by messageId descending in byte order', async () => {
                const inbox = newInbox();
                const prefix = unique('tie');
                // Case, punctuation, U+FFFD vs an astral character (UTF-16 order
                // differs from byte order there), and a prefix of another id.
                const suffixes = ['B', '_', 'a', 'b', 'ab', 'a b', 'Z', 'z', '~', 'é', '\uFFFD', '😀', 'A', '0'];
                const saved = [];
                for (const suffix of suffixes) {
                    saved.push(await saveOne(store(), draft(inbox, { sourceId: prefix + suffix, receivedAt: BASE_TIME })));
                }

                const page = await store().listEmails({ inbox, limit: 100 });
                expect(ids(page.records)).to.equal(ids(newestFirst(saved)));
                expect(ids(page.records).slice(0, 3)).to.equal([prefix + '😀', prefix + '\uFFFD', prefix + 'é']);
                expect(ids(await listAll(store(), { inbox, limit: 3 }))).to.equal(ids(newestFirst(saved)));
            });

            it('lists only the inbox asked for', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const inA = await saveOne(store(), draft(a));
                await saveOne(store(), draft(b));
                expect(ids((await store().listEmails({ inbox: a, limit: 10 })).records)).to.equal([inA.messageId]);
            });

            it('says hasMore exactly when more records follow the page', async () => {
                const inbox = newInbox();
                for (let i = 0; i < 3; i++) {
                    await saveOne(store(), draft(inbox));
                }

                expect((await store().listEmails({ inbox, limit: 3 })).hasMore).to.be.false();
                expect((await store().listEmails({ inbox, limit: 4 })).hasMore).to.be.false();
                const short = await store().listEmails({ inbox, limit: 2 });
                expect(short.hasMore).to.be.true();
                expect(short.records).to.have.length(2);
            });

            it('pages through 250 records with no duplicates or gaps', async () => {
                const inbox = newInbox();
                const saved: EmailRecord[] = [];
                for (let i = 0; i < 250; i++) {
                    // Groups of up to 10 share receivedAt, so pages end inside ties.
                    const sourceId = `${unique(i % 2 ? 'P' : 'p')}-${'_%~'[i % 3]}@example.test`;
                    saved.push(await saveOne(store(), draft(inbox, { sourceId, receivedAt: BASE_TIME + ((i * 7) % 25) })));
                }

                const listed = await listAll(store(), { inbox, limit: 17 });
                expect(listed).to.have.length(250);
                expect(new Set(ids(listed)).size).to.equal(250);
                expect(ids(listed)).to.equal(ids(newestFirst(saved)));
            });

            it('starts strictly after the cursor position', async () => {
                const inbox = newInbox();
                const prefix = unique('cur');
                const saved: EmailRecord[] = [];
                for (const [suffix, offset] of [['a', 2], ['b', 2], ['c', 2], ['d', 1], ['e', 3]] as const) {
                    saved.push(await saveOne(store(), draft(inbox, { sourceId: prefix + suffix, receivedAt: BASE_TIME + offset })));
                }

                // Order: e@3, c@2, b@2, a@2, d@1.
                const fromB = await store().listEmails({ inbox, limit: 10, after: { receivedAt: BASE_TIME + 2, messageId: prefix + 'b' } });
                expect(ids(fromB.records)).to.equal([prefix + 'a', prefix + 'd']);

                // A position no record holds: between c and b.
                const between = await store().listEmails({ inbox, limit: 10, after: { receivedAt: BASE_TIME + 2, messageId: prefix + 'bb' } });
                expect(ids(between.records)).to.equal([prefix + 'b', prefix + 'a', prefix + 'd']);

                const afterLast = await store().listEmails({ inbox, limit: 10, after: positionOf(saved[3]!) });
                expect(afterLast).to.equal({ records: [], hasMore: false });

                const beforeAll = await store().listEmails({ inbox, limit: 10, after: { receivedAt: BASE_TIME + 99, messageId: 'a' } });
                expect(beforeAll.records).to.have.length(5);
            });

            describe('filters', () => {
                let inbox: string;
                const records = new Map<string, EmailRecord>();
                const senders = [
                    'Alice@Example.test', 'bob@example.test', '100%off@x.test', '100xoff@x.test',
                    'a_b@x.test', 'axb@x.test', 'back\\slash@x.test', 'backslash@x.test'
                ];
                const subjects = ['ÉTÉ Sale', 'Hello WORLD', '50% off', '50 off', 'snake_case', 'snakeXcase', 'C:\\path', 'C:path'];

                before(async () => {
                    inbox = newInbox();
                    for (let i = 0; i < senders.length; i++) {
                        const record = await saveOne(store(), draft(inbox, {
                            sender: senders[i]!,
                            subject: subjects[i]!,
                            receivedAt: BASE_TIME + i * 10,
                            attachments: i % 2 ? [{ filename: '0-a.txt', contentType: 'text/plain', size: 1, blobKey: unique('att') }] : []
                        }));
                        records.set(senders[i]!, record);
                    }
                });

                const sendersOf = async (query: Omit<ListQuery, 'inbox' | 'limit'>) => {
                    const page = await store().listEmails({ inbox, limit: 100, ...query });
                    return page.records.map((r) => r.sender).sort();
                };

                it('matches sender as a case-insensitive substring', async () => {
                    expect(await sendersOf({ sender: 'alice@EXAMPLE' })).to.equal(['Alice@Example.test']);
                    expect(await sendersOf({ sender: 'EXAMPLE.TEST' })).to.equal(['Alice@Example.test', 'bob@example.test']);
                    expect(await sendersOf({ sender: 'nobody' })).to.equal([]);
                });

                it('matches subject as a case-insensitive substring, beyond ASCII too', async () => {
                    expect(await sendersOf({ subject: 'world' })).to.equal(['bob@example.test']);
                    expect(await sendersOf({ subject: 'été' })).to.equal(['Alice@Example.test']);
                    expect(await sendersOf({ subject: 'SALE' })).to.equal(['Alice@Example.test']);
                });

                it('matches %, _ and \\ literally', async () => {
                    expect(await sendersOf({ sender: '%' })).to.equal(['100%off@x.test']);
                    expect(await sendersOf({ sender: '100%o' })).to.equal(['100%off@x.test']);
                    expect(await sendersOf({ sender: 'a_b' })).to.equal(['a_b@x.test']);
                    expect(await sendersOf({ sender: '_' })).to.equal(['a_b@x.test']);
                    expect(await sendersOf({ sender: '\\' })).to.equal(['back\\slash@x.test']);
                    expect(await sendersOf({ sender: 'k\\s' })).to.equal(['back\\slash@x.test']);
                    expect(await sendersOf({ subject: '0% o' })).to.equal(['100%off@x.test']);
                    expect(await sendersOf({ subject: 'e_c' })).to.equal(['a_b@x.test']);
                    expect(await sendersOf({ subject: ':\\' })).to.equal(['back\\slash@x.test']);
                });

                it('includes receivedAfter and excludes receivedBefore', async () => {
                    const at = (sender: string) => records.get(sender)!.receivedAt;
                    const pivot = at('100%off@x.test');
                    expect(await sendersOf({ receivedAfter: pivot })).to.equal(senders.slice(2).sort());
                    expect(await sendersOf({ receivedAfter: pivot + 1 })).to.equal(senders.slice(3).sort());
                    expect(await sendersOf({ receivedBefore: pivot })).to.equal(senders.slice(0, 2).sort());
                    expect(await sendersOf({ receivedBefore: pivot + 1 })).to.equal(senders.slice(0, 3).sort());
                    expect(await sendersOf({ receivedAfter: pivot, receivedBefore: pivot + 10 })).to.equal(['100%off@x.test']);
                    expect(await sendersOf({ receivedAfter: pivot, receivedBefore: pivot })).to.equal([]);
                });

                it('filters on having attachments or not', async () => {
                    expect(await sendersOf({ hasAttachments: true })).to.equal(senders.filter((_, i) => i % 2).sort());
                    expect(await sendersOf({ hasAttachments: false })).to.equal(senders.filter((_, i) => !(i % 2)).sort());
                });

                it('combines filters with AND', async () => {
                    expect(await sendersOf({ sender: 'x.test', subject: 'off' })).to.equal(['100%off@x.test', '100xoff@x.test']);
                    expect(await sendersOf({ sender: 'x.test', subject: 'off', hasAttachments: true })).to.equal(['100xoff@x.test']);
                    expect(await sendersOf({ sender: 'example', subject: 'off' })).to.equal([]);
                    expect(await sendersOf({ sender: 'x.test', receivedBefore: records.get('a_b@x.test')!.receivedAt })).to.equal(['100%off@x.test', '100xoff@x.test']);
                });

                it('pages through filtered results with the cursor', async () => {
                    const all = await store().listEmails({ inbox, limit: 100, sender: 'X.TEST' });
                    expect(all.records).to.have.length(6);
                    const paged = await listAll(store(), { inbox, limit: 4, sender: 'X.TEST' });
                    expect(ids(paged)).to.equal(ids(all.records));
                    const pagedBy1 = await listAll(store(), { inbox, limit: 1, hasAttachments: true });
                    expect(pagedBy1.map((r) => r.sender)).to.equal(['backslash@x.test', 'axb@x.test', '100xoff@x.test', 'bob@example.test']);
                });
            });

            it('throws on a limit below 1 rather than answering empty', async () => {
                await expect(store().listEmails({ inbox: newInbox(), limit: 0 })).to.reject();
            });

            describe('with maxBytes', () => {
                // Text of a draft besides its bodies: subject, attachment and link lists (`[]`).
                const big = (inbox: string, bytes: number, overrides: Partial<EmailDraft> = {}) => draft(inbox, { body: 'b'.repeat(bytes), htmlBody: '', subject: 's', ...overrides });

                it('ends the page once the stored text passes the budget, and says hasMore', async () => {
                    const inbox = newInbox();
                    const saved: EmailRecord[] = [];
                    for (let i = 0; i < 5; i++) {
                        saved.push(await saveOne(store(), big(inbox, 1000)));
                    }

                    const all = newestFirst(saved);
                    const page = await store().listEmails({ inbox, limit: 10, maxBytes: 2100 });
                    expect(ids(page.records)).to.equal(ids(all.slice(0, 2)));
                    expect(page.hasMore).to.be.true();
                    expect(page.records[0]!.body).to.equal('b'.repeat(1000));
                    const next = await store().listEmails({ inbox, limit: 10, maxBytes: 2100, after: positionOf(page.records[1]!) });
                    expect(ids(next.records)).to.equal(ids(all.slice(2, 4)));
                    const last = await store().listEmails({ inbox, limit: 10, maxBytes: 2100, after: positionOf(next.records[1]!) });
                    expect(ids(last.records)).to.equal(ids(all.slice(4)));
                    expect(last.hasMore).to.be.false();
                });

                it('counts UTF-8 bytes of both bodies', async () => {
                    const inbox = newInbox();
                    await saveOne(store(), big(inbox, 0, { body: '\u00e9'.repeat(300), htmlBody: '\u4e2d'.repeat(200) }));
                    await saveOne(store(), big(inbox, 0, { body: '\u00e9'.repeat(300), htmlBody: '\u4e2d'.repeat(200) }));
                    // 600 + 600 bytes (+ subject and lists) each: two do not fit in 2,400, one does.
                    expect((await store().listEmails({ inbox, limit: 10, maxBytes: 2400 })).records).to.have.length(1);
                    expect((await store().listEmails({ inbox, limit: 10, maxBytes: 2500 })).records).to.have.length(2);
                });

                it('answers an email larger than the budget as a page of its own', async () => {
                    const inbox = newInbox();
                    const older = await saveOne(store(), big(inbox, 10));
                    const large = await saveOne(store(), big(inbox, 5000));
                    const page = await store().listEmails({ inbox, limit: 10, maxBytes: 100 });
                    expect(ids(page.records)).to.equal([large.messageId]);
                    expect(page.hasMore).to.be.true();
                    const next = await store().listEmails({ inbox, limit: 10, maxBytes: 100, after: positionOf(large) });
                    expect(ids(next.records)).to.equal([older.messageId]);
                    expect(next.hasMore).to.be.false();
                });

                it('still ends at limit when everything fits', async () => {
                    const inbox = newInbox();
                    for (let i = 0; i < 3; i++) {
                        await saveOne(store(), big(inbox, 10));
                    }

                    const page = await store().listEmails({ inbox, limit: 2, maxBytes: 1_000_000 });
                    expect(page.records).to.have.length(2);
                    expect(page.hasMore).to.be.true();
                    expect((await store().listEmails({ inbox: newInbox(), limit: 2, maxBytes: 1 })).records).to.equal([]);
                });

                it('applies filters before the budget', async () => {
                    const inbox = newInbox();
                    const kept = await saveOne(store(), big(inbox, 100, { subject: 'keep' }));
                    await saveOne(store(), big(inbox, 5000, { subject: 'skip' }));
                    const page = await store().listEmails({ inbox, limit: 10, maxBytes: 200, subject: 'keep' });
                    expect(ids(page.records)).to.equal([kept.messageId]);
                    expect(page.hasMore).to.be.false();
                });

                it('throws on a budget below 1', async () => {
                    await expect(store().listEmails({ inbox: newInbox(), limit: 1, maxBytes: 0 })).to.reject();
                });

                it('reads bodies of megabytes exactly, characters of 2 to 4 bytes across the pieces SQLite reads them in', async () => {
                    const inbox = newInbox();
                    // 1 + 9n bytes: a piece of 4 MiB ends inside '😀' (2 UTF-16 units, 4 bytes).
                    const body = `a${'\u00e9\u4e2d\u{1f600}'.repeat(1_000_000)}`;
                    const htmlBody = `<p>${'\u4e2d'.repeat(1_500_000)}</p>`;
                    const older = await saveOne(store(), big(inbox, 10));
                    const large = await saveOne(store(), big(inbox, 0, { body, htmlBody }));
                    const exact = (record: EmailRecord | null | undefined) => record?.body === body && record.htmlBody === htmlBody;
                    expect(exact(await store().getEmail(large.messageId))).to.be.true();
                    const page = await store().listEmails({ inbox, limit: 10, maxBytes: 1000 });
                    expect(ids(page.records)).to.equal([large.messageId]);
                    expect(exact(page.records[0])).to.be.true();
                    const next = await store().listEmails({ inbox, limit: 10, maxBytes: 1000, after: positionOf(large) });
                    expect(ids(next.records)).to.equal([older.messageId]);
                    expect(next.records[0]!.body).to.equal('b'.repeat(10));
                    const whole = await store().listEmails({ inbox, limit: 10 });
                    expect(ids(whole.records)).to.equal([large.messageId, older.messageId]);
                    expect(exact(whole.records[0])).to.be.true();
                });
            });
        });

        describe('inboxVersion()', () => {
            it('is 0 for an inbox that never held mail', async () => {
                expect(await store().inboxVersion(newInbox())).to.equal(0);
            });

            it('grows with every stored email', async () => {
                const inbox = newInbox();
                let last = await store().inboxVersion(inbox);
                for (let i = 0; i < 3; i++) {
                    await saveOne(store(), draft(inbox));
                    const version = await store().inboxVersion(inbox);
                    expect(version).to.be.above(last);
                    last = version;
                }
            });

            it('grows when a copy is replaced', async () => {
                const inbox = newInbox();
                const d = draft(inbox);
                await saveOne(store(), d);
                const before = await store().inboxVersion(inbox);
                await saveOne(store(), { ...d, subject: 'again' });
                expect(await store().inboxVersion(inbox)).to.be.above(before);
            });

            it('grows past every earlier value after the newest email was deleted', async () => {
                const inbox = newInbox();
                await saveOne(store(), draft(inbox));
                const newest = await saveOne(store(), draft(inbox));
                const peak = await store().inboxVersion(inbox);
                await store().deleteEmail(newest.messageId);
                await saveOne(store(), draft(inbox));
                expect(await store().inboxVersion(inbox)).to.be.above(peak);
            });
        });

        describe('deleteEmail()', () => {
            it('deletes the record and returns it', async () => {
                const saved = await saveOne(store(), draft(newInbox(), {
                    attachments: [{ filename: '0-a', contentType: 'text/plain', size: 1, blobKey: unique('att') }]
                }));
                expect(await store().deleteEmail(saved.messageId)).to.equal(saved);
                expect(await store().getEmail(saved.messageId)).to.be.null();
                expect((await store().listEmails({ inbox: saved.inbox, limit: 10 })).records).to.equal([]);
            });

            it('returns null for an unknown or already deleted id', async () => {
                const saved = await saveOne(store(), draft(newInbox()));
                await store().deleteEmail(saved.messageId);
                expect(await store().deleteEmail(saved.messageId)).to.be.null();
                expect(await store().deleteEmail(unique('never') + '@example.test')).to.be.null();
            });

            it('with an inbox prefix, deletes only a record of an inbox inside it', async () => {
                const saved = await saveOne(store(), draft(newInbox()));
                expect(await store().deleteEmail(saved.messageId, { inboxPrefix: 'elsewhere-' })).to.be.null();
                expect(await store().getEmail(saved.messageId)).to.equal(saved);
                expect(await store().deleteEmail(saved.messageId, { inboxPrefix: saved.inbox.slice(0, 3) })).to.equal(saved);
                expect(await store().getEmail(saved.messageId)).to.be.null();
            });

            it('leaves the other copies of the message', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const source = unique('copies') + '@example.test';
                const { saved } = await store().saveEmails([draft(a, { sourceId: source }), draft(b, { sourceId: source })]);
                await store().deleteEmail(saved[0]!.messageId);
                expect(await store().getEmail(saved[1]!.messageId)).to.equal(saved[1]!);
            });

            it('frees the bare id for a later delivery', async () => {
                const source = unique('freed') + '@example.test';
                await saveOne(store(), draft(newInbox(), { sourceId: source }));
                await store().deleteEmail(source);
                expect((await saveOne(store(), draft(newInbox(), { sourceId: source }))).messageId).to.equal(source);
            });
        });

        describe('deleteInboxBatch()', () => {
            it('deletes up to the batch size, oldest stored first, and returns the records', async () => {
                const inbox = newInbox();
                const saved: EmailRecord[] = [];
                for (let i = 0; i < 7; i++) {
                    // receivedAt runs backwards: storage order, not receivedAt, decides.
                    saved.push(await saveOne(store(), draft(inbox, { receivedAt: BASE_TIME + 100 - i })));
                }

                const first = await store().deleteInboxBatch(inbox, 3);
                expect(first).to.equal(saved.slice(0, 3));
                const second = await store().deleteInboxBatch(inbox, 3);
                expect(second).to.equal(saved.slice(3, 6));
                expect(await store().deleteInboxBatch(inbox, 3)).to.equal(saved.slice(6));
                expect(await store().deleteInboxBatch(inbox, 3)).to.equal([]);
                expect((await store().listEmails({ inbox, limit: 10 })).records).to.equal([]);
                for (const record of saved) {
                    expect(await store().getEmail(record.messageId)).to.be.null();
                }
            });

            it('answers [] for an empty inbox and leaves other inboxes alone', async () => {
                const [a, b] = [newInbox(), newInbox()];
                const kept = await saveOne(store(), draft(b));
                expect(await store().deleteInboxBatch(a, 25)).to.equal([]);
                await saveOne(store(), draft(a));
                expect(await store().deleteInboxBatch(a, 25)).to.have.length(1);
                expect(await store().getEmail(kept.messageId)).to.equal(kept);
            });
        });

        describe('referencedBlobKeys()', () => {
            it('reports raw and attachment keys of stored records only', async () => {
                const [raw, att1, att2, stray] = [unique('raw'), unique('att'), unique('att'), unique('stray')];
                await saveOne(store(), draft(newInbox(), {
                    rawKey: raw,
                    attachments: [
                        { filename: '0-a', contentType: 'text/plain', size: 1, blobKey: att1 },
                        { filename: '1-b', contentType: 'text/plain', size: 1, blobKey: att2 }
                    ]
                }));

                const referenced = await store().referencedBlobKeys([raw, att1, att2, stray, raw]);
                expect([...referenced].sort()).to.equal([raw, att1, att2].sort());
            });

            it('forgets the keys of deleted and replaced records', async () => {
                const inbox = newInbox();
                const deleted = await saveOne(store(), draft(inbox, {
                    attachments: [{ filename: '0-a', contentType: 'text/plain', size: 1, blobKey: unique('att') }]
                }));
                await store().deleteEmail(deleted.messageId);

                const first = draft(inbox, {
                    attachments: [{ filename: '0-a', contentType: 'text/plain', size: 1, blobKey: unique('att') }]
                });
                await saveOne(store(), first);
                const second = await saveOne(store(), { ...first, rawKey: unique('raw'), attachments: [] });

                const keys = [deleted.rawKey, deleted.attachments[0]!.blobKey, first.rawKey, first.attachments[0]!.blobKey, second.rawKey];
                expect([...await store().referencedBlobKeys(keys)]).to.equal([second.rawKey]);
            });

            it('reports a key every copy of a delivery shares until the last copy is gone', async () => {
                const sourceId = unique('shared');
                const shared = { sourceId, rawKey: unique('raw'), attachments: [{ filename: '0-a', contentType: 'text/plain', size: 1, blobKey: unique('att') }] };
                const { saved } = await store().saveEmails([draft(newInbox(), shared), draft(newInbox(), shared), draft(newInbox(), shared)]);
                const keys = [shared.rawKey, shared.attachments[0]!.blobKey];
                expect([...await store().referencedBlobKeys(keys)].sort()).to.equal([...keys].sort());

                // A redelivery replaces one copy; the two others still reference the keys.
                await store().saveEmails([draft(saved[0]!.inbox, { sourceId, rawKey: unique('raw') })]);
                await store().deleteEmail(saved[1]!.messageId);
                expect([...await store().referencedBlobKeys(keys)].sort()).to.equal([...keys].sort());

                await store().deleteInboxBatch(saved[2]!.inbox, 25);
                expect([...await store().referencedBlobKeys(keys)]).to.equal([]);
            });

            it('answers for more keys than fit in one statement', async () => {
                const keys = Array.from({ length: 1200 }, () => unique('k'));
                const rawKey = keys[1100]!;
                await saveOne(store(), draft(newInbox(), { rawKey }));
                expect([...await store().referencedBlobKeys(keys)]).to.equal([rawKey]);
                expect((await store().referencedBlobKeys([])).size).to.equal(0);
            });
        });

        describe('createKey()', () => {
            it('stores a key and returns its info', async () => {
                const name = unique('key');
                const before = Date.now();
                const info = await store().createKey(name, sha256Hex(unique('token')));
                expect(info).to.equal({ name, createdAt: info.createdAt, revokedAt: null, inboxPrefix: null, readOnly: false });
                expect(info.createdAt).to.be.within(before, Date.now());
            });

            it('stores a scope, and finds and lists the key with it', async () => {
                const name = unique('scoped');
                const hash = sha256Hex(unique('token'));
                const info = await store().createKey(name, hash, { inboxPrefix: 'team-a-', readOnly: true });
                expect(info).to.include({ inboxPrefix: 'team-a-', readOnly: true });
                expect(await store().findActiveKeyByHash(hash)).to.equal(info);
                expect((await store().listKeys()).find((k) => k.name === name)).to.equal(info);

                const prefixOnly = await store().createKey(unique('prefix'), sha256Hex(unique('token')), { inboxPrefix: 'b-' });
                expect(prefixOnly).to.include({ inboxPrefix: 'b-', readOnly: false });
            });

            it('throws DUPLICATE_KEY for a name in use, revoked or not', async () => {
                const name = unique('dup');
                await store().createKey(name, sha256Hex(unique('token')));
                const err = await expect(store().createKey(name, sha256Hex(unique('token')))).to.reject();
                expect(isInboxCaptureError(err, 'DUPLICATE_KEY')).to.be.true();

                await store().revokeKey(name);
                const again = await expect(store().createKey(name, sha256Hex(unique('token')))).to.reject();
                expect(isInboxCaptureError(again, 'DUPLICATE_KEY')).to.be.true();
            });
        });

        describe('findActiveKeyByHash()', () => {
            it('finds an active key and ignores unknown and revoked ones', async () => {
                const name = unique('find');
                const hash = sha256Hex(unique('token'));
                const info = await store().createKey(name, hash);
                expect(await store().findActiveKeyByHash(hash)).to.equal(info);
                expect(await store().findActiveKeyByHash(sha256Hex(unique('other')))).to.be.null();

                await store().revokeKey(name);
                expect(await store().findActiveKeyByHash(hash)).to.be.null();
            });
        });

        describe('revokeKey()', () => {
            it('revokes once, then answers false; false for an unknown name', async () => {
                const name = unique('rev');
                await store().createKey(name, sha256Hex(unique('token')));
                expect(await store().revokeKey(name)).to.be.true();
                expect(await store().revokeKey(name)).to.be.false();
                expect(await store().revokeKey(unique('ghost'))).to.be.false();
            });
        });

        describe('listKeys()', () => {
            it('lists every key oldest first, revoked ones with their time, never a hash', async () => {
                const names = [unique('l1'), unique('l2'), unique('l3')];
                for (const name of names) {
                    await store().createKey(name, sha256Hex(unique('token')));
                }

                const before = Date.now();
                await store().revokeKey(names[1]!);
                const listed = (await store().listKeys()).filter((k) => names.includes(k.name));
                expect(listed.map((k) => k.name)).to.equal(names);
                expect(listed[0]!.revokedAt).to.be.null();
                expect(listed[1]!.revokedAt!).to.be.within(before, Date.now());
                for (const key of listed) {
                    expect(Object.keys(key).sort()).to.equal(['createdAt', 'inboxPrefix', 'name', 'readOnly', 'revokedAt']);
                }
            });
        });
    });
}
