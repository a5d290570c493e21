import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { ConfigError, readEnvConfig } from '../../../adapters/standalone/env-config';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('relay-env', () => {

    describe('readRelayEnv() through readEnvConfig()', () => {

        it('reads the URL, the comma-separated allow-list and the auto-relay query', () => {
            const config = readEnvConfig({
                INBOX_CAPTURE_RELAY_URL: 'smtps://user:pa%3Ass@relay.example.test:465',
                INBOX_CAPTURE_RELAY_ALLOW: ' *@example.com, alice@example.org ,',
                INBOX_CAPTURE_RELAY_AUTO_MATCH: 'tag:release'
            }, '/srv');
            expect(config.relay).to.equal({ url: 'smtps://user:pa%3Ass@relay.example.test:465', allow: ['*@example.com', 'alice@example.org'], autoMatch: 'tag:release' });
            expect(readEnvConfig({}, '/srv').relay).to.be.undefined();
        });

        it('refuses a relay without an allow-list, a list or query without a relay, a URL of another scheme and an unreadable list, never echoing the password', () => {
            const bad: Record<string, string>[] = [
                { INBOX_CAPTURE_RELAY_URL: 'smtp://127.0.0.1:2525' },
                { INBOX_CAPTURE_RELAY_URL: 'smtp://127.0.0.1:2525', INBOX_CAPTURE_RELAY_ALLOW: ',' },
                { INBOX_CAPTURE_RELAY_URL: 'smtp://127.0.0.1:2525', INBOX_CAPTURE_RELAY_ALLOW: '*' },
                { INBOX_CAPTURE_RELAY_ALLOW: '*@example.com' },
                { INBOX_CAPTURE_RELAY_AUTO_MATCH: 'tag:x' },
                { INBOX_CAPTURE_RELAY_URL: 'http://user:hunter2@relay.test', INBOX_CAPTURE_RELAY_ALLOW: '*@example.com' },
                { INBOX_CAPTURE_RELAY_URL: 'smtp://user:hunter2@relay.test/path', INBOX_CAPTURE_RELAY_ALLOW: '*@example.com' },
                { INBOX_CAPTURE_RELAY_URL: 'smtp://relay.test', INBOX_CAPTURE_RELAY_ALLOW: '*@example.com', INBOX_CAPTURE_RELAY_AUTO_MATCH: 'x'.repeat(1025) }
            ];
            for (const env of bad) {
                const err = (() => {
                    try {
                        readEnvConfig(env, '/srv');
                    }
                    catch (e) {
                        return e as Error;
                    }

                    return null;
                })();
                expect(err, JSON.stringify(env)).to.be.an.instanceof(ConfigError);
                expect(err!.message).to.contain('INBOX_CAPTURE_RELAY_');
                expect(err!.message).to.not.contain('hunter2');
            }
        });
    });
});
