import * as Fs from 'node:fs';
import * as Os from 'node:os';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createFsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import { isInboxCaptureError, type InboxCaptureErrorCode } from '../../../lib/errors';
import { createInboxCapture, type InboxCapture } from '../../../lib/service/inbox-capture';
import { createKnexRecordStore } from '../../../lib/record-store/knex-record-store';
import { openSqliteKnex } from '../../../lib/sqlite/knex';
import type { EmailRecord } from '../../../lib/types';
import { ADVERSARIAL_RECIPIENT, ESCAPE_CANARIES, adversarialMessages, attachmentPayload } from '../../fixtures/adversarial/generate';
import { readAll } from '../../helpers/streams';
import { isWellFormed, stringsOf } from '../../helpers/text';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const CORPUS_DIR = Path.join(__dirname, '..', '..', 'fixtures', 'corpus');
const INBOX = 'corpus';

/** Bound of one corpus message's ingest and checks, ms: real mail is small. */
const CORPUS_TIMEOUT_MS = 20_000;
/** Bound of one adversarial case, ms: the 10,000-part case writes thousands of blobs. */
const ADVERSARIAL_TIMEOUT_MS = 120_000;

// Characters no attachment name may keep: `/`, `\`, control characters, and the bidi controls
// behind the U+202E trick (docs/design.md, "The email object").
const UNSAFE_NAME_CHARACTER = /[/\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Parts of attacker-chosen file names that must never show up in a blob path. */
const ATTACKER_NAME_FRAGMENTS = ['canary', 'CON', 'report', 'passwd', 'Injected', 'fdp', 'evil'];

/** Every file and directory below `dir`, relative to it. */
function walk(dir: string, prefix = ''): string[] {
    return Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const relative = Path.join(prefix, entry.name);
        return entry.isDirectory() ? [relative, ...walk(Path.join(dir, entry.name), relative)] : [relative];
    });
}

/** What one ingest came to: the stored copy, or the core's refusal. */
type Outcome =
    | { stored: true; copy: EmailRecord; record: EmailRecord }
    | { stored: false; code: InboxCaptureErrorCode };

