/**
 * Parses large messages in worker threads. mailparser decodes a text part in one
 * step (concatenate, toString, normalise line breaks) that cannot yield: for a
 * 24 MiB part that is hundreds of ms of a stalled event loop. Messages from
 * `minBytes` on go to a small pool of workers (parse-worker.ts); smaller ones are
 * parsed in-thread, where a worker round trip would cost more than the parse.
 *
 * A worker that dies mid-parse fails that parse only (the ingest then fails and its
 * sender retries); the next parse gets a new worker. Idle workers do not keep the
 * process alive; close() terminates them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { parseMessage, type ParsedAttachment, type ParsedMessage } from './parse';

/** Messages from this size on (bytes) are parsed in a worker: 1 MiB. */
export const DEFAULT_WORKER_PARSE_MIN_BYTES = 1024 * 1024;

/** Workers at most: one leaves the other core of a small machine to the event loop. */
export const DEFAULT_PARSE_WORKERS = 1;

/** What the main thread posts to a worker. */
export interface ParseRequest {
    id: number;
    raw: Uint8Array;
}

/** What a worker posts back: a ParsedMessage whose error is plain data. */
export interface ParseReply {
    id: number;
    parsed: Omit<ParsedMessage, 'error' | 'attachments'> & {
        attachments: Array<Omit<ParsedAttachment, 'content'> & { content: Uint8Array }>;
        error?: { name: string; message: string };
    };
}

/** Parses messages, large ones in worker threads. */
export interface ParsePool {
    /** parseMessage()'s result; rejects only when the worker parsing it dies. */
    parse(raw: Buffer): Promise<ParsedMessage>;
    /** Terminates the workers; parses under way reject. */
    close(): Promise<void>;
}

/** Pool settings; all optional. */
export interface ParsePoolOptions {
    /** Messages from this size on are parsed in a worker (default 1 MiB; 0: all). */
    minBytes?: number;
    /** Workers at most (default 1). */
    size?: number;
    /** The worker script (default: parse-worker beside this file); tests substitute one. */
    workerFile?: string;
}

interface Job {
    id: number;
    raw: Buffer;
    resolve(parsed: ParsedMessage): void;
    reject(err: Error): void;
}

interface Slot {
    worker: Worker;
    job: Job | undefined;
}

/** Creates a pool; workers start on the first large message. */
export function createParsePool(options: ParsePoolOptions = {}): ParsePool {
    const minBytes = options.minBytes ?? DEFAULT_WORKER_PARSE_MIN_BYTES;
    const size = Math.max(1, options.size ?? DEFAULT_PARSE_WORKERS);
    const slots = new Set<Slot>();
    const queue: Job[] = [];
    let nextId = 1;
    let closed = false;

    const startWorker = (): Slot => {
        const worker = options.workerFile ? new Worker(options.workerFile) : defaultWorker();
        const slot: Slot = { worker, job: undefined };
        const fail = (err: Error) => {
            slots.delete(slot);
            const job = slot.job;
            slot.job = undefined;
            job?.reject(err);
            void worker.terminate();
            pump();
        };
        worker.on('message', (reply: ParseReply) => {
            const job = slot.job;
            if (!job || reply.id !== job.id) {
                return;
            }

            slot.job = undefined;
            worker.unref();
            job.resolve(fromReply(reply));
            pump();
        });
        worker.on('error', (err) => fail(err));
        worker.on('exit', (code) => fail(new Error(`the parse worker exited (code ${code})`)));
        worker.unref();
        slots.add(slot);
        return slot;
    };

    const pump = () => {
        while (!closed && queue.length > 0) {
            let slot = [...slots].find((s) => !s.job);
            if (!slot && slots.size < size) {
                slot = startWorker();
            }

            if (!slot) {
                return;
            }

            const job = queue.shift() as Job;
            slot.job = job;
            slot.worker.ref();
            // A copy the worker owns: the caller keeps `raw` to store it.
            const copy = Buffer.allocUnsafeSlow(job.raw.length);
            job.raw.copy(copy);
            const request: ParseRequest = { id: job.id, raw: copy };
            slot.worker.postMessage(request, [copy.buffer as ArrayBuffer]);
        }
    };

    return {
        parse(raw) {
            if (closed || raw.length < minBytes) {
                return parseMessage(raw);
            }

            return new Promise<ParsedMessage>((resolve, reject) => {
                queue.push({ id: nextId++, raw, resolve, reject });
                pump();
            });
        },

        async close() {
            closed = true;
            for (const job of queue.splice(0)) {
                job.reject(new Error('the parse pool is closed'));
            }

            const workers = [...slots].map((s) => s.worker);
            await Promise.all(workers.map((w) => w.terminate()));
        }
    };
}

function fromReply({ parsed }: ParseReply): ParsedMessage {
    const { error, attachments, ...fields } = parsed;
    const message: ParsedMessage = {
        ...fields,
        attachments: attachments.map((a) => ({ ...a, content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength) }))
    };
    if (error) {
        const err = new Error(error.message);
        err.name = error.name;
        message.error = err;
    }

    return message;
}

/**
 * The compiled worker beside this file; when running from the TypeScript sources
 * (tests), a shim that compiles the .ts worker on load as the test runner does.
 */
function defaultWorker(): Worker {
    const compiled = join(__dirname, 'parse-worker.js');
    if (existsSync(compiled)) {
        return new Worker(compiled);
    }

    const source = join(__dirname, 'parse-worker.ts');
    const typescript = require.resolve('typescript');
    const shim = `
        const Ts = require(${JSON.stringify(typescript)});
        const Fs = require('node:fs');
        require.extensions['.ts'] = (module, filename) => {
            const compilerOptions = { module: Ts.ModuleKind.CommonJS, target: Ts.ScriptTarget.ES2022, esModuleInterop: true };
            module._compile(Ts.transpileModule(Fs.readFileSync(filename, 'utf8'), { fileName: filename, compilerOptions }).outputText, filename);
        };
        require(${JSON.stringify(source)});
    `;
    return new Worker(shim, { eval: true });
}
