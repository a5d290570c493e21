import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createHash } from 'node:crypto';
import { deliverRaw } from '../helpers/raw-smtp';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// docs/design.md, "Identity and inboxes": a second message with a stored Message-ID used to
// replace the first in its inbox whatever its content, so any sender could overwrite a
// sign-up code (482913 silently became 777777). Only identical bytes (an MTA's retry) replace.

interface Email {
    messageId: string;
    codes: string[];
    receivedAt: number;
}

function signup(code: string): Buffer {
    return Buffer.from([
        'From: Shop <no-reply@shop.example.test>',
        'To: signup@example.test',
        'Subject: Your sign-up code',
        'Message-ID: <signup-code@shop.example.test>',
        '',
        `Your code is ${code}.`,
        ''
    ].join('\r\n'));
}

describe('the same Message-ID again, over SMTP (standalone service)', () => {
    let service: StandaloneService;

    before(async () => {
        service = await startStandalone();
    });

    after(() => service.stop());

    const deliver = async (raw: Buffer) => expect((await deliverRaw(service.smtpPort, raw, ['signup@example.test'])).code).to.equal(250);

    const api = async <T>(path: string): Promise<T> => {
        const res = await fetch(`${service.baseUrl}${path}`, { headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(res.status, path).to.equal(200);
        return await res.json() as T;
    };

    const inbox = async () => (await api<{ emails: Email[] }>('/v1/emails?inbox=signup')).emails;

    it('stores a message with other bytes as another email, the first one\'s code intact; an identical resend replaces', async () => {
        await deliver(signup('482913'));
        const [first] = await inbox();
        expect(first!.codes).to.equal(['482913']);

        // Another sender, the same Message-ID, another code.
        await deliver(signup('777777'));
        const both = await inbox();
        expect(both.map((e) => e.codes)).to.equal([['777777'], ['482913']]);
        const digest = createHash('sha256').update(signup('777777')).digest('hex');
        expect(both.map((e) => e.messageId)).to.equal([`signup-code@shop.example.test~signup~${digest.slice(0, 12)}`, 'signup-code@shop.example.test']);
        expect((await api<Email>('/v1/emails/signup-code%40shop.example.test')).codes).to.equal(['482913']);

        // An MTA's retry of the first: the same bytes replace it (receivedAt refreshed), still two emails.
        await deliver(signup('482913'));
        const after = await inbox();
        expect(after).to.have.length(2);
        const replaced = after.find((e) => e.messageId === 'signup-code@shop.example.test')!;
        expect(replaced.codes).to.equal(['482913']);
        expect(replaced.receivedAt).to.be.at.least(first!.receivedAt);
        expect(after[0]!.messageId).to.equal('signup-code@shop.example.test');
    });
});
