import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { Writable } from 'node:stream';
import { describeProgress, progressLine, REDRAW_MS } from '../../../adapters/cli/progress-line';
import { EMAILS_TABLE } from '../../../lib/record-store/sql/schema';
import type { InboxCapture } from '../../../lib/service/inbox-capture';
import { run, runNode } from '../../helpers/child-process';
import { withEmbeddedCapture } from '../../helpers/embedded-capture';
import { buildMail } from '../../helpers/mail';
import { isolatedEnv } from '../../helpers/service-env';
import { removeDir, tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The built executable: run as a person runs it, at a terminal or not (`npm test` builds first). */
const BIN = Path.join(__dirname, '..', '..', '..', 'dist', 'adapters', 'cli', 'bin.js');

/** A stream that says it is a terminal (or not) and keeps what is written to it. */
function stream(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
    let text = '';
    const out = new Writable({
        write(chunk: Buffer, _encoding, done) {
            text += chunk.toString('utf8');
            done();
        }
    });
    return Object.assign(out, { isTTY, text: () => text });
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

describe('adapters/cli/progress-line', () => {

    describe('describeProgress()', () => {
        it('says the count, and of how many with a percentage when the whole is known', () => {
            expect(describeProgress({ done: 35_000 }, 'emails')).to.equal('35,000 emails');
            expect(describeProgress({ done: 12_300, total: 1_000_000 }, 'emails')).to.equal('12,300 of 1,000,000 emails (1%)');
            expect(describeProgress({ done: 7, total: 5 }, 'emails')).to.equal('7 of 5 emails (100%)');
        });
    });

    describe('progressLine()', () => {
        it('shows nothing where the stream is not a terminal', () => {
            const out = stream(false);
            const line = progressLine(out, 'prune: deleted', 'emails');
            expect(line.onProgress).to.not.exist();
            line.finish();
            expect(out.text()).to.equal('');
        });

        it('redraws one line in place at most every REDRAW_MS, and leaves the last state on its own line', () => {
            const out = stream(true);
            let now = 1_000;
            const line = progressLine(out, 'prune: deleted', 'emails', () => now);
            line.onProgress!({ done: 25 });
            now += REDRAW_MS - 1;
            line.onProgress!({ done: 50 });
            now += 1;
            line.onProgress!({ done: 75 });
            line.onProgress!({ done: 80 });
            line.finish();
            expect(out.text()).to.equal([
                '\rinbox-capture: prune: deleted 25 emails\x1b[K',
                '\rinbox-capture: prune: deleted 75 emails\x1b[K',
                '\rinbox-capture: prune: deleted 80 emails\x1b[K\n'
            ].join(''));
        });

        it('says nothing for work that found nothing to do', () => {
            const out = stream(true);
            const line = progressLine(out, 'gc: looked at', 'stored files');
            line.onProgress!({ done: 0 });
            line.finish();
            expect(out.text()).to.equal('');
        });
    });

    describe('migrate with a back-fill, prune and gc', () => {
        let dataDir: string;

        const withCapture = <T>(fn: (capture: InboxCapture) => Promise<T>): Promise<T> => withEmbeddedCapture(dataDir, fn);

        const env = () => isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir, TERM: 'dumb' });

        /**
         * Runs the CLI with stderr on a pseudo-terminal (`script` of util-linux) and stdout to
         * a file; answers what the terminal showed and what stdout got.
         */
        async function atTerminal(args: string[]): Promise<{ terminal: string; stdout: string }> {
            const out = Path.join(dataDir, 'stdout.txt');
            const command = [process.execPath, BIN, ...args].map(quote).join(' ');
            const result = await run('script', ['-qec', `${command} > ${quote(out)}`, '/dev/null'], { cwd: dataDir, env: env() });
            expect(result.code, result.stderr).to.equal(0);
            // The terminal turns each \n into \r\n.
            return { terminal: result.stdout.replace(/\r\n/g, '\n'), stdout: await Fs.readFile(out, 'utf8') };
        }

        /** The same in a pipe, as cron and deploy steps run it. */
        async function inPipe(args: string[]): Promise<{ stderr: string; stdout: string }> {
            const result = await runNode([BIN, ...args], { cwd: dataDir, env: env() });
            expect(result.code, result.stderr).to.equal(0);
            return { stderr: result.stderr, stdout: result.stdout };
        }

        before(async () => {
            dataDir = await tempDir('cli-progress');
            await withCapture(async (capture) => {
                for (let n = 0; n < 60; ++n) {
                    await capture.ingestRawEmail(buildMail({ to: 'box@test.example', subject: `n ${n}`, text: `Your code is 1234${n % 10}5.` }), { receivedAt: Date.now() - 86_400_000 });
                }
            });
        });

        after(async () => {
            if (dataDir) {
                await removeDir(dataDir);
            }
        });

        /** Makes the stored emails look stored before links and codes existed, as after an upgrade. */
        const forgetLinksAndCodes = () => withCapture(async () => {
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            const Sqlite3 = require('sqlite3') as typeof import('sqlite3');
            await new Promise<void>((resolve, reject) => {
                const db = new Sqlite3.Database(Path.join(dataDir, 'inbox-capture.sqlite'), (err) => err && reject(err));
                db.run(`UPDATE ${EMAILS_TABLE} SET links = NULL, codes = NULL`, (err) => db.close(() => (err ? reject(err) : resolve())));
            });
        });

        it('migrate shows how far the back-fill is on a terminal, and nothing in a pipe; stdout is the same', { timeout: 60_000 }, async () => {
            await forgetLinksAndCodes();
            const shown = await atTerminal(['migrate']);
            expect(shown.terminal).to.endWith('\rinbox-capture: migrate: filled links, codes and searched texts: 60 of 60 row updates (100%)\x1b[K\n');
            expect(shown.stdout).to.equal('schema is up to date\n');

            await forgetLinksAndCodes();
            expect(await inPipe(['migrate'])).to.equal({ stderr: '', stdout: 'schema is up to date\n' });
        });

        it('gc shows the stored files it looked at on a terminal, and nothing in a pipe; stdout is the same', { timeout: 60_000 }, async () => {
            const shown = await atTerminal(['gc', '--grace-seconds', '0']);
            expect(shown.terminal).to.match(/\rinbox-capture: gc: looked at \d+ stored files\x1b\[K\n$/);
            expect(shown.stdout).to.equal('removed 0 orphan blobs\n');
            expect(await inPipe(['gc', '--grace-seconds', '0'])).to.equal({ stderr: '', stdout: 'removed 0 orphan blobs\n' });
        });

        it('prune shows the emails deleted on a terminal, and nothing in a pipe; stdout is the same', { timeout: 60_000 }, async () => {
            const shown = await atTerminal(['prune', '--max-per-inbox', '30']);
            expect(shown.terminal).to.endWith('\rinbox-capture: prune: deleted 30 emails\x1b[K\n');
            expect(shown.stdout).to.equal('30\n');
            expect(await inPipe(['prune', '--max-age', '1s'])).to.equal({ stderr: '', stdout: '30\n' });
        });
    });
});
