import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { checkSmtpServerInit } from '../../../adapters/smtp/greet-at-once';
import { startSmtpCapture } from '../../helpers/smtp-capture';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Connections timed per server. */
const CONNECTIONS = 10;
/** Far below smtp-server's own pause (100 ms), far above a greeting on loopback (under 1 ms). */
const GREETING_BOUND_MS = 50;

/** Milliseconds from TCP connect to the whole `220` line, over a real socket, for each of `count` connections one after another. */
async function greetingTimes(port: number, count: number): Promise<number[]> {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
        const socket = Net.connect({ port, host: '127.0.0.1' });
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        const connected = process.hrtime.bigint();
        const line = await new Promise<string>((resolve, reject) => {
            let text = '';
            socket.on('data', (chunk: Buffer) => {
                text += chunk.toString('latin1');
                if (text.includes('\r\n')) {
                    resolve(text);
                }
            });
            socket.once('error', reject);
        });
        times.push(Number(process.hrtime.bigint() - connected) / 1e6);
        expect(line).to.startWith('220 ');
        socket.end('QUIT\r\n');
        socket.destroy();
    }

    return times;
}

describe('greet-at-once', () => {

    describe('checkSmtpServerInit()', () => {

        it('accepts the installed smtp-server, whose init() holds the 100 ms pause it replaces', () => {
            expect(() => checkSmtpServerInit()).to.not.throw();
        });
    });

    describe('the listener\'s greeting', () => {

        it(`greets each new connection within ${GREETING_BOUND_MS} ms over TCP, where smtp-server alone waits 100 ms`, async () => {
            const capture = await startSmtpCapture();
            const bare = new SMTPServer({ logger: false, disableReverseLookup: true });
            try {
                await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
                const ours = await greetingTimes(capture.port, CONNECTIONS);
                const library = await greetingTimes((bare.server.address() as Net.AddressInfo).port, 3);
                expect(Math.max(...ours)).to.be.below(GREETING_BOUND_MS);
                // The measurement sees the pause where it is: another SMTPServer in the process keeps its own init().
                expect(Math.min(...library)).to.be.at.least(99);
            }
            finally {
                await new Promise<void>((resolve) => bare.close(() => resolve()));
                await capture.stop();
            }
        });
    });
});
