import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { once } from 'node:events';
import * as Http from 'node:http';
import * as Net from 'node:net';
import { RESETS_PER_TURN, resetSilentConnections } from '../../../adapters/standalone/http-silent-reset';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** How a client's connection ended after it half-closed: what it received, and the error (e.g. ECONNRESET) if any. */
async function halfClose(port: number, send: string): Promise<{ received: string; error: string | null }> {
    const socket = Net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    let error: string | null = null;
    socket.setEncoding('latin1').on('data', (chunk: string) => {
        received += chunk;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
        error = err.code ?? err.message;
    });
    // Not once(): it rejects on the 'error' a reset brings.
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.end(send);
    await closed;
    return { received, error };
}

describe('http-silent-reset', () => {

    describe('resetSilentConnections()', () => {
        let server: Http.Server;
        let port: number;

        before(async () => {
            server = Http.createServer((req, res) => res.end('answered'));
            resetSilentConnections(server);
            server.listen(0, '127.0.0.1');
            await once(server, 'listening');
            port = (server.address() as Net.AddressInfo).port;
        });

        after(async () => {
            server.close();
            await once(server, 'close');
        });

        it('resets a connection that ends without having sent a byte', async () => {
            expect(await halfClose(port, '')).to.equal({ received: '', error: 'ECONNRESET' });
        });

        it('resets every one of a burst larger than one turn\'s share, and keeps answering', async () => {
            const count = RESETS_PER_TURN * 2 + 100;
            const outcomes = await Promise.all(Array.from({ length: count }, () => halfClose(port, '')));
            expect(outcomes.filter((o) => o.error === 'ECONNRESET' && o.received === '')).to.have.length(count);
            expect((await halfClose(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).received).to.endWith('answered');
        });

        it('answers a request sent before the client half-closes, and closes gracefully', async () => {
            const { received, error } = await halfClose(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
            expect(error).to.be.null();
            expect(received).to.startWith('HTTP/1.1 200 OK');
            expect(received).to.endWith('answered');
        });

        it('leaves a partial request to the HTTP server', async () => {
            const { received, error } = await halfClose(port, 'GET / HT');
            expect(error).to.be.null();
            expect(received).to.startWith('HTTP/1.1 400 Bad Request');
        });
    });
});
