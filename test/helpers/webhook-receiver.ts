import * as Http from 'node:http';
import type * as Net from 'node:net';

/** One request a receiver got. */
export interface ReceivedWebhook {
    /** Date.now() when its body was complete. */
    at: number;
    method: string;
    /** Path and query as sent. */
    url: string;
    headers: Http.IncomingHttpHeaders;
    body: Buffer;
}

/** What to do with request number `index` (0 for the first): a status, or `hold` (never answer). */
export type Responder = (index: number, request: ReceivedWebhook) => { status: number; headers?: Record<string, string> } | 'hold';

/** A real HTTP server on 127.0.0.1 that records every request. */
export interface WebhookReceiver {
    /** `http://127.0.0.1:<port>` + `path`. */
    url(path?: string): string;
    port: number;
    received: ReceivedWebhook[];
    /** Requests answered `hold`, still open. */
    held(): number;
    /** Most requests open at once so far. */
    maxOpen(): number;
    /** Resolves once `count` requests arrived (rejects after `limitMs`: a hang, not a speed claim). */
    waitFor(count: number, limitMs?: number): Promise<ReceivedWebhook[]>;
    /** Closes the server and every connection. */
    close(): Promise<void>;
}

/** Starts a receiver answering 200 unless `respond` says otherwise. */
export async function startWebhookReceiver(respond: Responder = () => ({ status: 200 }), port = 0): Promise<WebhookReceiver> {
    const received: ReceivedWebhook[] = [];
    const sockets = new Set<Net.Socket>();
    const waiters: (() => void)[] = [];
    let open = 0;
    let maxOpen = 0;
    let held = 0;

    const server = Http.createServer((req, res) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        res.on('close', () => open--);
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const request: ReceivedWebhook = { at: Date.now(), method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
            const index = received.length;
            received.push(request);
            waiters.splice(0).forEach((w) => w());
            const answer = respond(index, request);
            if (answer === 'hold') {
                held++;
                res.on('close', () => held--);
                return;
            }

            res.writeHead(answer.status, answer.headers).end('ok');
        });
    });
    server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
    });
    const bound = (server.address() as Net.AddressInfo).port;

    return {
        url: (path = '/hook') => `http://127.0.0.1:${bound}${path}`,
        port: bound,
        received,
        held: () => held,
        maxOpen: () => maxOpen,
        async waitFor(count, limitMs = 30_000) {
            const limit = Date.now() + limitMs;
            while (received.length < count) {
                if (Date.now() > limit) {
                    throw new Error(`the receiver got ${received.length} of ${count} requests within ${limitMs} ms`);
                }

                await new Promise<void>((resolve) => {
                    const timer = setTimeout(resolve, 100);
                    waiters.push(() => {
                        clearTimeout(timer);
                        resolve();
                    });
                });
            }

            return received.slice(0, count);
        },
        close() {
            sockets.forEach((s) => s.destroy());
            return new Promise((resolve) => server.close(() => resolve()));
        }
    };
}
