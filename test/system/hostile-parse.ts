import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readBlob } from '../helpers/blob-contents';
import { nestedGroupsMessage, punycodeMessage } from '../helpers/hostile-addresses';
import { PARSE_WALL_CLOCK_FACTOR } from '../../lib/mime/parse-pool';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const HANGING_WORKER = join(__dirname, '..', 'fixtures', 'workers', 'hanging-parse-worker.ts');

/**
 * Longest stall of the service's event loop allowed while a hostile message is received
 * and stored, ms: far above what it is (tens of ms on a busy machine), far below what it
 * was (the punycode label 8 to 25 s, the nested groups 2.3 s, both on the event loop).
 */
const STALL_BOUND_MS = 1000;

/** The service's event loop's longest delay (ms) while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    try {
        await work();
    }
    finally {
        histogram.disable();
    }

    return histogram.max / 1e6;
}

/** Sends `raw` to `to` from `from` over SMTP; resolves with the reply to DATA. */
async function send(capture: SmtpCapture, raw: Buffer, to: string, from = 'sender@envelope.test'): Promise<string> {
    const info = await capture.transport().sendMail({ envelope: { from, to: [to] }, raw });
    return info.response;
}

describe('hostile messages over SMTP', () => {

    for (const [shape, raw] of [['a To of one xn-- label of a million characters', punycodeMessage()], ['a To of nested groups, 830 KB', nestedGroupsMessage()]] as const) {
        it(`stores ${shape} with the event loop never held ${STALL_BOUND_MS} ms`, async () => {
            const capture = await startSmtpCapture();
            try {
                let response = '';
                const stall = await longestStall(async () => {
                    response = await send(capture, raw, 'hostile@x.test');
                });
                expect(response).to.startWith('250 ');
                expect(stall).to.be.below(STALL_BOUND_MS);
                const [email] = (await capture.capture.listEmails({ inbox: 'hostile', limit: 10 })).records;
                expect(email!.subject).to.equal(shape.includes('xn--') ? 'punycode' : 'nested');
                expect(await readBlob(capture.capture.blobStore, email!.rawKey)).to.equal(raw);
            }
            finally {
                await capture.stop();
            }
        });
    }

    it('stores a message whose parse never ends at the deadline, for the envelope\'s recipient, with its header fields read again and empty bodies, and a message sent right after within it', async () => {
        const timeoutMs = 1500;
        const capture = await startSmtpCapture({}, { parseWorkers: 1, parseTimeoutMs: timeoutMs, parseWorkerFile: HANGING_WORKER });
        try {
            const hung = Buffer.from('X-Test-Parse: hang\r\nFrom: header@x.test\r\nTo: header@x.test\r\nSubject: never parsed whole\r\n\r\nbody\r\n');
            const normal = Buffer.from('From: normal@x.test\r\nTo: normal@x.test\r\nSubject: right after\r\nMessage-ID: <right-after@x.test>\r\n\r\nbody\r\n');
            const started = Date.now();
            const first = send(capture, hung, 'stuck@x.test', 'bounces@envelope.test').then((reply) => ({ reply, ms: Date.now() - started }));
            // Sent while the first one's parse holds the only worker: it waits behind it, for the
            // deadline at most (in wall time, PARSE_WALL_CLOCK_FACTOR deadlines when the machine
            // keeps the spinning worker, at nice 19, off its core).
            await new Promise((resolve) => setTimeout(resolve, 200));
            const second = send(capture, normal, 'after@x.test').then((reply) => ({ reply, ms: Date.now() - started }));
            const [stuck, after] = await Promise.all([first, second]);
            expect(stuck.reply).to.startWith('250 ');
            expect(stuck.ms).to.be.at.least(timeoutMs - 50);
            expect(after.reply).to.startWith('250 ');
            expect(after.ms).to.be.below(timeoutMs * PARSE_WALL_CLOCK_FACTOR + 5000);

            const [email] = (await capture.capture.listEmails({ inbox: 'stuck', limit: 10 })).records;
            expect(email).to.include({ sender: 'header@x.test', recipient: 'stuck@x.test', subject: 'never parsed whole', body: '', htmlBody: '', attachments: [] });
            expect(await readBlob(capture.capture.blobStore, email!.rawKey)).to.equal(hung);
            expect(await capture.subjects('after')).to.equal(['right after']);
        }
        finally {
            await capture.stop();
        }
    });
});
