import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureClient, WaitTimeoutError } from '../../../adapters/client';
import { POSTGRES_S3, SQLITE_FS, type ClientBackend, type ClientBackendKind } from '../../helpers/client-backends';
import { buildMail } from '../../helpers/mail';
import { recordingFetch, type FetchCall } from '../../helpers/recording-fetch';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** The long-poll requests among the client's calls, with their `timeout` in seconds. */
function polls(calls: FetchCall[]): number[] {
    return calls.filter((c) => new URL(c.url).searchParams.get('wait') === 'true').map((c) => Number(new URL(c.url).searchParams.get('timeout')));
}

/** Resolves once the client has made its `n`-th long-poll request. */
function pollWatcher(): { fetch: ReturnType<typeof recordingFetch>['fetch']; calls: FetchCall[]; started(n: number): Promise<void> } {
    const waiters: Array<{ n: number; resolve: () => void }> = [];
    let count = 0;
    const recorder = recordingFetch((call) => {
        if (new URL(call.url).searchParams.get('wait') === 'true') {
            count++;
            for (const waiter of waiters.filter((w) => w.n <= count)) {
                waiter.resolve();
            }
        }
    });
    return {
        ...recorder,
        started: (n) => new Promise<void>((resolve) => {
            if (count >= n) {
                resolve();
                return;
            }

            waiters.push({ n, resolve });
        })
    };
}

