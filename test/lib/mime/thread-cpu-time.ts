import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { currentThreadId, threadCpuMs } from '../../../lib/mime/thread-cpu-time';

const { describe, it } = exports.lab = Lab.script();
const { expect } = Code;

// A thread that says its id, then spins until the process has used `spin` ms more CPU (the
// rest of the process idles meanwhile: a wall-clock spin would count time a busy machine
// kept it off a core), then sleeps `sleep` ms, then waits to be terminated.
const THREAD = `
const { parentPort } = require('node:worker_threads');
const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
parentPort.postMessage(tid);
// on, not once: the listener keeps the thread alive after its answer, until it is terminated
// (with none left it would end by itself, and a read of its CPU after that finds no thread).
parentPort.on('message', ({ spin, sleep }) => {
    const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
    const end = cpu() + spin;
    while (cpu() < end) {}
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, sleep);
    parentPort.postMessage('done');
});`;

async function cpuOfThreadThat(work: { spin: number; sleep: number }): Promise<number> {
    const worker = new Worker(THREAD, { eval: true });
    try {
        const [tid] = await once(worker, 'message') as [number];
        const before = threadCpuMs(tid);
        // Said apart, so that a read that fails names itself instead of answering NaN.
        expect(before, `thread ${tid}'s CPU before`).to.be.a.number();
        worker.postMessage(work);
        await once(worker, 'message');
        const after = threadCpuMs(tid);
        expect(after, `thread ${tid}'s CPU after`).to.be.a.number();
        return after! - before!;
    }
    finally {
        await worker.terminate();
    }
}

describe('thread-cpu-time', { skip: process.platform !== 'linux' }, () => {

    it('tells the CPU a thread used, not the time it was asleep', async () => {
        expect(await cpuOfThreadThat({ spin: 300, sleep: 0 })).to.be.within(150, 2000);
        expect(await cpuOfThreadThat({ spin: 0, sleep: 300 })).to.be.below(50);
    });

    it('names the calling thread, and knows no thread that is not there', () => {
        const tid = currentThreadId()!;
        expect(tid).to.equal(process.pid);
        expect(threadCpuMs(tid)!).to.be.above(0);
        expect(threadCpuMs(2 ** 30)).to.be.undefined();
    });
});
