/**
 * Parses messages off the event loop: mailparser decodes a text part in one step that
 * cannot yield, and hostile headers can make its address parsing slow (docs/operations.md,
 * "The parse worker"). A small pool of workers takes one message each at a time; the rest
 * wait in order. A small, plain message (small-message.ts) is parsed on the calling thread
 * instead: its parse costs a fraction of a worker's round trip, and its shape bounds it.
 *
 * A parse that runs past the deadline is abandoned: its worker is terminated (and a new
 * one started for whatever waits). The deadline counts the worker thread's CPU time where
 * the system tells it (thread-cpu-time.ts), and wall time up to PARSE_WALL_CLOCK_FACTOR
 * deadlines: a worker at the lowest priority on a busy machine waits for a core, which is
 * not a slow parse. The message resolves as `abandoned`, with every field empty; the ingest then reads its header fields back (abandoned-parse-headers.ts). A worker that dies
 * mid-parse fails that parse only (the ingest then fails and its sender retries). Idle
 * workers do not keep the process alive; close() terminates them.
 */
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorkerScript } from '../util/worker-script';
import { DEFAULT_PARSE_TIMEOUT_MS, DEFAULT_PARSE_WORKERS } from '../defaults';
import type { HeaderField } from './header-fields';
import { emptyParsedMessage, type ParsedAttachment, type ParsedMessage } from './parse';
import { parseAndExtract } from './parse-and-extract';
import { isSmallMessage } from './small-message';
import { threadCpuMs } from './thread-cpu-time';

/**
 * A parse the machine starves of CPU is still abandoned once this many deadlines of wall
 * time have passed, whatever CPU it had: a worker does not stay held for ever.
 */
export const PARSE_WALL_CLOCK_FACTOR = 3;

/** What the main thread posts to a worker: a whole message, or a header section alone (`headers`). */
export interface ParseRequest {
    id: number;
    raw: Uint8Array;
    kind?: 'headers';
}

/** What a worker posts back: a ParsedMessage whose error is plain data. */
export interface ParseReply {
    id: number;
    parsed: Omit<ParsedMessage, 'error' | 'attachments'> & {
        attachments: Array<Omit<ParsedAttachment, 'content'> & { content: Uint8Array }>;
        error?: { name: string; message: string };
    };
}

/** What a worker posts once its code is loaded (and warmed up): its thread id where the system has one. */
export interface WorkerReady {
    ready: true;
    tid?: number;
}

/** What a worker posts back for a header section. */
export interface HeadersReply {
    id: number;
    headers: HeaderField[];
}

/** Parses messages in worker threads. */
export interface ParsePool {
    /** parseMessage()'s result, or an abandoned one past the deadline; rejects when the worker dies or the pool is closed. */
    parse(raw: Buffer): Promise<ParsedMessage>;
    /** parseHeaderFields() of a header section, in a worker; rejects past the deadline, when the worker dies or the pool is closed. */
    parseHeaders(section: Buffer): Promise<HeaderField[]>;
    /** Terminates the workers; parses under way and waiting reject. */
    close(): Promise<void>;
    /** Worker threads started and not yet ended (a pool that parsed only small messages has none). */
    workerCount(): number;
}

/** Pool settings; all optional. */
export interface ParsePoolOptions {
    /** Workers at most (default DEFAULT_PARSE_WORKERS: one per core, up to 4). */
    size?: number;
    /** A parse that has run this long is abandoned, ms of the worker's CPU (wall time where not measurable; PARSE_WALL_CLOCK_FACTOR times it in wall time at most); default 10000. */
    timeoutMs?: number;
    /** The worker script, `.js` or `.ts` (default: parse-worker beside this file); tests substitute one. */
    workerFile?: string;
    /**
     * Small, plain messages (small-message.ts) are parsed on the calling thread (default: true
     * with the package's worker; false with a substitute `workerFile`, whose misbehaviour a test
     * wants every message to meet).
     */
    smallInThread?: boolean;
}

interface Job {
    id: number;
    raw: Buffer;
    kind?: 'headers';
    resolve(result: ParsedMessage | HeaderField[]): void;
    reject(err: Error): void;
}

interface Slot {
    worker: Worker;
    job: Job | undefined;
    deadline: NodeJS.Timeout | undefined;
    /** The worker has loaded its code and warmed up (its first message): a job is posted to it, and its deadline runs, from then on. */
    ready: boolean;
    /** The worker's thread id (it tells it when ready), whose CPU time the deadline counts; undefined: the wall clock counts. */
    tid: number | undefined;
    /** Where the job in hand started: the thread's CPU time (when readable) and the wall clock, ms. */
    startedAt: { cpuMs: number | undefined; wallMs: number };
}

