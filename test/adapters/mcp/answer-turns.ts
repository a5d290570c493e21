import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Net from 'node:net';
import { createAnswerTurns } from '../../../adapters/mcp/answer-turns';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Holds the main thread, as serialising a large answer does. */
function busy(ms: number): void {
    const until = performance.now() + ms;
    while (performance.now() < until) {
        // spin
    }
}

describe('mcp/answer-turns', () => {

    it('lets a request that arrives during one answer in before the next answer', async () => {
        const events: string[] = [];
        const server = Net.createServer((socket) => socket.on('data', () => events.push('other request')));
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const client = Net.connect((server.address() as Net.AddressInfo).port, '127.0.0.1');
        await new Promise((resolve) => client.once('connect', resolve));
        // The server's side of the connection is accepted before the answers begin.
        await new Promise((resolve) => setTimeout(resolve, 50));
        try {
            const turns = createAnswerTurns();
            // Three readers resumed at once (they shared one parse); the first one's answer
            // takes 50 ms, during which another client's bytes arrive.
            await Promise.all([1, 2, 3].map(async (n) => {
                await turns();
                events.push(`answer ${n}`);
                if (n === 1) {
                    client.write('GET /health\r\n');
                }

                busy(50);
            }));
            // Without the turns: answer 1, answer 2, answer 3, other request.
            expect(events).to.equal(['answer 1', 'other request', 'answer 2', 'answer 3']);
        }
        finally {
            client.destroy();
            await new Promise((resolve) => server.close(resolve));
        }
    });

    it('answers in the order the answers were ready, and an idle queue answers at once', async () => {
        const turns = createAnswerTurns();
        const order: number[] = [];
        await Promise.all([1, 2, 3, 4].map(async (n) => {
            await turns();
            order.push(n);
        }));
        expect(order).to.equal([1, 2, 3, 4]);
        const began = performance.now();
        await turns();
        // One loop turn, not a timer: far under a second.
        expect(performance.now() - began).to.be.below(1000);
    });
});
