import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { once } from 'node:events';
import * as Net from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import { BYTES_PER_TURN, receiveMessage } from '../../../adapters/smtp/message-receiver';
import { createMessageBudget } from '../../../lib/util/message-budget';
import { batchReplies } from '../../../adapters/smtp/reply-batching';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** The size of the pieces smtp-server hands DATA on in (a socket read), bytes. */
const CHUNK_BYTES = 64 * 1024;

/** Writes `total` bytes in CHUNK_BYTES pieces, waiting for the reader, then ends the stream. */
async function feed(stream: PassThrough, total: number): Promise<void> {
    const chunk = Buffer.alloc(CHUNK_BYTES, 0x78);
    for (let sent = 0; sent < total; sent += CHUNK_BYTES) {
        if (!stream.write(chunk.subarray(0, Math.min(CHUNK_BYTES, total - sent)))) {
            await once(stream, 'drain');
        }
    }

    stream.end();
}

/** Counts bytes by turn of the event loop (a turn ends at each setImmediate) from now until stop(). */
function bytesPerTurn() {
    let turn = 0;
    let counting = true;
    const perTurn = new Map<number, number>();
    const nextTurn = () => {
        turn++;
        if (counting) {
            setImmediate(nextTurn);
        }
    };

    setImmediate(nextTurn);
    return {
        add: (bytes: number) => perTurn.set(turn, (perTurn.get(turn) ?? 0) + bytes),
        stop: () => {
            counting = false;
        },
        /** The most bytes counted in one turn. */
        max: () => Math.max(...perTurn.values()),
        /** How many turns saw bytes. */
        turns: () => perTurn.size
    };
}

