import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { once } from 'node:events';
import * as Net from 'node:net';
import { PassThrough } from 'node:stream';
import { receiveMessage } from '../../../adapters/smtp/message-receiver';
import { createMessageBudget } from '../../../lib/message-budget';
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
