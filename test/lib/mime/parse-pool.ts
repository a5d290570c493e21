import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { linksAndCodesOf } from '../../../lib/extract/links-and-codes';
import { searchTextOf } from '../../../lib/extract/search-text';
import { bodyText, emptyParsedMessage, parseMessage } from '../../../lib/mime/parse';
import { parseHeaderFields } from '../../../lib/mime/header-fields';
import { createParsePool, PARSE_WALL_CLOCK_FACTOR } from '../../../lib/mime/parse-pool';
import { isSmallMessage, SMALL_MESSAGE_BYTES } from '../../../lib/mime/small-message';
import { nestedGroupsMessage } from '../../helpers/hostile-addresses';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const CORPUS = join(__dirname, '..', '..', 'fixtures', 'corpus');
const CRASHING_WORKER = join(__dirname, '..', '..', 'fixtures', 'workers', 'crashing-parse-worker.js');
const HANGING_WORKER = join(__dirname, '..', '..', 'fixtures', 'workers', 'hanging-parse-worker.ts');

/** A parse result with its error reduced to what the log gets, for deep comparison. */
const comparable = (parsed: Awaited<ReturnType<typeof parseMessage>>) => ({
    ...parsed,
    attachments: parsed.attachments.map((a) => ({ ...a, content: a.content.toString('base64') })),
    error: parsed.error ? `${parsed.error.name}: ${parsed.error.message}` : undefined
});

