/**
 * The parse pool's worker (parse-pool.ts): parses one raw message (or header section) at a time with
 * parse.ts, finds its links and codes and folds its searched text, and posts the result
 * back, attachment contents transferred, not copied. Off the main thread, mailparser's whole-part decoding of a
 * long text (one string built in one step) and the search of it do not stall the
 * service's event loop.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { parseAndExtract } from './parse-and-extract';
import { parseHeaderFields } from './header-fields';
import type { HeadersReply, ParseRequest, ParseReply, WorkerReady } from './parse-pool';
import { currentThreadId } from './thread-cpu-time';

// The event loop comes first on a small machine: on Linux a nice value is per thread
// (setpriority of "process 0" is the calling thread), so this lowers the worker only;
// elsewhere it would lower the whole process, so it is left alone.
if (process.platform === 'linux') {
    try {
        setPriority(19);
    }
    catch {
        // Not allowed here (a sandbox): the worker runs at the service's priority.
    }
}

// A message parsed once before the first real one: the parser's first run compiles and
// loads what it needs lazily, which is the worker's start, not that message's parse.
const WARM_UP = Buffer.from('From: a@warm-up.invalid\r\nTo: b@warm-up.invalid\r\nSubject: =?utf-8?q?warm?=\r\n\r\nwarm\r\n');

const port = parentPort;
if (port) {
    port.on('message', (request: ParseRequest) => {
        void answer(request);
    });
    void parseAndExtract(WARM_UP).catch(() => undefined).then(() => {
        // Loaded and warm: the pool counts a parse's deadline (this thread's CPU) from here.
        const ready: WorkerReady = { ready: true, tid: currentThreadId() };
        port.postMessage(ready);
    });
}

async function answer({ id, raw, kind }: ParseRequest): Promise<void> {
    if (kind === 'headers') {
        const reply: HeadersReply = { id, headers: parseHeaderFields(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)) };
        port?.postMessage(reply);
        return;
    }

    // Here, not on the main thread, a long body's search for links and codes leaves the event loop alone.
    const parsed = await parseAndExtract(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
    const transfer: ArrayBuffer[] = [];
    const attachments = parsed.attachments.map((attachment) => {
        const content = ownBuffer(attachment.content);
        transfer.push(content.buffer as ArrayBuffer);
        return { ...attachment, content };
    });
    const error = parsed.error ? { name: parsed.error.name, message: parsed.error.message } : undefined;
    const reply: ParseReply = { id, parsed: { ...parsed, attachments, error } };
    port?.postMessage(reply, transfer);
}

/**
 * A buffer alone on its ArrayBuffer, so that transferring it moves only its bytes:
 * small buffers share Node's pool (untransferable) and a slice shares its parent.
 */
function ownBuffer(content: Buffer): Buffer {
    if (content.byteOffset === 0 && content.byteLength === content.buffer.byteLength && content.byteLength >= 4096) {
        return content;
    }

    const copy = Buffer.allocUnsafeSlow(content.byteLength);
    content.copy(copy);
    return copy;
}
