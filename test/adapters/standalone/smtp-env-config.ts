import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { ConfigError } from '../../../adapters/standalone/env-config';
import { describeSmtpSecurity, readSmtpEnvConfig } from '../../../adapters/standalone/smtp-env-config';
import { certificatePairsForScript } from '../../helpers/tls-files';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const pairs = certificatePairsForScript({ before, after });

/** The ConfigError message readSmtpEnvConfig() throws for `env`. */
function configError(env: NodeJS.ProcessEnv): string {
    try {
        readSmtpEnvConfig(env, pairs.files.dir);
    }
    catch (err) {
        expect(err).to.be.an.instanceof(ConfigError);
        return (err as Error).message;
    }

    throw new Error('expected a ConfigError');
}

describe('smtp-env-config', () => {

    describe('readSmtpEnvConfig()', () => {

        it('defaults to no AUTH and no TLS; empty variables count as unset', () => {
            // docs/api.md, "Environment variables": SMTP_AUTH none, SMTP_TLS off.
            expect(readSmtpEnvConfig({}, '/srv')).to.equal({ auth: 'none', tls: 'off' });
            expect(readSmtpEnvConfig({ SMTP_AUTH: '', SMTP_TLS: ' ', SMTP_AUTH_USERS: '', SMTP_TLS_CERT: '' }, '/srv')).to.equal({ auth: 'none', tls: 'off' });
        });

        it('reads every mode, case-insensitively', () => {
            expect(readSmtpEnvConfig({ SMTP_AUTH: 'accept-any', SMTP_TLS: 'starttls' }, '/srv')).to.equal({ auth: 'accept-any', tls: 'starttls' });
            expect(readSmtpEnvConfig({ SMTP_AUTH: 'None', SMTP_TLS: 'IMPLICIT' }, '/srv')).to.equal({ auth: 'none', tls: 'implicit' });
            expect(readSmtpEnvConfig({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: 'app:secret', SMTP_TLS: 'off' }, '/srv')).to.equal({ auth: { users: { app: 'secret' } }, tls: 'off' });
        });

        it('splits SMTP_AUTH_USERS at commas and each pair at its first colon', () => {
            const config = readSmtpEnvConfig({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: ' app:secret , ci:pa:ss:word,, ops:p@ss w0rd ' }, '/srv');
            expect(config.auth).to.equal({ users: { app: 'secret', ci: 'pa:ss:word', ops: 'p@ss w0rd' } });
        });

        it('reads the certificate and key files, relative to the working directory', () => {
            const config = readSmtpEnvConfig({ SMTP_TLS: 'implicit', SMTP_TLS_CERT: 'cert.pem', SMTP_TLS_KEY: pairs.files.keyFile }, pairs.files.dir);
            expect(config.tls).to.equal({ mode: 'implicit', key: pairs.files.key, cert: pairs.files.cert });
        });

        it('refuses unknown modes', () => {
            expect(configError({ SMTP_AUTH: 'yes' })).to.equal('SMTP_AUTH must be one of none, accept-any, users, got "yes"');
            expect(configError({ SMTP_TLS: 'tls' })).to.equal('SMTP_TLS must be one of off, starttls, implicit, got "tls"');
        });

        it('reads SMTP_AUTH=users alone as the SMTP users kept in the store only', () => {
            expect(readSmtpEnvConfig({ SMTP_AUTH: 'users' }).auth).to.equal({ users: {} });
            expect(describeSmtpSecurity({ auth: { users: {} }, tls: 'off' })).to.equal('AUTH required (the SMTP users kept in the store), no TLS');
        });

        it('refuses users settings that are malformed or ignored, never echoing a password', () => {
            expect(configError({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: ',' })).to.contain('at least one name:password');
            const noColon = configError({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: 'app:ok,hunter2' });
            expect(noColon).to.equal('SMTP_AUTH_USERS entry 2 must be name:password with neither empty');
            expect(configError({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: ':hunter2' })).to.not.contain('hunter2');
            expect(configError({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: 'app:' })).to.contain('entry 1');
            expect(configError({ SMTP_AUTH: 'users', SMTP_AUTH_USERS: 'app:one,app:two' })).to.equal('SMTP_AUTH_USERS names user "app" twice');
            expect(configError({ SMTP_AUTH_USERS: 'app:hunter2' })).to.equal('SMTP_AUTH_USERS is only used with SMTP_AUTH=users (SMTP_AUTH is none)');
            expect(configError({ SMTP_AUTH: 'accept-any', SMTP_AUTH_USERS: 'app:hunter2' })).to.contain('SMTP_AUTH is accept-any');
        });

        it('refuses certificate settings that are incomplete or ignored', () => {
            expect(configError({ SMTP_TLS_CERT: 'cert.pem', SMTP_TLS_KEY: 'key.pem' })).to.contain('only used with SMTP_TLS=starttls or implicit');
            expect(configError({ SMTP_TLS: 'starttls', SMTP_TLS_CERT: 'cert.pem' })).to.contain('go together');
            expect(configError({ SMTP_TLS: 'starttls', SMTP_TLS_KEY: 'key.pem' })).to.contain('go together');
        });

        it('refuses unreadable and bad PEM files at start', async () => {
            const missing = configError({ SMTP_TLS: 'starttls', SMTP_TLS_CERT: 'absent.pem', SMTP_TLS_KEY: 'key.pem' });
            expect(missing).to.equal(`SMTP_TLS_CERT: cannot read ${Path.join(pairs.files.dir, 'absent.pem')} (ENOENT)`);
            expect(configError({ SMTP_TLS: 'starttls', SMTP_TLS_CERT: 'cert.pem', SMTP_TLS_KEY: pairs.files.dir })).to.equal(`SMTP_TLS_KEY: cannot read ${pairs.files.dir} (EISDIR)`);

            const garbage = Path.join(pairs.files.dir, 'garbage.pem');
            await Fs.writeFile(garbage, '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n');
            expect(configError({ SMTP_TLS: 'starttls', SMTP_TLS_CERT: garbage, SMTP_TLS_KEY: 'key.pem' })).to.equal('SMTP_TLS_CERT / SMTP_TLS_KEY: the certificate is not a PEM X.509 certificate');
            expect(configError({ SMTP_TLS: 'starttls', SMTP_TLS_CERT: 'cert.pem', SMTP_TLS_KEY: garbage })).to.equal('SMTP_TLS_CERT / SMTP_TLS_KEY: the key is not an unencrypted PEM private key');
            // Swapped files, and a key of another certificate.
            expect(configError({ SMTP_TLS: 'implicit', SMTP_TLS_CERT: 'key.pem', SMTP_TLS_KEY: 'cert.pem' })).to.contain('the certificate is not a PEM X.509 certificate');
            expect(configError({ SMTP_TLS: 'implicit', SMTP_TLS_CERT: 'cert.pem', SMTP_TLS_KEY: pairs.other.keyFile })).to.contain('the key does not belong to the certificate');
        });
    });

    describe('describeSmtpSecurity()', () => {

        it('names the auth mode, where TLS starts and the certificate fingerprint, never a password', () => {
            const users = { auth: { users: { app: 'hunter2', ci: 'x' } }, tls: 'starttls' as const };
            const text = describeSmtpSecurity(users, { mode: 'starttls', fingerprint256: 'AB:CD', selfSigned: true });
            expect(text).to.equal('AUTH required (2 users), STARTTLS, self-signed certificate made at start, SHA-256 AB:CD');
            expect(describeSmtpSecurity({ auth: 'accept-any', tls: 'implicit' }, { mode: 'implicit', fingerprint256: 'EF', selfSigned: false }))
                .to.equal('AUTH optional, any credentials, implicit TLS, certificate from SMTP_TLS_CERT, SHA-256 EF');
            expect(describeSmtpSecurity({ auth: 'none', tls: 'off' })).to.equal('no AUTH, no TLS');
            expect(describeSmtpSecurity({ auth: { users: { app: 'hunter2' } }, tls: 'off' })).to.equal('AUTH required (1 user), no TLS');
        });
    });
});