describe('parse-pool', () => {

    describe('createParsePool()', () => {

        it('returns in a worker exactly what parseMessage() returns in-thread, with the links and codes linksAndCodesOf() finds, over the whole corpus', async () => {
            const pool = createParsePool({ smallInThread: false });
            try {
                const files = readdirSync(CORPUS).filter((name) => name.endsWith('.eml'));
                expect(files.length).to.be.above(100);
                for (const name of files) {
                    const raw = readFileSync(join(CORPUS, name));
                    const inThread = await parseMessage(raw);
                    const inWorker = await pool.parse(raw);
                    const found = linksAndCodesOf({ subject: inThread.subject, body: bodyText(inThread), htmlBody: inThread.html });
                    expect(inWorker.linksAndCodes, name).to.equal(found);
                    expect(inWorker.searchText, name).to.equal(searchTextOf(bodyText(inThread), inThread.textFromHtml));
                    expect(comparable({ ...inWorker, linksAndCodes: undefined, searchText: undefined }), name).to.equal(comparable({ ...inThread, linksAndCodes: undefined, searchText: undefined }));
                    expect(inWorker.attachments.every((a) => Buffer.isBuffer(a.content)), name).to.be.true();
                }
            }
            finally {
                await pool.close();
            }
        });

        it('gives the same answer for every corpus message whichever path it takes, and takes both paths', async () => {
            const workers = createParsePool({ smallInThread: false });
            const mixed = createParsePool();
            try {
                const files = readdirSync(CORPUS).filter((name) => name.endsWith('.eml'));
                let small = 0;
                for (const name of files) {
                    const raw = readFileSync(join(CORPUS, name));
                    small += isSmallMessage(raw) ? 1 : 0;
                    expect(comparable(await mixed.parse(raw)), name).to.equal(comparable(await workers.parse(raw)));
                }

                // Most real mail is small; a few corpus messages are not.
                expect(small).to.be.above(files.length / 2);
                expect(files.length - small).to.be.at.least(5);
            }
            finally {
                await Promise.all([workers.close(), mixed.close()]);
            }
        });

        it('parses a small message on the calling thread and a larger or hostile one in a worker', async () => {
            // The crashing worker shows which path a message took: only a worker's parse fails.
            const pool = createParsePool({ workerFile: CRASHING_WORKER, smallInThread: true });
            try {
                const parsed = await pool.parse(Buffer.from('Message-ID: <small@x.test>\r\nSubject: small\r\n\r\nYour code is 123456: https://x.test/v\r\n'));
                expect([parsed.messageId, parsed.subject, parsed.linksAndCodes, parsed.searchText]).to.equal([
                    'small@x.test', 'small', { links: [{ href: 'https://x.test/v', text: 'https://x.test/v' }], codes: ['123456'] }, 'your code is 123456: https://x.test/v\n'
                ]);
                const large = Buffer.from(`Subject: large\r\n\r\n${'x'.repeat(SMALL_MESSAGE_BYTES)}\r\n`);
                await expect(pool.parse(large)).to.reject(/the parse worker exited \(code 3\)/);
                await expect(pool.parse(nestedGroupsMessage(100))).to.reject(/the parse worker exited \(code 3\)/);
            }
            finally {
                await pool.close();
            }
        });

        it('parses small messages on the calling thread by default, starting no worker, and starts one for a larger message', async () => {
            const pool = createParsePool();
            try {
                const parsed = await Promise.all([1, 2, 3, 4, 5].map((n) => pool.parse(Buffer.from(`Message-ID: <m${n}@x>\r\nSubject: s${n}\r\n\r\nbody ${n}\r\n`))));
                expect(parsed.map((p) => p.subject)).to.equal(['s1', 's2', 's3', 's4', 's5']);
                expect(pool.workerCount()).to.equal(0);
                const large = await pool.parse(Buffer.from(`Subject: large\r\n\r\n${'x'.repeat(SMALL_MESSAGE_BYTES)}\r\n`));
                expect(large.subject).to.equal('large');
                expect(pool.workerCount()).to.equal(1);
            }
            finally {
                await pool.close();
            }
        });

        it('abandons a long worker parse at the deadline while small messages parse on the calling thread meanwhile', async () => {
            const pool = createParsePool({ size: 1, timeoutMs: 1000, workerFile: HANGING_WORKER, smallInThread: true });
            try {
                const started = Date.now();
                // Over the size: to the worker, which never finishes it.
                let hungSettled = false;
                const hung = pool.parse(Buffer.from(`X-Test-Parse: hang\r\nFrom: a@x.test\r\nTo: b@x.test\r\nSubject: never\r\n\r\n${'x'.repeat(SMALL_MESSAGE_BYTES)}\r\n`));
                void hung.finally(() => {
                    hungSettled = true;
                });
                // Also marked to hang, but small: the worker never sees it.
                const small = await pool.parse(Buffer.from('X-Test-Parse: hang\r\nSubject: small\r\n\r\nbody\r\n'));
                expect(small.subject).to.equal('small');
                expect(hungSettled).to.be.false();
                const abandoned = await hung;
                expect(Date.now() - started).to.be.within(900, 9000);
                expect(abandoned.abandoned).to.be.true();
                expect(abandoned.error!.message).to.equal('the parse took longer than 1000 ms and was abandoned');
            }
            finally {
                await pool.close();
            }
        });

        it('parses messages at once in several workers and keeps the caller\'s bytes intact', async () => {
            const pool = createParsePool({ size: 2, smallInThread: false });
            try {
                const raws = [1, 2, 3, 4, 5].map((n) => Buffer.from(`Message-ID: <m${n}@x>\r\nSubject: s${n}\r\n\r\nbody ${n}\r\n`));
                const copies = raws.map((raw) => Buffer.from(raw));
                const parsed = await Promise.all(raws.map((raw) => pool.parse(raw)));
                expect(parsed.map((p) => p.messageId)).to.equal(['m1@x', 'm2@x', 'm3@x', 'm4@x', 'm5@x']);
                expect(parsed.map((p) => p.text)).to.equal(['body 1\n', 'body 2\n', 'body 3\n', 'body 4\n', 'body 5\n']);
                expect(raws).to.equal(copies);
            }
            finally {
                await pool.close();
            }
        });

        it('parses every message in a substitute worker, the smallest too (a worker that dies fails it)', async () => {
            const pool = createParsePool({ workerFile: CRASHING_WORKER });
            try {
                await expect(pool.parse(Buffer.from('Subject: small\r\n\r\nhi\r\n'))).to.reject(/the parse worker exited \(code 3\)/);
            }
            finally {
                await pool.close();
            }
        });

        it('abandons a parse past the deadline with every field empty, replaces its worker, and parses the message waiting behind it', async () => {
            const pool = createParsePool({ size: 1, timeoutMs: 1000, workerFile: HANGING_WORKER });
            try {
                const started = Date.now();
                const hung = pool.parse(Buffer.from('X-Test-Parse: hang\r\nFrom: a@x.test\r\nTo: b@x.test\r\nSubject: never\r\n\r\nbody\r\n'));
                const next = pool.parse(Buffer.from('Message-ID: <next@x.test>\r\nSubject: next\r\n\r\nbody\r\n'));
                const abandoned = await hung;
                expect(Date.now() - started).to.be.within(900, 9000);
                expect(abandoned.abandoned).to.be.true();
                expect(abandoned.error!.message).to.equal('the parse took longer than 1000 ms and was abandoned');
                expect({ ...abandoned, abandoned: undefined, error: undefined }).to.equal({ ...emptyParsedMessage(), abandoned: undefined, error: undefined });
                const parsed = await next;
                expect(parsed.abandoned).to.be.undefined();
                expect([parsed.messageId, parsed.subject]).to.equal(['next@x.test', 'next']);
            }
            finally {
                await pool.close();
            }
        });

        it('counts the worker\'s CPU, not the wall clock: a parse held off its core past the deadline is not abandoned', async () => {
            // Asleep for 1.5 deadlines, it has used almost no CPU: a worker at the lowest
            // priority waiting for a core on a busy machine looks the same.
            const pool = createParsePool({ size: 1, timeoutMs: 1000, workerFile: HANGING_WORKER });
            try {
                const started = Date.now();
                const parsed = await pool.parse(Buffer.from('X-Test-Parse: sleep 1500\r\nMessage-ID: <slept@x.test>\r\nSubject: slept\r\n\r\nbody\r\n'));
                expect(Date.now() - started).to.be.at.least(1400);
                expect(parsed.abandoned).to.be.undefined();
                expect([parsed.messageId, parsed.subject]).to.equal(['slept@x.test', 'slept']);
            }
            finally {
                await pool.close();
            }
        });

        it(`abandons a parse held off its core for ${PARSE_WALL_CLOCK_FACTOR} deadlines of wall time, whatever CPU it used`, async () => {
            const pool = createParsePool({ size: 1, timeoutMs: 300, workerFile: HANGING_WORKER });
            try {
                const started = Date.now();
                // Asleep far longer than the ceiling (900 ms): abandoned long before it wakes.
                const parsed = await pool.parse(Buffer.from('X-Test-Parse: sleep 20000\r\nSubject: starved\r\n\r\nbody\r\n'));
                expect(Date.now() - started).to.be.within(300 * PARSE_WALL_CLOCK_FACTOR - 100, 15_000);
                expect(parsed.abandoned).to.be.true();
                expect(parsed.error!.message).to.equal('the parse took longer than 300 ms and was abandoned');
            }
            finally {
                await pool.close();
            }
        });

        it('fails only the parse whose worker dies, and the next parse gets a new worker', async () => {
            const pool = createParsePool({ size: 1, workerFile: CRASHING_WORKER });
            try {
                const raw = Buffer.from('Subject: x\r\n\r\nx\r\n');
                const first = pool.parse(raw);
                const second = pool.parse(raw);
                await expect(first).to.reject(/the parse worker exited \(code 3\)/);
                await expect(second).to.reject(/the parse worker exited \(code 3\)/);
            }
            finally {
                await pool.close();
            }
        });

        it('parses a header section in a worker exactly as parseHeaderFields() does in-thread, beside messages', async () => {
            const pool = createParsePool({ size: 1 });
            try {
                const section = Buffer.from('Subject: =?utf-8?Q?caf=C3=A9?=\r\nX-Folded: a\r\n b\r\nReceived: from x\r\n\r\n');
                const [fields, parsed] = await Promise.all([pool.parseHeaders(section), pool.parse(Buffer.from('Subject: message\r\n\r\nbody\r\n'))]);
                expect(fields).to.equal(parseHeaderFields(section));
                expect(fields[0]).to.equal({ name: 'Subject', value: 'café' });
                expect(parsed.subject).to.equal('message');
            }
            finally {
                await pool.close();
            }
        });

        it('rejects parses running and waiting when it is closed, and every parse after, small ones too', async () => {
            const pool = createParsePool({ size: 1, smallInThread: false });
            const raw = Buffer.from('Subject: x\r\n\r\nx\r\n');
            const running = pool.parse(raw);
            const waiting = pool.parse(raw);
            const closing = pool.close();
            await expect(waiting).to.reject(/the parse pool is closed/);
            await expect(running).to.reject(/the parse worker exited/);
            await closing;
            await expect(pool.parse(raw)).to.reject(/the parse pool is closed/);
            const mixed = createParsePool();
            await mixed.close();
            await expect(mixed.parse(raw)).to.reject(/the parse pool is closed/);
        });
    });
});
