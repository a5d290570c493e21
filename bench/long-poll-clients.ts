/**
 * The client side of the long-poll fan-out benchmark, in a process of its own so
 * that its sockets and CPU are not the server's. argv: <port> <apiKey> <count>
 * <inboxes> <prefix> <timeoutSeconds>. Keeps `count` waiting list requests open,
 * request j on inbox `<prefix>-<j % inboxes>`: opened in batches (so the listen
 * backlog never overflows), and re-issued when one ends empty at its timeout (a
 * slow ramp can outlast the 28 s a request may wait). Records when each request
 * was issued and when its response arrived (Unix ms, sub-ms).
 * IPC: sends `{ opened, rampMs }` once every request is written; answers
 * `{ report: true }` with `{ responses: [j, issuedAt, arrivedAt, status, emails][],
 * pending: [j, issuedAt][] }`;
 * `{ stop: true }` ends the re-issuing.
 */
import * as Http from 'node:http';
import { wallMs } from './stats';

/** Requests opened at once before waiting for them to be written. */
const BATCH = 250;
/** Times one request is re-issued after an empty answer, at most. */
const MAX_REISSUES = 5;

const [portText, apiKey, countText, inboxesText, prefix, timeoutText] = process.argv.slice(2);
const port = Number(portText);
const count = Number(countText);
const inboxes = Number(inboxesText);
const timeout = Number(timeoutText);
// Keep-alive, as fetch and most HTTP clients of test suites use: a socket outlives its answer.
// Every socket is kept (Node's default keeps 256 free ones and closes the rest): otherwise
// the server would spend the wake closing some 9,700 sockets between the answers it writes.
const agent = new Http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: Infinity });
const responses: Array<[number, number, number, number, number]> = [];
const reissues = new Map<number, number>();
/** Requests in flight: j → when issued. */
const pending = new Map<number, number>();
let failures = 0;
let firstFailure = '';
let stopped = false;

function open(j: number): Promise<void> {
    return new Promise((resolve) => {
        const issuedAt = wallMs();
        pending.set(j, issuedAt);
        const request = Http.request({
            host: '127.0.0.1',
            port,
            agent,
            path: `/v1/emails?inbox=${prefix}-${j % inboxes}&wait=true&timeout=${timeout}`,
            headers: { authorization: `Bearer ${apiKey}` }
        }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (c: Buffer) => chunks.push(c));
            response.on('end', () => {
                const arrivedAt = wallMs();
                let emails = -1;
                try {
                    emails = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { emails: unknown[] }).emails.length;
                }
                catch {
                    // Not a list page: counted by its status.
                }

                pending.delete(j);
                responses.push([j, issuedAt, arrivedAt, response.statusCode ?? 0, emails]);
                const done = reissues.get(j) ?? 0;
                if (!stopped && response.statusCode === 200 && emails === 0 && done < MAX_REISSUES) {
                    reissues.set(j, done + 1);
                    void open(j);
                }
            });
        });
        request.on('error', (err) => {
            pending.delete(j);
            failures++;
            firstFailure ||= String(err);
            resolve();
        });
        // Written and flushed: the request now waits on the server.
        request.end(() => resolve());
    });
}

async function main(): Promise<void> {
    const start = Date.now();
    for (let j = 0; j < count; j += BATCH) {
        const batch: Promise<void>[] = [];
        for (let k = j; k < Math.min(count, j + BATCH); k++) {
            batch.push(open(k));
        }

        await Promise.all(batch);
    }

    process.send!({ opened: count - failures, failures, firstFailure, rampMs: Date.now() - start });
}

process.on('message', (message: { report?: boolean; stop?: boolean }) => {
    if (message.stop) {
        stopped = true;
    }

    if (message.report) {
        process.send!({ responses, pending: [...pending.entries()], failures, firstFailure });
    }
});
process.on('disconnect', () => process.exit(0));
void main();
