import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import * as Net from 'node:net';
import { openConnection } from '../../helpers/net';
import { capHttpConnections, defaultMaxHttpConnections, FALLBACK_MAX_HTTP_CONNECTIONS, readOpenFileLimit } from '../../../adapters/standalone/http-connection-cap';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('http-connection-cap', () => {

    describe('readOpenFileLimit()', () => {

        it('reads the limit a child shell inherits from this process', () => {
            const shell = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
            expect(readOpenFileLimit()).to.equal(shell === 'unlimited' ? null : Number(shell));
        });
    });

    describe('defaultMaxHttpConnections()', () => {

        it('leaves the SMTP connections and a quarter of the rest of the limit free', () => {
            expect(defaultMaxHttpConnections(20_000, 100)).to.equal(14_925);
            expect(defaultMaxHttpConnections(1024, 100)).to.equal(693);
            expect(defaultMaxHttpConnections(512, 100)).to.equal(309);
            expect(defaultMaxHttpConnections(512, 0)).to.equal(384);
        });

        it('admits the 10,000 long-polls of the bench at the bench machine\'s limit and above', () => {
            expect(defaultMaxHttpConnections(20_000, 100)).to.be.at.least(10_000);
            expect(defaultMaxHttpConnections(1_048_576, 100)).to.be.at.least(10_000);
        });

        it('has a floor for a tiny limit and a fallback for an unknown one', () => {
            expect(defaultMaxHttpConnections(64, 100)).to.equal(16);
            expect(defaultMaxHttpConnections(null, 100)).to.equal(FALLBACK_MAX_HTTP_CONNECTIONS);
        });
    });

    describe('capHttpConnections()', () => {

        it('closes connections past the cap at once, keeps the open ones, admits again once one closes, and logs once', async () => {
            const server = Net.createServer((socket) => {
                socket.on('data', () => socket.write('pong'));
            });
            const logged: string[] = [];
            capHttpConnections(server, 2, (message) => logged.push(message));
            server.listen(0, '127.0.0.1');
            await once(server, 'listening');
            const { port } = server.address() as Net.AddressInfo;
            try {
                const first = await openConnection(port);
                const second = await openConnection(port);
                const third = await openConnection(port);
                const fourth = await openConnection(port);
                expect(await third.closed).to.be.null();
                expect(await fourth.closed).to.be.null();
                expect(logged).to.have.length(1);
                expect(logged[0]).to.include('cap of 2');

                first.socket.end('ping');
                expect(await first.closed).to.equal('pong');
                // Once the server has seen that close, a new connection gets the slot.
                let admitted: string | null = null;
                for (let attempt = 0; attempt < 100 && admitted === null; attempt++) {
                    const next = await openConnection(port);
                    next.socket.end('ping');
                    admitted = await next.closed;
                }

                expect(admitted).to.equal('pong');
                second.socket.end('ping');
                expect(await second.closed).to.equal('pong');
            }
            finally {
                server.close();
                await once(server, 'close');
            }
        });
    });
});