describe('corpus ingest', () => {

    let tempDir: string;
    let dataDir: string;
    let blobRoot: string;
    let capture: InboxCapture;
    const outcomes = new Map<string, string>();

    before(async () => {
        tempDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'inbox-capture-corpus-'));
        dataDir = Path.join(tempDir, 'data');
        blobRoot = Path.join(dataDir, 'blobs');
        capture = createInboxCapture({
            recordStore: createKnexRecordStore({ knex: openSqliteKnex(Path.join(dataDir, 'records.sqlite3')), destroyKnexOnClose: true }),
            blobStore: createFsBlobStore({ root: blobRoot, signingSecret: 'corpus-ingest-signing-secret-0123456789' })
        });
        await capture.start();
    });

    after(async () => {
        await capture.close();
        Fs.rmSync(tempDir, { recursive: true, force: true });
        const counts: Record<string, number> = {};
        for (const outcome of outcomes.values()) {
            counts[outcome] = (counts[outcome] ?? 0) + 1;
        }

        console.log(`corpus-ingest outcomes: ${JSON.stringify(counts)}`);
    });

    /**
     * Ingests one message for corpus@example.test and checks what every message
     * must satisfy: stored or refused with an InboxCaptureError (anything else is
     * rethrown, failing the test with its stack), the raw blob byte-exact, every
     * string well-formed and unchanged by JSON and by the store, attachment names
     * `<index>-<safe name>` and unique.
     */
    const ingest = async (name: string, raw: Buffer): Promise<Outcome> => {
        let copies: EmailRecord[];
        try {
            copies = await capture.ingestRawEmail(raw, { recipients: [ADVERSARIAL_RECIPIENT] });
        }
        catch (err) {
            if (!isInboxCaptureError(err)) {
                throw err;
            }

            outcomes.set(name, `refused ${err.code}`);
            return { stored: false, code: err.code };
        }

        outcomes.set(name, 'stored');
        expect(copies).to.have.length(1);
        const copy = copies[0];
        expect(copy.inbox).to.equal(INBOX);
        expect(copy.recipient).to.equal(ADVERSARIAL_RECIPIENT);

        const record = await capture.getEmail(copy.messageId);
        expect(record, `record ${JSON.stringify(copy.messageId)} is found again by its id`).to.not.be.null();

        // The raw .eml is the bytes as received.
        expect(record!.rawSize).to.equal(raw.length);
        const blob = await capture.blobStore.get(record!.rawKey);
        expect(blob).to.not.be.null();
        const stored = await readAll(blob!);
        expect(stored.equals(raw), 'raw blob equals the input byte for byte').to.be.true();

        for (const [path, text] of stringsOf(record)) {
            expect(isWellFormed(text), `${path} is well-formed UTF-16`).to.be.true();
            expect(JSON.parse(JSON.stringify(text)), `${path} survives JSON`).to.equal(text);
        }

        // What the store gives back is what ingest answered (a lossy column would show here).
        for (const field of ['messageId', 'inbox', 'sender', 'recipient', 'subject', 'body', 'htmlBody'] as const) {
            expect(record![field], `stored ${field} equals the ingested one`).to.equal(copy[field]);
        }

        expect(record!.attachments.map((a) => a.filename)).to.equal(copy.attachments.map((a) => a.filename));

        const names = new Set<string>();
        for (const [index, attachment] of record!.attachments.entries()) {
            const match = /^(\d+)-(.+)$/s.exec(attachment.filename);
            expect(match, `attachment ${JSON.stringify(attachment.filename)} is <index>-<name>`).to.not.be.null();
            expect(Number(match![1])).to.equal(index);
            expect(UNSAFE_NAME_CHARACTER.test(match![2]), `attachment ${JSON.stringify(attachment.filename)} has no unsafe character`).to.be.false();
            expect(match![2].startsWith('.'), `attachment ${JSON.stringify(attachment.filename)} has no leading dot`).to.be.false();
            expect(Buffer.byteLength(match![2], 'utf8')).to.be.at.most(200);
            expect(names.has(attachment.filename), `attachment ${JSON.stringify(attachment.filename)} is unique`).to.be.false();
            names.add(attachment.filename);
        }

        return { stored: true, copy, record: record! };
    };

    const storedOnly = (outcome: Outcome): { copy: EmailRecord; record: EmailRecord } => {
        expect(outcome.stored, 'the message is stored').to.be.true();
        return outcome as { stored: true; copy: EmailRecord; record: EmailRecord };
    };

    describe('real-world messages', () => {

        const files = Fs.readdirSync(CORPUS_DIR).filter((file) => file.endsWith('.eml')).sort();

        it('has a corpus of a few hundred messages', () => {
            expect(files.length).to.be.at.least(200);
        });

        for (const file of files) {
            it(`stores or refuses ${file}`, { timeout: CORPUS_TIMEOUT_MS }, async () => {
                await ingest(file, Fs.readFileSync(Path.join(CORPUS_DIR, file)));
            });
        }
    });

    describe('adversarial messages', () => {

        const cases = new Map(adversarialMessages().map((c) => [c.name, c]));

        const run = (name: string, check: (outcome: Outcome) => Promise<void> | void) => {
            const message = cases.get(name);
            if (!message) {
                throw new Error(`no adversarial case named ${name}`);
            }

            cases.delete(name);
            it(`${name}: ${message.expect}`, { timeout: ADVERSARIAL_TIMEOUT_MS }, async () => {
                await check(await ingest(name, message.raw));
            });
        };

        const singleSafeAttachment = (outcome: Outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.attachments).to.have.length(1);
            expect(record.attachments[0].filename.startsWith('0-')).to.be.true();
            return record.attachments[0];
        };

        const storedOrRefused = (outcome: Outcome, code: InboxCaptureErrorCode) => {
            if (!outcome.stored) {
                expect(outcome.code).to.equal(code);
            }
        };

        run('attachment-name-dot-dot', (outcome) => {
            // Dots left inside the name (`_.._`) are harmless once no separator and no leading dot remain.
            singleSafeAttachment(outcome);
        });

        run('attachment-name-absolute', (outcome) => {
            singleSafeAttachment(outcome);
        });

        run('attachment-name-backslash', (outcome) => {
            singleSafeAttachment(outcome);
        });

        run('attachment-name-nul', (outcome) => {
            expect(singleSafeAttachment(outcome).filename).to.not.include('\u0000');
        });

        run('attachment-name-crlf', (outcome) => {
            const { filename } = singleSafeAttachment(outcome);
            expect(filename).to.not.include('\r');
            expect(filename).to.not.include('\n');
        });

        run('attachment-name-rtl-override', (outcome) => {
            expect(singleSafeAttachment(outcome).filename).to.not.include('\u202e');
        });

        run('attachment-name-con', (outcome) => {
            expect(singleSafeAttachment(outcome).filename).to.equal('0-CON');
        });

        run('attachment-names-duplicate', (outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.attachments.map((a) => a.filename)).to.equal(['0-report.pdf', '1-report.pdf']);
            expect(record.attachments[0].blobKey).to.not.equal(record.attachments[1].blobKey);
        });

        run('attachment-name-index-lookalike', async (outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.attachments.map((a) => a.filename)).to.equal(['0-report.pdf', '1-0-report.pdf']);
            // The name the API shows for the first part must lead to the first part's bytes.
            const first = record.attachments.find((a) => a.filename === '0-report.pdf')!;
            expect(await capture.attachmentDownloadLink(record.messageId, '0-report.pdf')).to.include({ key: first.blobKey });
            const content = await readAll((await capture.blobStore.get(first.blobKey))!);
            expect(content.toString()).to.equal(attachmentPayload('attachment-name-index-lookalike', 0));
        });

        run('message-id-control-characters', (outcome) => {
            storedOrRefused(outcome, 'INVALID_INPUT');
        });

        run('message-id-10000-characters', (outcome) => {
            storedOrRefused(outcome, 'INVALID_INPUT');
        });

        run('header-lines-10000', (outcome) => {
            if (outcome.stored) {
                expect(outcome.record.subject).to.equal('adversarial header-lines-10000');
                expect(outcome.record.body).to.include('after ten thousand header lines');
            }
        });

        run('mime-nesting-100', (outcome) => {
            if (outcome.stored) {
                expect(outcome.record.body).to.include('bottom of 100 levels');
            }
        });

        run('mime-parts-10000', (outcome) => {
            // Uniqueness and the index rule are checked by ingest(); parse.ts caps parts
            // at 1000 and keeps what it read, so fewer attachments (even none) are allowed.
            const { record } = storedOnly(outcome);
            expect(record.subject).to.equal('adversarial mime-parts-10000');
            expect(record.attachments.length).to.be.at.most(10_000);
        });

        run('html-nesting-5000', (outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.htmlBody).to.include('deep text');
            expect(record.body).to.include('deep text');
        });

        run('subject-crlf-injection', async (outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.subject).to.include('Hello');
            expect(record.subject).to.not.include('\r');
            expect(record.subject).to.not.include('\n');
            // The fake Bcc is text, never a recipient: nothing arrives for "victim".
            expect((await capture.listEmails({ inbox: 'victim', limit: 10 })).records).to.have.length(0);
        });

        run('binary-garbage-64k', (outcome) => {
            storedOrRefused(outcome, 'INVALID_INPUT');
            if (outcome.stored) {
                expect(outcome.record.sourceId.endsWith('@inbox-capture')).to.be.true();
            }
        });

        run('empty-message', (outcome) => {
            storedOrRefused(outcome, 'INVALID_INPUT');
            if (outcome.stored) {
                expect(outcome.record.sourceId.endsWith('@inbox-capture')).to.be.true();
                expect(outcome.record.subject).to.equal('');
                expect(outcome.record.body).to.equal('');
                expect(outcome.record.attachments).to.equal([]);
            }
        });

        run('headers-only', (outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.subject).to.equal('adversarial headers-only');
            expect(record.body).to.equal('');
            expect(record.htmlBody).to.equal('');
            expect(record.attachments).to.equal([]);
        });

        run('nul-body-and-lone-surrogate', (outcome) => {
            const { record } = storedOnly(outcome);
            // Well-formedness is checked by ingest(); the readable text must survive the repair.
            expect(record.subject).to.include('broken');
            expect(record.body).to.include('before');
            expect(record.body).to.include('after');
        });

        run('long-line-1mib', (outcome) => {
            const { record } = storedOnly(outcome);
            expect(record.body.trimEnd()).to.have.length(1024 * 1024);
        });

        it('has a check for every adversarial case', () => {
            expect([...cases.keys()]).to.equal([]);
        });
    });

    // Lab runs a describe's own tests before its nested ones: this block, last, runs after every ingest.
    describe('afterwards', () => {

        it('creates no file outside the data dir', () => {
            // Only the data dir in our temp dir, and no blob path carries an attacker's name.
            expect(Fs.readdirSync(tempDir)).to.equal(['data']);
            for (const path of walk(blobRoot)) {
                for (const fragment of ATTACKER_NAME_FRAGMENTS) {
                    expect(path, `blob path ${path}`).to.not.include(fragment);
                }
            }

            for (const path of [ESCAPE_CANARIES.traversal, ESCAPE_CANARIES.absolute]) {
                expect(Fs.existsSync(path), path).to.be.false();
            }

            for (const dir of [Os.tmpdir(), process.cwd(), Path.dirname(tempDir), '/']) {
                for (const entry of Fs.readdirSync(dir)) {
                    expect(entry, `${dir}/${entry}`).to.not.include('canary');
                }
            }
        });
    });
});
