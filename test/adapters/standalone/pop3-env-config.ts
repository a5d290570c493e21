import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { X509Certificate } from 'node:crypto';
import { ConfigError } from '../../../adapters/standalone/env-config';
import { readPop3EnvConfig, sharedTls } from '../../../adapters/standalone/pop3-env-config';
import { mailConnections, mailPorts } from '../../../adapters/standalone/standalone-service';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('POP3 settings of the program', () => {

    it('leaves POP3 off unless INBOX_CAPTURE_POP3_PORT is set, and offers STLS when SMTP_TLS is on', () => {
        expect(readPop3EnvConfig({}, 'off')).to.be.null();
        expect(readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: '0' }, 'starttls')).to.be.null();
        expect(readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: '1110' }, 'off')).to.equal({ port: 1110, tls: 'off' });
        expect(readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: '1110' }, 'starttls')).to.equal({ port: 1110, tls: 'starttls' });
        expect(readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: '1110' }, 'implicit')).to.equal({ port: 1110, tls: 'starttls' });
        expect(readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: '995', INBOX_CAPTURE_POP3_TLS: 'IMPLICIT' }, 'starttls')).to.equal({ port: 995, tls: 'implicit' });
    });

    it('counts POP3 as the service\'s own: its port refused by a link check, its sessions kept out of the HTTP connection cap', () => {
        expect(mailPorts({ smtpPort: 2525 })).to.equal([2525]);
        expect(mailPorts({ smtpPort: 2525, pop3: { port: 1110, tls: 'off' } })).to.equal([2525, 1110]);
        expect(mailPorts({ smtpPort: 0, pop3: { port: 1110, tls: 'off' } })).to.equal([1110]);
        expect(mailConnections({ smtpPort: 2525 })).to.equal(100);
        expect(mailConnections({ smtpPort: 2525, pop3: { port: 1110, tls: 'off' } })).to.equal(200);
        expect(mailConnections({ smtpPort: 0, pop3: { port: 1110, tls: 'off' } })).to.equal(100);
        expect(mailConnections({ smtpPort: 0 })).to.equal(0);
    });

    it('refuses a bad port, a bad TLS word, and POP3_TLS while POP3 is off', () => {
        expect(() => readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: 'pop' }, 'off')).to.throw(ConfigError, /INBOX_CAPTURE_POP3_PORT must be a port number/);
        expect(() => readPop3EnvConfig({ INBOX_CAPTURE_POP3_PORT: '1110', INBOX_CAPTURE_POP3_TLS: 'ssl' }, 'off')).to.throw(ConfigError, /INBOX_CAPTURE_POP3_TLS must be one of off, starttls, implicit/);
        expect(() => readPop3EnvConfig({ INBOX_CAPTURE_POP3_TLS: 'implicit' }, 'off')).to.throw(ConfigError, /only used with INBOX_CAPTURE_POP3_PORT/);
    });

    it('gives SMTP and POP3 one certificate: SMTP\'s own, or one made for both', async () => {
        const made = await sharedTls('starttls', { port: 1110, tls: 'implicit' });
        expect(made.madeHere).to.be.true();
        const smtp = made.smtp as { mode: string; cert: string };
        const pop3 = made.pop3 as { mode: string; cert: string };
        expect(smtp.mode).to.equal('starttls');
        expect(pop3.mode).to.equal('implicit');
        expect(new X509Certificate(pop3.cert).fingerprint256).to.equal(new X509Certificate(smtp.cert).fingerprint256);

        const given = await sharedTls({ mode: 'implicit', key: 'KEY', cert: 'CERT' }, { port: 1110, tls: 'starttls' });
        expect(given).to.equal({ smtp: { mode: 'implicit', key: 'KEY', cert: 'CERT' }, pop3: { mode: 'starttls', key: 'KEY', cert: 'CERT' }, madeHere: false });
        expect(await sharedTls('off', { port: 1110, tls: 'implicit' })).to.equal({ smtp: 'off', pop3: 'implicit', madeHere: false });
        expect(await sharedTls('starttls', { port: 1110, tls: 'off' })).to.equal({ smtp: 'starttls', pop3: 'off', madeHere: false });
    });
});