/** Creates a pool; workers start as messages arrive. */
export function createParsePool(options: ParsePoolOptions = {}): ParsePool {
    const size = Math.max(1, options.size ?? DEFAULT_PARSE_WORKERS);
    const timeoutMs = options.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
    const smallInThread = options.smallInThread ?? options.workerFile === undefined;
    const slots = new Set<Slot>();
    const queue: Job[] = [];
    let nextId = 1;
    let closed = false;

    // The slot's job leaves it: the worker is free again (or gone).
    const takeJob = (slot: Slot): Job | undefined => {
        const job = slot.job;
        slot.job = undefined;
        clearTimeout(slot.deadline);
        slot.deadline = undefined;
        return job;
    };

    const retire = (slot: Slot) => {
        if (slots.delete(slot)) {
            void slot.worker.terminate();
        }
    };

    const startWorker = (): Slot => {
        const started = startWorkerScript(options.workerFile ?? join(__dirname, 'parse-worker'));
        const slot: Slot = { worker: started, job: undefined, deadline: undefined, ready: false, tid: undefined, startedAt: { cpuMs: undefined, wallMs: 0 } };
        const fail = (err: Error) => {
            retire(slot);
            takeJob(slot)?.reject(err);
            pump();
        };
        started.on('message', (reply: ParseReply | HeadersReply | WorkerReady) => {
            if ('ready' in reply) {
                slot.ready = true;
                slot.tid = reply.tid;
                dispatch(slot);
                return;
            }

            if (slot.job?.id !== reply.id) {
                return;
            }

            const job = takeJob(slot)!;
            started.unref();
            job.resolve('headers' in reply ? reply.headers : fromReply(reply));
            pump();
        });
        started.on('error', (err) => fail(err));
        started.on('exit', (code) => fail(new Error(`the parse worker exited (code ${code})`)));
        started.unref();
        slots.add(slot);
        return slot;
    };

    // Past the deadline: the worker is replaced, the message goes on unparsed (a header section's reader gets an error).
    const abandon = (slot: Slot) => {
        const job = takeJob(slot);
        retire(slot);
        if (job?.kind === 'headers') {
            job.reject(new Error(`parsing a header section took longer than ${timeoutMs} ms and was abandoned`));
        }
        else if (job) {
            const parsed = emptyParsedMessage();
            parsed.abandoned = true;
            parsed.error = new Error(`the parse took longer than ${timeoutMs} ms and was abandoned`);
            job.resolve(parsed);
        }

        pump();
    };

    // Past the deadline of CPU (or of wall time where the thread's CPU cannot be read), or
    // past PARSE_WALL_CLOCK_FACTOR deadlines of wall time: abandoned. Otherwise the parse
    // has waited for a core rather than run, and is checked again when its CPU could be up.
    const checkDeadline = (slot: Slot) => {
        const cpuMs = slot.tid === undefined || slot.startedAt.cpuMs === undefined ? undefined : threadCpuMs(slot.tid);
        const wallMs = performance.now() - slot.startedAt.wallMs;
        const usedMs = cpuMs === undefined ? wallMs : cpuMs - slot.startedAt.cpuMs!;
        const wallLeftMs = timeoutMs * PARSE_WALL_CLOCK_FACTOR - wallMs;
        if (usedMs >= timeoutMs || wallLeftMs <= 0) {
            slot.deadline = undefined;
            abandon(slot);
            return;
        }

        slot.deadline = setTimeout(() => checkDeadline(slot), Math.max(1, Math.min(timeoutMs - usedMs, wallLeftMs)));
    };

    // The job goes to its worker once the worker is loaded and warm (it says so), and the
    // deadline starts with it: starting a worker is not the message's parse.
    const dispatch = (slot: Slot) => {
        const job = slot.job;
        if (!slot.ready || !job || slot.deadline) {
            return;
        }

        slot.startedAt = { cpuMs: slot.tid === undefined ? undefined : threadCpuMs(slot.tid), wallMs: performance.now() };
        slot.deadline = setTimeout(() => checkDeadline(slot), timeoutMs);
        // A copy the worker owns, moved rather than cloned: the caller keeps `raw` to store it.
        const copy = new Uint8Array(job.raw.length);
        copy.set(job.raw);
        const request: ParseRequest = { id: job.id, raw: copy, ...(job.kind ? { kind: job.kind } : {}) };
        slot.worker.postMessage(request, [copy.buffer]);
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

            slot.job = queue.shift() as Job;
            slot.worker.ref();
            dispatch(slot);
        }
    };

    const enqueue = <T extends ParsedMessage | HeaderField[]>(raw: Buffer, kind?: 'headers'): Promise<T> => {
        if (closed) {
            return Promise.reject(new Error('the parse pool is closed'));
        }

        return new Promise<T>((resolve, reject) => {
            queue.push({ id: nextId++, raw, ...(kind ? { kind } : {}), resolve: resolve as Job['resolve'], reject });
            pump();
        });
    };

    return {
        parse(raw) {
            if (closed) {
                return Promise.reject(new Error('the parse pool is closed'));
            }

            // Its shape bounds what a small message's parse costs, to milliseconds (far inside the
            // deadline, which a parse on this thread could not be abandoned at).
            return smallInThread && isSmallMessage(raw) ? parseAndExtract(raw) : enqueue<ParsedMessage>(raw);
        },
        parseHeaders: (section) => enqueue<HeaderField[]>(section, 'headers'),
        workerCount: () => slots.size,

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
