import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPeriodicTask } from '../../../lib/util/periodic-task';
import { runNode } from '../../helpers/child-process';
import { waitUntil } from '../../helpers/wait-until';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..', '..');

describe('periodic-task', () => {

    describe('startPeriodicTask()', () => {

        it('runs a first pass at once, then one per interval, until stopped', async () => {
            let passes = 0;
            const task = startPeriodicTask({ run: () => Promise.resolve(++passes), intervalMs: 5, onError: () => undefined });
            await waitUntil('three passes ran', () => passes >= 3);
            await task.stop();
            const seen = passes;
            await sleep(50);
            expect(passes).to.equal(seen);
        });

        it('waits firstDelayMs before the first pass', async () => {
            let passes = 0;
            const task = startPeriodicTask({ run: () => Promise.resolve(++passes), intervalMs: 5, firstDelayMs: 60_000, onError: () => undefined });
            await sleep(50);
            expect(passes).to.equal(0);
            await task.stop();
        });

        it('runs one pass at a time however long one takes, and stop() waits for the pass under way', async () => {
            let active = 0;
            let most = 0;
            let passes = 0;
            let release!: () => void;
            const gate = new Promise<void>((resolve) => {
                release = resolve;
            });
            const task = startPeriodicTask({
                async run() {
                    ++passes;
                    most = Math.max(most, ++active);
                    await gate;
                    --active;
                },
                intervalMs: 1,
                onError: () => undefined
            });
            await waitUntil('the first pass started', () => passes === 1);
            // Many intervals go by while the first pass is held.
            await sleep(50);
            expect(passes).to.equal(1);
            let stopped = false;
            const stopping = task.stop().then(() => {
                stopped = true;
            });
            await sleep(10);
            expect(stopped).to.be.false();
            release();
            await stopping;
            expect(active).to.equal(0);
            expect(most).to.equal(1);
            expect(passes).to.equal(1);
        });

        it('aborts the signal of the pass under way on stop(), so a long pass ends early', async () => {
            let started = false;
            const task = startPeriodicTask({
                run(signal) {
                    started = true;
                    return new Promise((resolve) => signal.addEventListener('abort', resolve));
                },
                intervalMs: 60_000,
                onError: () => undefined
            });
            await waitUntil('the pass started', () => started);
            // Without the abort this would wait for a pass that never ends.
            await task.stop();
        });

        it('hands a failed pass to onError and runs the next one, even when onError throws', async () => {
            const errors: unknown[] = [];
            let passes = 0;
            const task = startPeriodicTask({
                run() {
                    ++passes;
                    return Promise.reject(new Error(`pass ${passes} failed`));
                },
                intervalMs: 1,
                onError(err) {
                    errors.push(err);
                    throw new Error('the logger broke too');
                }
            });
            await waitUntil('three passes failed', () => errors.length >= 3);
            await task.stop();
            expect((errors[0] as Error).message).to.equal('pass 1 failed');
            expect((errors[2] as Error).message).to.equal('pass 3 failed');
        });

        it('never keeps the process alive: a process with only a waiting task exits by itself', async () => {
            const script = `require(${JSON.stringify(Path.join(ROOT, 'dist', 'lib', 'util', 'periodic-task.js'))}).startPeriodicTask({ run: async () => {}, intervalMs: 3600000, firstDelayMs: 3600000, onError: () => {} }); console.log('started');`;
            const result = await runNode(['-e', script], { cwd: ROOT, env: process.env });
            expect(result).to.equal({ code: 0, stdout: 'started\n', stderr: '' });
        });
    });
});
