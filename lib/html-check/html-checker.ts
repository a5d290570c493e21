/**
 * The HTML compatibility check (docs/api.md, "Checks"), run in one worker thread shared
 * by the process, started on first use: the package and its data (about 1.5 MB of JSON)
 * are loaded once, the parse of a large HTML body never holds the caller's event loop,
 * and the package's copy that the thread rewrites is the thread's own.
 */

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { InboxCaptureError } from '../errors';
import { startWorkerScript } from '../util/worker-script';
import type { HtmlCheckReply, HtmlCheckRequest } from './html-check-worker';
import { DEFAULT_CLIENT_GLOBS, type HtmlCheckResult } from './html-check-types';

interface Pending {
    resolve(result: HtmlCheckResult): void;
    reject(err: Error): void;
}

/** Results kept, most recently used last: a check of a 100 KB newsletter costs the thread about half a second. */
const MAX_KEPT_RESULTS = 256;

const kept = new Map<string, Promise<HtmlCheckResult>>();
let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;

function failAll(err: Error): void {
    for (const job of pending.values()) {
        job.reject(err);
    }

    pending.clear();
}

function started(): Worker {
    if (worker) {
        return worker;
    }

    const thread = startWorkerScript(join(__dirname, 'html-check-worker'));
    thread.on('message', (reply: HtmlCheckReply) => {
        const job = pending.get(reply.id);
        pending.delete(reply.id);
        // An idle thread keeps no process alive.
        if (pending.size === 0) {
            thread.unref();
        }

        if (!job) {
            return;
        }

        if (reply.error) {
            job.reject(reply.error.code === 'NO_CLIENT' ? new InboxCaptureError('INVALID_INPUT', reply.error.message) : new Error(`HTML check failed: ${reply.error.message}`));
            return;
        }

        job.resolve(reply.result);
    });
    // A thread that died is started again by the next check.
    const lost = (err: Error) => {
        if (worker === thread) {
            worker = undefined;
        }

        failAll(err);
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`HTML check thread exited with code ${code}`)));
    worker = thread;
    return thread;
}

/**
 * The caniemail check of `html` for the clients `globs` match (default: the Gmail, Outlook,
 * Apple Mail, Yahoo and Samsung Email families); INVALID_INPUT when they match none.
 * An empty `html` is an email without HTML: score 100, no findings, `html: false`.
 */
export function checkHtmlCompatibility(html: string, globs: readonly string[] = DEFAULT_CLIENT_GLOBS): Promise<HtmlCheckResult> {
    // The same HTML with the same globs gives the same answer until the package changes:
    // it is checked once, and readers that come meanwhile share the one check.
    const key = `${createHash('sha256').update(html).digest('hex')}\n${globs.join('\n')}`;
    const known = kept.get(key);
    if (known) {
        kept.delete(key);
        kept.set(key, known);
        return known;
    }

    const result = run(html, globs);
    kept.set(key, result);
    result.catch(() => kept.delete(key));
    if (kept.size > MAX_KEPT_RESULTS) {
        kept.delete(kept.keys().next().value!);
    }

    return result;
}

function run(html: string, globs: readonly string[]): Promise<HtmlCheckResult> {
    return new Promise((resolve, reject) => {
        const thread = started();
        const id = nextId++;
        pending.set(id, { resolve, reject });
        thread.ref();
        thread.postMessage({ id, html, globs: [...globs] } satisfies HtmlCheckRequest);
    });
}