function suite(kind: ClientBackendKind): void {
    describe(`waitForEmail() on ${kind.name}`, () => {
        let backend: ClientBackend;

        const send = (to: string, subject: string, extra: Parameters<typeof buildMail>[0] = {}) => backend.p.api.ingestForApi(buildMail({ to: `${to}@test.example`, subject, ...extra }));
        const clientWith = (options: { fetch?: ReturnType<typeof recordingFetch>['fetch']; longPollSeconds?: number } = {}) => new InboxCaptureClient({ baseUrl: backend.baseUrl, apiKey: backend.p.apiKey, ...options });

        before(async () => {
            backend = await kind.start();
        });

        after(() => backend?.cleanup());

        it('resolves at once with the newest matching email when one is there', async () => {
            await send('ready', 'older');
            await new Promise((resolve) => setTimeout(resolve, 2));
            await send('ready', 'newer');
            const { fetch, calls } = recordingFetch();
            const email = await clientWith({ fetch }).waitForEmail({ inbox: 'ready' });
            expect(email.subject).to.equal('newer');
            expect(polls(calls)).to.equal([28]);
            expect(new URL(calls[0].url).searchParams.get('limit')).to.equal('1');
        });

        it('resolves when the email arrives while it waits, ignoring mail that does not match', async () => {
            const watcher = pollWatcher();
            const waiting = clientWith({ fetch: watcher.fetch }).waitForEmail({ inbox: 'mid-wait', subject: 'wanted', sender: 'app@', hasAttachments: false, timeoutMs: 20_000 });
            await watcher.started(1);
            await send('mid-wait', 'not this one', { from: 'app@sender.test' });
            await send('mid-wait', 'wanted, from someone else', { from: 'other@sender.test' });
            await send('mid-wait', 'wanted: your code', { from: 'app@sender.test' });
            const email = await waiting;
            expect(email.subject).to.equal('wanted: your code');
            const query = new URL(watcher.calls[0].url).searchParams;
            expect(query.get('subject')).to.equal('wanted');
            expect(query.get('sender')).to.equal('app@');
            expect(query.get('hasAttachments')).to.equal('false');
        });

        it('waits for the email that matches q, the body text included', async () => {
            const watcher = pollWatcher();
            const waiting = clientWith({ fetch: watcher.fetch }).waitForEmail({ inbox: 'q-wait', q: 'body:"order 4242"', timeoutMs: 20_000 });
            await watcher.started(1);
            await send('q-wait', 'your order', { text: 'Order 4241 has shipped' });
            await send('q-wait', 'your order', { text: 'ORDER 4242 has shipped' });
            const email = await waiting;
            expect(email.body).to.equal('ORDER 4242 has shipped\n');
            expect(new URL(watcher.calls[0].url).searchParams.get('q')).to.equal('body:"order 4242"');
        });

        it('chains server long-polls until the email arrives', async () => {
            const watcher = pollWatcher();
            const waiting = clientWith({ fetch: watcher.fetch, longPollSeconds: 1 }).waitForEmail({ inbox: 'chained', timeoutMs: 30_000 });
            // The first long-poll has ended empty when the second starts.
            await watcher.started(2);
            await send('chained', 'after two polls');
            expect((await waiting).subject).to.equal('after two polls');
            const seconds = polls(watcher.calls);
            expect(seconds.length).to.be.at.least(2);
            expect(seconds.every((s) => s === 1)).to.be.true();
        });

        it('passes receivedAfter, so an older email does not answer', async () => {
            const [old] = await send('after', 'old one');
            const watcher = pollWatcher();
            const waiting = clientWith({ fetch: watcher.fetch }).waitForEmail({ inbox: 'after', receivedAfter: new Date(old.receivedAt + 1), timeoutMs: 20_000 });
            await watcher.started(1);
            await new Promise((resolve) => setTimeout(resolve, 5));
            await send('after', 'new one');
            expect((await waiting).subject).to.equal('new one');
            expect(new URL(watcher.calls[0].url).searchParams.get('receivedAfter')).to.equal(String(old.receivedAt + 1));
        });

        it('rejects with WaitTimeoutError after timeoutMs, having chained long-polls', async () => {
            const watcher = pollWatcher();
            const err = await expect(clientWith({ fetch: watcher.fetch, longPollSeconds: 1 }).waitForEmail({ inbox: 'silent', timeoutMs: 2500 })).to.reject(WaitTimeoutError);
            expect(err.timeoutMs).to.equal(2500);
            expect(err.name).to.equal('WaitTimeoutError');
            expect(polls(watcher.calls).length).to.be.at.least(2);
        });

        it('asks the server for no longer than what is left of timeoutMs', async () => {
            const watcher = pollWatcher();
            await expect(clientWith({ fetch: watcher.fetch }).waitForEmail({ inbox: 'silent', timeoutMs: 1200 })).to.reject(WaitTimeoutError);
            expect(polls(watcher.calls)).to.equal([2]);
        });

        it('rejects at once with the signal\'s reason when aborted during a 28 s long-poll', { timeout: 10_000 }, async () => {
            const watcher = pollWatcher();
            const controller = new AbortController();
            const reason = new Error('test is over');
            const waiting = clientWith({ fetch: watcher.fetch }).waitForEmail({ inbox: 'aborted', signal: controller.signal });
            await watcher.started(1);
            controller.abort(reason);
            expect(await expect(waiting).to.reject()).to.shallow.equal(reason);
            expect(polls(watcher.calls)).to.equal([28]);
        });

        it('rejects with an AbortError when aborted without a reason', { timeout: 10_000 }, async () => {
            const watcher = pollWatcher();
            const controller = new AbortController();
            const waiting = clientWith({ fetch: watcher.fetch }).waitForEmail({ inbox: 'aborted', signal: controller.signal });
            await watcher.started(1);
            controller.abort();
            const err = await expect(waiting).to.reject(Error);
            expect(err.name).to.equal('AbortError');
        });

        it('rejects without a request when the signal is already aborted', async () => {
            const { fetch, calls } = recordingFetch();
            const reason = new Error('already');
            await expect(clientWith({ fetch }).waitForEmail({ inbox: 'aborted', signal: AbortSignal.abort(reason) })).to.reject(Error, 'already');
            expect(calls).to.equal([]);
        });

        it('refuses a timeoutMs that is not a number of milliseconds a timer can wait', async () => {
            for (const timeoutMs of [Number.NaN, -1, Infinity, 2 ** 31]) {
                await expect(clientWith().waitForEmail({ inbox: 'x', timeoutMs }), String(timeoutMs)).to.reject(TypeError, /timeoutMs/);
            }
        });
    });
}

describe('waitForEmail()', () => {
    suite(SQLITE_FS);
    suite(POSTGRES_S3);
});
