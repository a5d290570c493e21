import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureClient } from '../../../adapters/client';
import { newInbox, randomInboxChars, RANDOM_CHARS } from '../../../adapters/client/new-inbox';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('client/new-inbox', () => {

    describe('newInbox()', () => {
        it('answers the prefix then random a-z 0-9 characters, and the address at the domain', () => {
            const made = newInbox({ prefix: 'signup-', domain: 'mail.example.test' });
            expect(made.inbox).to.match(new RegExp(`^signup-[a-z0-9]{${RANDOM_CHARS}}$`));
            expect(made.address).to.equal(`${made.inbox}@mail.example.test`);
            expect(RANDOM_CHARS).to.be.at.least(6);
        });

        it('works without a prefix, and as a client method', () => {
            expect(newInbox({ domain: 'x.test' }).inbox).to.match(/^[a-z0-9]{10}$/);
            const client = new InboxCaptureClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
            expect(client.newInbox({ prefix: 'a.b_c-', domain: 'x.test' }).address).to.match(/^a\.b_c-[a-z0-9]{10}@x\.test$/);
        });

        it('gives every call an inbox of its own', () => {
            const names = new Set(Array.from({ length: 2000 }, () => newInbox({ domain: 'x.test' }).inbox));
            expect(names.size).to.equal(2000);
        });

        it('refuses a prefix the API would not take as an inbox, and a bad domain', () => {
            for (const prefix of ['Upper', 'a b', 'a+b', 'x@y', 'a'.repeat(55)]) {
                expect(() => newInbox({ prefix, domain: 'x.test' }), prefix).to.throw(TypeError, /prefix/);
            }

            for (const domain of ['', 'a@b', 'a b', undefined]) {
                expect(() => newInbox({ domain: domain as string }), String(domain)).to.throw(TypeError, /domain/);
            }

            expect(newInbox({ prefix: 'a'.repeat(54), domain: 'x.test' }).inbox).to.have.length(64);
        });
    });

    describe('randomInboxChars()', () => {
        it('uses every character of a-z 0-9 and nothing else', () => {
            const seen = new Set(randomInboxChars(5000));
            expect([...seen].sort().join('')).to.equal('0123456789abcdefghijklmnopqrstuvwxyz');
        });
    });
});
