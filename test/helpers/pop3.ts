import * as Net from 'node:net';
import * as Path from 'node:path';
import { run } from './child-process';

const SCRIPT = Path.join(__dirname, 'pop3-client.py');

/** One step of a poplib session: a command and its arguments, e.g. `['top', 1, 0]`. */
export type PoplibStep = [string, ...(string | number)[]];

/** What one step answered (see pop3-client.py). */
export interface PoplibReply {
    resp?: string;
    lines?: string[];
    /** RETR and TOP: the message as poplib returned it, each line ending in CRLF. */
    data?: string;
    octets?: number;
    count?: number;
    size?: number;
    capa?: Record<string, string[]>;
    error?: string;
    closed?: string;
}

/** A poplib session's greeting, its STLS reply (if asked) and each step's reply. */
export interface PoplibSession {
    welcome: string;
    stls?: string;
    steps: PoplibReply[];
}

/** Runs one session of Python's poplib against 127.0.0.1:`port`; `tls` picks plain, STLS first, or POP3S. */
export async function poplib(port: number, steps: PoplibStep[], tls: 'none' | 'stls' | 'implicit' = 'none'): Promise<PoplibSession> {
    const input = JSON.stringify({ host: '127.0.0.1', port, tls, steps });
    const result = await run('python3', [SCRIPT], { cwd: __dirname, env: { ...process.env, PYTHONIOENCODING: 'utf-8' }, input });
    if (result.code !== 0) {
        throw new Error(`pop3-client.py exited ${result.code}: ${result.stderr}`);
    }

    return JSON.parse(result.stdout) as PoplibSession;
}

/** The bytes of a RETR or TOP reply. */
export function retrieved(reply: PoplibReply): Buffer {
    return Buffer.from(reply.data ?? '', 'base64');
}

/**
 * Writes `data` to 127.0.0.1:`port` as one client would, after the greeting, and collects
 * everything the server sends until it closes the connection (or `timeoutMs` passes, then rejects).
 */
export function rawPop3(port: number, data: string | Buffer, timeoutMs = 20_000): Promise<string> {
    return new Promise((resolve, reject) => {
        const socket = Net.connect(port, '127.0.0.1');
        let received = '';
        let sent = false;
        const timer = setTimeout(() => {
            socket.destroy();
            reject(new Error(`no close within ${timeoutMs} ms; received: ${received.slice(0, 500)}`));
        }, timeoutMs);
        socket.on('data', (chunk) => {
            received += chunk.toString('latin1');
            if (!sent) {
                sent = true;
                socket.write(data);
            }
        });
        socket.on('error', () => undefined);
        socket.on('close', () => {
            clearTimeout(timer);
            resolve(received);
        });
    });
}
