import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { ConfigError, readEnvConfig } from '../../../adapters/standalone/env-config';
import { parseDuration, parseMaxPerInbox } from '../../../adapters/standalone/retention-config';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('retention-config', () => {

    describe('parseDuration()', () => {

        it('reads seconds, minutes, hours, days and plain milliseconds', () => {
            expect(parseDuration('90s')).to.equal(90_000);
            expect(parseDuration('30m')).to.equal(1_800_000);
            expect(parseDuration('12h')).to.equal(43_200_000);
            expect(parseDuration('7d')).to.equal(604_800_000);
            expect(parseDuration('1s')).to.equal(1000);
            expect(parseDuration('1500')).to.equal(1500);
            expect(parseDuration('36500d')).to.equal(36_500 * 86_400_000);
        });

        it('refuses anything else, and durations under 1s or over 36500d', () => {
            for (const text of ['', 's', '7 d', '7D', '7w', '1.5h', '-5s', '+5s', '0', '0s', '999', '36501d', '5ms', 'P7D', '1e3', '12345678901234567d']) {
                expect(parseDuration(text), text).to.be.null();
            }
        });
    });

    describe('parseMaxPerInbox()', () => {

        it('reads a whole number from 1 to 1,000,000,000', () => {
            expect(parseMaxPerInbox('1')).to.equal(1);
            expect(parseMaxPerInbox('1000')).to.equal(1000);
            expect(parseMaxPerInbox('1000000000')).to.equal(1_000_000_000);
            for (const text of ['0', '-1', '1.5', '1e3', 'ten', '1000000001', '']) {
                expect(parseMaxPerInbox(text), text).to.be.null();
            }
        });
    });

    describe('readRetentionEnv() through readEnvConfig()', () => {

        it('leaves retention off when no variable is set (or all are empty)', () => {
            expect(readEnvConfig({}).retention).to.be.undefined();
            expect(readEnvConfig({ INBOX_CAPTURE_RETENTION_MAX_AGE: ' ', INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '' }).retention).to.be.undefined();
        });

        it('reads each rule alone, and both with an interval', () => {
            expect(readEnvConfig({ INBOX_CAPTURE_RETENTION_MAX_AGE: '7d' }).retention).to.equal({ maxAgeMs: 604_800_000, maxPerInbox: undefined, intervalMs: undefined });
            expect(readEnvConfig({ INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '500' }).retention).to.equal({ maxAgeMs: undefined, maxPerInbox: 500, intervalMs: undefined });
            expect(readEnvConfig({
                INBOX_CAPTURE_RETENTION_MAX_AGE: '12h',
                INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '50',
                INBOX_CAPTURE_RETENTION_INTERVAL: '1s'
            }).retention).to.equal({ maxAgeMs: 43_200_000, maxPerInbox: 50, intervalMs: 1000 });
        });

        it('refuses a bad value with a ConfigError that names the variable, the value and the syntax', () => {
            expect(() => readEnvConfig({ INBOX_CAPTURE_RETENTION_MAX_AGE: '7 days' })).to.throw(ConfigError,
                'INBOX_CAPTURE_RETENTION_MAX_AGE must be a duration such as 90s, 30m, 12h, 7d, or a number of milliseconds, from 1s to 36500d, got "7 days"');
            expect(() => readEnvConfig({ INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: '0' })).to.throw(ConfigError,
                'INBOX_CAPTURE_RETENTION_MAX_PER_INBOX must be a whole number of emails from 1 to 1000000000, got "0"');
            expect(() => readEnvConfig({ INBOX_CAPTURE_RETENTION_MAX_AGE: '1d', INBOX_CAPTURE_RETENTION_INTERVAL: '500' })).to.throw(ConfigError, /^INBOX_CAPTURE_RETENTION_INTERVAL must be a duration/);
        });

        it('refuses an interval without a rule: it would silently do nothing', () => {
            expect(() => readEnvConfig({ INBOX_CAPTURE_RETENTION_INTERVAL: '60s' })).to.throw(ConfigError,
                'INBOX_CAPTURE_RETENTION_INTERVAL is set, but neither INBOX_CAPTURE_RETENTION_MAX_AGE nor INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: set one of them to turn retention on, or unset it');
        });
    });
});
