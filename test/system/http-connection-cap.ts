import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { defaultMaxHttpConnections } from '../../adapters/standalone/http-connection-cap';
import { DEFAULT_MAX_CONNECTIONS as SMTP_MAX_CONNECTIONS } from '../../adapters/smtp/smtp-listener';
import { openConnection, type OpenConnection } from '../helpers/net';
import { RawSmtpSession, sendRawMessage } from '../helpers/raw-smtp';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// The HTTP connection cap against the standalone service: idle TCP connections used to take
// every file descriptor, so /health was reset and SMTP deliveries failed until they
// closed. The service runs under `ulimit -n 512`, and the test opens more idle
// connections than that.

const OPEN_FILE_LIMIT = 512;
const IDLE_CONNECTIONS = OPEN_FILE_LIMIT + 88;
/** Connections opened at once while flooding (the listen backlog is larger). */
const FLOOD_BATCH = 50;
const HEALTH_REQUEST = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n';

/** GET /health on a fresh connection: the answer, or null when the server closed it without one. */
async function freshHealth(port: number): Promise<string | null> {
    const connection = await openConnection(port);
    connection.socket.write(HEALTH_REQUEST);
    return connection.closed;
}

function message(subject: string): Buffer {
    return Buffer.from([
        'From: Tester <tester@example.test>',
        'To: flooded@example.test',
        `Subject: ${subject}`,
        `Message-ID: <${subject.replace(/\W/g, '-')}@example.test>`,
        '',
        'delivered while HTTP was flooded',
        ''
    ].join('\r\n'));
}

describe('HTTP connection cap (standalone under ulimit -n 512)', () => {
    let service: StandaloneService;
    let port: number;

    before(async () => {
        service = await startStandalone({ prefix: ['/bin/sh', '-c', `ulimit -n ${OPEN_FILE_LIMIT} && exec "$0" "$@"`] });
        port = Number(new URL(service.baseUrl).port);
    });

    after(async () => {
        await service?.stop();
    });

    it('closes connections past the cap at once, keeps SMTP and the open connections working, and admits again once they close', async () => {
        const cap = defaultMaxHttpConnections(OPEN_FILE_LIMIT, SMTP_MAX_CONNECTIONS);
        const idle: OpenConnection[] = [];
        try {
            for (let opened = 0; opened < IDLE_CONNECTIONS; opened += FLOOD_BATCH) {
                idle.push(...await Promise.all(Array.from({ length: Math.min(FLOOD_BATCH, IDLE_CONNECTIONS - opened) }, () => openConnection(port))));
            }

            // While they are open, a new connection is closed at once, without an
            // answer; the server accepts in order, so every idle one is settled by now.
            expect(await freshHealth(port)).to.be.null();

            // SMTP still has file descriptors: a delivery succeeds.
            const { session, greeting } = await RawSmtpSession.open(service.smtpPort);
            expect(greeting.code).to.equal(220);
            expect((await session.command('EHLO test.example')).code).to.equal(250);
            const delivered = await sendRawMessage(session, message('during the flood'), ['flooded@example.test']);
            expect(delivered.code, delivered.text).to.equal(250);
            await session.command('QUIT');
            await session.end();

            // Exactly `cap` of the idle connections were admitted: each answers /health.
            for (const connection of idle) {
                connection.socket.write(HEALTH_REQUEST);
            }

            const answers = await Promise.all(idle.map((c) => c.closed));
            const healthy = answers.filter((a) => a !== null && a.startsWith('HTTP/1.1 200') && a.includes('"status":"ok"'));
            expect(healthy).to.have.length(cap);
            expect(answers.filter((a) => a === null)).to.have.length(IDLE_CONNECTIONS - cap);
        }
        finally {
            for (const connection of idle) {
                connection.socket.destroy();
            }
        }

        // Once they are closed (the server notices in its own time), /health answers again.
        let answer: string | null = null;
        for (let attempt = 0; attempt < 200 && answer === null; attempt++) {
            answer = await freshHealth(port);
        }

        expect(answer?.startsWith('HTTP/1.1 200'), String(answer)).to.be.true();
        const listed = await fetch(`${service.baseUrl}/v1/emails?inbox=flooded`, { headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(listed.status).to.equal(200);
        expect(((await listed.json()) as { emails: { subject: string }[] }).emails.map((e) => e.subject)).to.equal(['during the flood']);
    });

    it('resets a connection that ends without sending a byte (a burst of them closes cheaply)', async () => {
        const connection = await openConnection(port);
        const reset = new Promise<string | undefined>((resolve) => {
            connection.socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
            connection.socket.once('close', () => resolve(undefined));
        });
        connection.socket.end();
        expect(await reset).to.equal('ECONNRESET');
    });
});
