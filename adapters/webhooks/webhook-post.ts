/** One webhook attempt over Node's http/https: no redirect is followed, a deadline covers all of it. */

import * as Http from 'node:http';
import * as Https from 'node:https';

/** How an attempt ended: `ok` for a 2xx answer within the deadline. */
export type PostOutcome = { ok: true; status: number } | { ok: false; error: string };

/**
 * POSTs `body` to `url` and answers once the status line is in (the response body is
 * discarded). Connect, send and the status line together get `timeoutMs`; a 3xx is a
 * failure like any status outside 2xx. `signal` aborts the attempt (a closing dispatcher).
 */
export function postWebhook(url: string, body: Buffer, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<PostOutcome> {
    return new Promise((resolve) => {
        let settled = false;
        const settle = (outcome: PostOutcome) => {
            if (!settled) {
                settled = true;
                resolve(outcome);
            }
        };

        let target: URL;
        try {
            target = new URL(url);
        }
        catch {
            settle({ ok: false, error: 'invalid URL' });
            return;
        }

        const transport = target.protocol === 'https:' ? Https : Http;
        // A connection per attempt (agent: false): a receiver's stale keep-alive socket never fails a delivery.
        const request = transport.request(target, {
            method: 'POST',
            agent: false,
            headers: { ...headers, 'content-length': String(body.length) },
            signal
        });
        // The deadline also cuts a response body that never ends, so no socket outlives it.
        const deadline = setTimeout(() => {
            settle({ ok: false, error: `no answer within ${timeoutMs} ms` });
            request.destroy();
        }, timeoutMs);
        request.on('response', (response) => {
            const status = response.statusCode ?? 0;
            settle(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, error: `HTTP ${status}` });
            response.on('end', () => clearTimeout(deadline));
            response.on('error', () => clearTimeout(deadline));
            response.resume();
        });
        request.on('error', (err: NodeJS.ErrnoException) => {
            clearTimeout(deadline);
            settle({ ok: false, error: err.code ?? err.message });
        });
        request.on('close', () => clearTimeout(deadline));
        request.end(body);
    });
}
