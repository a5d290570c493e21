import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { dataPayload, RawSmtpSession, type SmtpReply } from '../helpers/raw-smtp';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Distinct addresses, some of them UTF-8, that docs/design.md says share an inbox. */
const RECIPIENTS = ['a+b', 'a%b', 'a-b', 'j\u00f6rg', 'j\u00fcrg', 'jo\u0308rg', '\u212aate', 'kate'].map((local) => `${local}@example.test`);

/** One message to `recipients`, announced with SMTPUTF8 at MAIL FROM (RFC 6531); the reply to its end of DATA. */
async function deliver(port: number, recipients: string[], messageId: string): Promise<SmtpReply> {
    const { session } = await RawSmtpSession.open(port);
    try {
        expect((await session.command('EHLO client.test')).text).to.contain('SMTPUTF8');
        expect((await session.command('MAIL FROM:<s@example.test> SMTPUTF8')).code).to.equal(250);
        for (const recipient of recipients) {
            expect((await session.command(`RCPT TO:<${recipient}>`)).code, recipient).to.equal(250);
        }

        expect((await session.command('DATA')).code).to.equal(354);
        await session.write(dataPayload(Buffer.from(`From: s@example.test\r\nSubject: shared\r\nMessage-ID: <${messageId}>\r\n\r\nhi\r\n`)).payload);
        return await session.reply();
    }
    finally {
        await session.command('QUIT');
    }
}

/** The recipients of the emails stored in `inbox`, sorted. */
async function recipientsIn(t: SmtpCapture, inbox: string): Promise<string[]> {
    return (await t.capture.listEmails({ inbox, limit: 100 })).records.map((r) => r.recipient).sort();
}

describe('addresses that share an inbox (docs/design.md), over SMTP', () => {

    it('accepts UTF-8 recipients and stores mail to each distinct address where the table says', async () => {
        const t = await startSmtpCapture();
        try {
            for (const [i, recipient] of RECIPIENTS.entries()) {
                expect((await deliver(t.port, [recipient], `m${i}@example.test`)).code).to.equal(250);
            }

            expect(await recipientsIn(t, 'a-b')).to.equal(['a%b@example.test', 'a+b@example.test', 'a-b@example.test']);
            expect(await recipientsIn(t, 'j-rg')).to.equal(['j\u00f6rg@example.test', 'j\u00fcrg@example.test']);
            expect(await recipientsIn(t, 'jo-rg')).to.equal(['jo\u0308rg@example.test']);
            expect(await recipientsIn(t, 'kate')).to.equal(['kate@example.test', '\u212aate@example.test']);
        }
        finally {
            await t.stop();
        }
    });

    it('stores one message to several addresses of one inbox once there, under the first of them', async () => {
        const t = await startSmtpCapture();
        try {
            const reply = await deliver(t.port, RECIPIENTS, 'all@example.test');
            expect(reply.text).to.contain('message stored (4 copies)');
            expect(await recipientsIn(t, 'a-b')).to.equal(['a+b@example.test']);
            expect(await recipientsIn(t, 'j-rg')).to.equal(['j\u00f6rg@example.test']);
            // smtp-server already keeps recipients equal when lowercased as one, the later spelling.
            expect(await recipientsIn(t, 'kate')).to.equal(['kate@example.test']);
        }
        finally {
            await t.stop();
        }
    });
});
