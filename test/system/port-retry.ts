import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Net from 'node:net';
import * as Path from 'node:path';
import { forkReferenceServer } from '../../bench/reference-server';
import { PORT_ATTEMPTS, retryWhilePortTaken } from '../helpers/net';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const CHILD = Path.join(__dirname, '..', 'fixtures', 'reference-server', 'listening-child.js');

/** A loopback server holding a port, so that a child told to listen there gets EADDRINUSE from the kernel. */
async function holdPort(): Promise<{ port: number; close(): Promise<void> }> {
    const server = Net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as Net.AddressInfo).port,
        close: () => new Promise((resolve) => server.close(() => resolve()))
    };
}

describe('a start whose free port was taken meanwhile is tried again on fresh ports', () => {
    it('retries a port in use up to PORT_ATTEMPTS times, and nothing else', async () => {
        let calls = 0;
        const value = await retryWhilePortTaken(() => {
            calls++;
            return calls < PORT_ATTEMPTS ? Promise.reject(new Error('listen EADDRINUSE: address already in use 127.0.0.1:1')) : Promise.resolve('up');
        });
        expect(value).to.equal('up');
        expect(calls).to.equal(PORT_ATTEMPTS);

        calls = 0;
        await expect(retryWhilePortTaken(() => {
            calls++;
            return Promise.reject(new Error('port 2525 (SMTP_PORT) is already in use on 127.0.0.1'));
        })).to.reject(/already in use/);
        expect(calls).to.equal(PORT_ATTEMPTS);

        calls = 0;
        await expect(retryWhilePortTaken(() => {
            calls++;
            return Promise.reject(new Error('no such file'));
        })).to.reject('no such file');
        expect(calls).to.equal(1);
    });

    it('forkReferenceServer starts a child again on a fresh port when the first one was in use (the bench smoke\'s MailDev)', async () => {
        const held = await holdPort();
        const given: number[] = [];
        try {
            // The first attempt is sent to the held port, as if another process had bound freePort()'s answer.
            const server = await forkReferenceServer('test child', CHILD, 1, ([port]) => {
                given.push(port);
                return [String(given.length === 1 ? held.port : port)];
            });
            try {
                expect(given.length).to.equal(2);
                expect(server.smtpPort).to.equal(given[1]);
                const greeting = await new Promise<string>((resolve, reject) => {
                    const socket = Net.connect(server.smtpPort, '127.0.0.1');
                    socket.setEncoding('latin1').once('data', resolve).once('error', reject);
                });
                expect(greeting).to.equal('220 test\r\n');
            }
            finally {
                await server.stop();
            }
        }
        finally {
            await held.close();
        }
    });

    it('forkReferenceServer gives up with the child\'s own error after PORT_ATTEMPTS starts', async () => {
        const held = await holdPort();
        let starts = 0;
        try {
            await expect(forkReferenceServer('test child', CHILD, 1, () => {
                starts++;
                return [String(held.port)];
            })).to.reject(/test child exited before listening: [\s\S]*EADDRINUSE/);
            expect(starts).to.equal(PORT_ATTEMPTS);
        }
        finally {
            await held.close();
        }
    });
});