describe('smtp message receiver', () => {

    describe('receiveMessage()', () => {

        it('returns the whole message as one Buffer', async () => {
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 1000);
            stream.write('Subject: one\r\n');
            stream.write('\r\n');
            stream.end('body\r\n');
            const received = await receiving;
            expect(received.raw!.toString()).to.equal('Subject: one\r\n\r\nbody\r\n');
            expect(received.bytes).to.equal(22);
            expect(received.tooLarge).to.be.false();
            expect(received.aborted).to.be.false();
        });

        it('reserves every byte it holds and keeps the reservation for the ingest', async () => {
            const budget = createMessageBudget(10 * CHUNK_BYTES);
            const reservation = budget.reserve(0)!;
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 10 * CHUNK_BYTES, reservation);
            await feed(stream, 3 * CHUNK_BYTES);
            const received = await receiving;
            expect(received.overBudget).to.be.false();
            expect(received.raw!.length).to.equal(3 * CHUNK_BYTES);
            expect(reservation.bytes).to.equal(3 * CHUNK_BYTES);
        });

        it('drops a message the budget cannot hold, reads it to its end and gives back what it held', async () => {
            const budget = createMessageBudget(4 * CHUNK_BYTES);
            const other = budget.reserve(CHUNK_BYTES)!;
            const reservation = budget.reserve(0)!;
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 100 * CHUNK_BYTES, reservation);
            await feed(stream, 20 * CHUNK_BYTES);
            const received = await receiving;
            expect(received.overBudget).to.be.true();
            expect(received.raw).to.be.null();
            expect(received.bytes).to.equal(20 * CHUNK_BYTES);
            expect(received.peakHeldBytes).to.be.at.most(3 * CHUNK_BYTES);
            expect(budget.heldBytes).to.equal(CHUNK_BYTES);
            other.release();
        });

        it('with onOverBudget, stops reading at the chunk that does not fit, calls it once and gives back what it held', async () => {
            const budget = createMessageBudget(4 * CHUNK_BYTES);
            const other = budget.reserve(CHUNK_BYTES)!;
            const reservation = budget.reserve(0)!;
            const stream = new PassThrough();
            let calls = 0;
            const receiving = receiveMessage(stream, 100 * CHUNK_BYTES, reservation, () => calls++);
            stream.write(Buffer.alloc(2 * CHUNK_BYTES, 0x61));
            stream.write(Buffer.alloc(2 * CHUNK_BYTES, 0x61));
            const received = await receiving;
            expect(calls).to.equal(1);
            expect(received.overBudget).to.be.true();
            expect(received.aborted).to.be.false();
            expect(received.raw).to.be.null();
            expect(received.bytes).to.equal(4 * CHUNK_BYTES);
            expect(budget.heldBytes).to.equal(CHUNK_BYTES);
            expect(stream.listenerCount('data')).to.equal(0);
            other.release();
            stream.destroy();
        });

        it('drops the message when the budget had nothing left at its start (null reservation)', async () => {
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 1000, null);
            stream.end('Subject: x\r\n\r\nbody\r\n');
            const received = await receiving;
            expect(received.overBudget).to.be.true();
            expect(received.raw).to.be.null();
        });

        it('accepts a message of exactly the cap', async () => {
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 3 * CHUNK_BYTES);
            await feed(stream, 3 * CHUNK_BYTES);
            const received = await receiving;
            expect(received.tooLarge).to.be.false();
            expect(received.raw!.length).to.equal(3 * CHUNK_BYTES);
        });

        it('reads an oversized message to its end but holds no more than the cap plus one chunk', async () => {
            const cap = 1024 * 1024;
            const total = 50 * cap;
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, cap);
            await feed(stream, total);
            const received = await receiving;
            expect(received.tooLarge).to.be.true();
            expect(received.raw).to.be.null();
            expect(received.bytes).to.equal(total);
            expect(received.peakHeldBytes).to.be.at.most(cap + CHUNK_BYTES);
            expect(stream.readableEnded).to.be.true();
        });

        it('reports a stream closed before its end as aborted, with nothing kept', async () => {
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 1000);
            stream.write('Subject: half\r\n');
            stream.destroy();
            const received = await receiving;
            expect(received.aborted).to.be.true();
            expect(received.raw).to.be.null();
        });

        it('reports a stream that failed as aborted', async () => {
            const stream = new PassThrough();
            const receiving = receiveMessage(stream, 1000);
            stream.write('Subject: half\r\n');
            stream.destroy(new Error('connection closed'));
            const received = await receiving;
            expect(received.aborted).to.be.true();
            expect(received.raw).to.be.null();
        });

        it('reads at most BYTES_PER_TURN of a message a turn of the event loop, and still the whole message', async () => {
            const stream = new PassThrough();
            const chunk = Buffer.alloc(CHUNK_BYTES, 0x78);
            const chunks = 16;
            // All of it waiting before the reader starts: a fast sender's bytes already in the socket.
            for (let i = 0; i < chunks; i++) {
                stream.write(chunk);
            }

            stream.end();
            const read = bytesPerTurn();
            stream.on('data', (data: Buffer) => read.add(data.length));
            const received = await receiveMessage(stream, 2 * chunks * CHUNK_BYTES);
            read.stop();
            expect(received.raw!.length).to.equal(chunks * CHUNK_BYTES);
            expect(read.max()).to.equal(BYTES_PER_TURN);
            expect(read.turns()).to.equal(chunks * CHUNK_BYTES / BYTES_PER_TURN);
        });

        it('leaves a stream it has let go of paused: a message refused mid-DATA is not read on at the next turn', async () => {
            const budget = createMessageBudget(2 * CHUNK_BYTES);
            budget.reserve(CHUNK_BYTES);
            // A Readable, not a PassThrough: its readableLength is exactly what is left unread.
            const stream = new Readable({ read() {} });
            const chunk = Buffer.alloc(CHUNK_BYTES, 0x78);
            for (let i = 0; i < 4; i++) {
                stream.push(chunk);
            }

            let refused = 0;
            const received = await receiveMessage(stream, 8 * CHUNK_BYTES, budget.reserve(0), () => refused++);
            await new Promise((resolve) => setImmediate(resolve));
            expect(refused).to.equal(1);
            expect(received.overBudget).to.be.true();
            // The second chunk did not fit; the third and fourth stay unread for the caller to close.
            expect(stream.isPaused()).to.be.true();
            expect(stream.readableLength).to.equal(2 * CHUNK_BYTES);
        });

        it('through smtp-server, the pause reaches the socket: a fast sender is read a few chunks a turn, not 2 MiB', async () => {
            const stored: Buffer[] = [];
            const server = new SMTPServer({
                authOptional: true,
                disableReverseLookup: true,
                logger: false,
                size: 64 * 1024 * 1024,
                onData(stream, _session, callback) {
                    void receiveMessage(stream, 64 * 1024 * 1024).then((received) => {
                        stored.push(received.raw!);
                        callback();
                    });
                }
            });
            // Bytes the server's socket delivered, by turn of the event loop.
            const read = bytesPerTurn();
            server.server.on('connection', (socket: Net.Socket) => {
                socket.on('data', (data: Buffer) => read.add(data.length));
            });
            await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
            const { port } = server.server.address() as Net.AddressInfo;
            const client = Net.connect(port, '127.0.0.1');
            try {
                let answered = '';
                client.setEncoding('latin1').on('data', (data: string) => {
                    answered += data;
                });
                const reply = async (code: string) => {
                    while (!new RegExp(`(^|\\r\\n)${code} [^\\r\\n]*\\r\\n$`).test(answered)) {
                        await once(client, 'data');
                    }

                    answered = '';
                };

                await reply('220');
                client.write('EHLO sender.test\r\n');
                await reply('250');
                client.write('MAIL FROM:<a@sender.test>\r\nRCPT TO:<b@inbox.test>\r\nDATA\r\n');
                await reply('354');
                // 8 MiB in one write: the kernel holds megabytes of it for the server to read.
                const line = `${'y'.repeat(1022)}\r\n`;
                const body = Buffer.from(line.repeat(8 * 1024));
                client.write(Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), body, Buffer.from('.\r\n')]));
                await reply('250');
                read.stop();
                expect(stored[0]!.length).to.equal(16 + body.length);
                // 64 KiB a socket read: the one the reader took, the one read while pausing, and
                // smtp-server's own. Without the pause libuv reads up to 32 in a row.
                expect(read.max()).to.be.at.most(3 * BYTES_PER_TURN);
            }
            finally {
                read.stop();
                client.destroy();
                await new Promise<void>((resolve) => server.close(resolve));
            }
        });
    });

    describe('batchReplies()', () => {

        it('sends the replies written while one chunk of input is handled in one socket write', async () => {
            const server = Net.createServer();
            await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
            const { port } = server.address() as Net.AddressInfo;
            const client = Net.connect(port, '127.0.0.1');
            try {
                const [socket] = await once(server, 'connection') as [Net.Socket];
                // Count the writes that reach the socket's implementation (one per syscall).
                const writes: number[] = [];
                const stream = socket as unknown as { _write: (...args: unknown[]) => void; _writev: (chunks: unknown[], ...rest: unknown[]) => void };
                const write = stream._write.bind(socket);
                const writev = stream._writev.bind(socket);
                stream._write = (...args) => {
                    writes.push(1);
                    write(...args);
                };

                stream._writev = (chunks, ...rest) => {
                    writes.push(chunks.length);
                    writev(chunks, ...rest);
                };

                const stop = batchReplies(socket);
                // Like smtp-server's parser: one reply per pipelined command, each its own write.
                socket.on('data', (data: Buffer) => {
                    for (const line of data.toString().split('\r\n').filter(Boolean)) {
                        socket.write(`250 ${line} OK\r\n`);
                    }
                });

                let answered = '';
                client.setEncoding('latin1').on('data', (data: string) => {
                    answered += data;
                });
                client.write('RSET\r\nMAIL FROM:<a@b.test>\r\nRCPT TO:<c@d.test>\r\nDATA\r\n');
                while (answered.split('\r\n').length < 5) {
                    await once(client, 'data');
                }

                expect(answered).to.equal('250 RSET OK\r\n250 MAIL FROM:<a@b.test> OK\r\n250 RCPT TO:<c@d.test> OK\r\n250 DATA OK\r\n');
                expect(writes).to.equal([4]);

                // Stopped: each reply is its own write again.
                stop();
                writes.length = 0;
                answered = '';
                client.write('NOOP\r\nNOOP\r\n');
                while (answered.split('\r\n').length < 3) {
                    await once(client, 'data');
                }

                expect(writes).to.equal([1, 1]);
            }
            finally {
                client.destroy();
                await new Promise((resolve) => server.close(resolve));
            }
        });
    });
});
