import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { createLineSplitter, parseCommand, type LineEvent, type Pop3Command } from './command-lines';

/** What a session does with a command: go on reading, or close the connection (after what it wrote). */
export type CommandOutcome = 'continue' | 'close';

/** The connection as a session sees it: writes that wait for the client to read, STLS, the end. */
export interface Pop3Transport {
    /** Writes, and resolves once the socket can take more; false when the connection is gone. */
    write(data: string | Buffer): Promise<boolean>;
    /** Starts TLS on the connection (after `+OK` to STLS); commands the client sent before it are dropped. */
    startTls(): Promise<void>;
    /** True inside TLS (implicit, or after STLS). */
    readonly secure: boolean;
    /** The client's IP address. */
    readonly remoteAddress: string;
}

/** How one connection is run. */
export interface ConnectionOptions {
    maxLineBytes: number;
    maxCommands: number;
    idleTimeoutMs: number;
    /** The certificate STLS starts TLS with; null when STLS is not offered. */
    secureContext: SecureContext | null;
    log: (message: string, error?: unknown) => void;
}

/** A running connection: its session's hooks, and a way to end it from outside. */
export interface Pop3Connection {
    /** Ends the connection after the command under way (if any), with `-ERR` and `reason`. */
    shutdown(reason: string): void;
    /** Settles when the socket has closed. */
    readonly closed: Promise<void>;
}

/**
 * Reads commands from `socket` one at a time, in order (a client may send several at
 * once), and hands each to `handle`; the socket is not read while a command runs, so a
 * client that floods gets no more buffered than one chunk. A line too long, a command
 * past the session's allowance and silence past the idle timeout each close it.
 */
export function runConnection(socket: Socket, options: ConnectionOptions, greet: (transport: Pop3Transport) => Promise<void>, handle: (command: Pop3Command, transport: Pop3Transport) => Promise<CommandOutcome>): Pop3Connection {
    let current: Socket = socket;
    let splitter = createLineSplitter(options.maxLineBytes);
    let queue: LineEvent[] = [];
    let busy = false;
    let ended = false;
    let commands = 0;
    let shutdownReason: string | null = null;
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
        resolveClosed = resolve;
    });

    const end = () => {
        if (!ended) {
            ended = true;
            current.end();
            // Read on, discarding, so that the client's close is seen and the socket closes.
            current.off('data', onData);
            current.resume();
            // A client that does not read its last replies does not hold the socket open for long.
            current.setTimeout(options.idleTimeoutMs, () => current.destroy());
        }
    };

    const write = (data: string | Buffer): Promise<boolean> => {
        if (current.destroyed || current.writableEnded) {
            return Promise.resolve(false);
        }

        if (current.write(data)) {
            return Promise.resolve(true);
        }

        const target = current;
        return new Promise<boolean>((resolve) => {
            const done = (ok: boolean) => {
                target.off('drain', onDrain);
                target.off('close', onClose);
                resolve(ok);
            };
            const onDrain = () => done(true);
            const onClose = () => done(false);
            target.on('drain', onDrain);
            target.on('close', onClose);
        });
    };

    const onData = (chunk: Buffer) => {
        queue.push(...splitter.push(chunk));
        void pump();
    };

    const watch = (target: Socket) => {
        current = target;
        target.setTimeout(options.idleTimeoutMs, () => {
            // RFC 1939's autologout: closed without the UPDATE state, so nothing marked is deleted.
            // Not waiting for the write: a client that stopped reading mid-RETR never drains it.
            void write('-ERR [SYS/TEMP] idle too long, closing\r\n');
            end();
        });
        target.on('data', onData);
        target.once('close', () => {
            ended = true;
            resolveClosed();
        });
        target.on('error', (error: NodeJS.ErrnoException) => {
            if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') {
                options.log(`pop3: connection from ${socket.remoteAddress} failed`, error);
            }
        });
    };

    const transport: Pop3Transport = {
        write,
        get secure() {
            return current instanceof TLSSocket;
        },
        remoteAddress: socket.remoteAddress ?? '',
        async startTls() {
            if (!options.secureContext) {
                throw new Error('pop3: STLS without a certificate');
            }

            // Whatever the client sent after STLS, before the handshake, is dropped (RFC 2595).
            current.off('data', onData);
            current.setTimeout(0);
            queue = [];
            splitter = createLineSplitter(options.maxLineBytes);
            const secureSocket = new TLSSocket(current, { isServer: true, secureContext: options.secureContext });
            await new Promise<void>((resolve, reject) => {
                secureSocket.once('secure', resolve);
                secureSocket.once('error', reject);
                secureSocket.once('close', () => reject(new Error('pop3: connection closed during the TLS handshake')));
            });
            watch(secureSocket);
        }
    };

    const pump = async () => {
        if (busy) {
            return;
        }

        busy = true;
        current.pause();
        try {
            while (queue.length > 0 && !ended) {
                const event = queue.shift()!;
                if (event.kind === 'too-long') {
                    await write(`-ERR line too long (at most ${options.maxLineBytes} octets with CRLF), closing\r\n`);
                    end();
                    break;
                }

                commands++;
                if (commands > options.maxCommands) {
                    await write(`-ERR too many commands in one session (at most ${options.maxCommands}), closing\r\n`);
                    end();
                    break;
                }

                const outcome = await handle(parseCommand(event.text), transport);
                if (outcome === 'close') {
                    end();
                }
                else if (shutdownReason !== null) {
                    await write(`-ERR [SYS/TEMP] ${shutdownReason}\r\n`);
                    end();
                }
            }
        }
        catch (error) {
            // A handshake that failed, or a store that failed mid-answer: nothing sensible can follow.
            options.log(`pop3: session of ${socket.remoteAddress} ended`, error);
            current.destroy();
        }
        finally {
            busy = false;
            if (!ended && !current.destroyed) {
                current.resume();
            }
        }
    };

    watch(socket);
    current.pause();
    busy = true;
    void greet(transport).then(() => {
        busy = false;
        void pump();
        if (!ended) {
            current.resume();
        }
    });

    return {
        closed,
        shutdown(reason) {
            if (ended) {
                return;
            }

            shutdownReason = reason;
            if (!busy) {
                void write(`-ERR [SYS/TEMP] ${reason}\r\n`).then(end);
            }
        }
    };
}
