import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { authDnsFor } from '../../../adapters/auth-check/auth-check-options';
import { keptAuthCheck } from '../../../lib/service/auth-check-kept';
import { dkimKey, signed, type DkimKey } from '../../helpers/signed-mail';
import { startSmtpCapture, type SmtpCapture } from '../../helpers/smtp-capture';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server';

// What a copy keeps of its SMTP session (docs/api.md, "Authentication check"): the
// client's address, its HELO name and the envelope sender, passed by the listener and read
// by the authentication check, end to end over a real SMTP session.

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const DOMAIN = 'news.example';

function mail(id: string): string {
    return `From: The Weekly Brew <news@${DOMAIN}>\r\nTo: reader@example.test\r\nSubject: Session ${id}\r\nMessage-ID: <${id}@${DOMAIN}>\r\n` +
        'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThis week at the roastery.\r\n';
}

describe('SMTP listener: the session kept with each copy', () => {
    let smtp: SmtpCapture;
    let dns: DnsServer;
    let key: DkimKey;

    before(async () => {
        key = await dkimKey();
        dns = await startDnsServer({ txt: {
            // The test's client connects from loopback: the domain lists it.
            [DOMAIN]: ['v=spf1 ip4:127.0.0.1 -all'],
            [`mail.${DOMAIN}`]: ['v=spf1 ip4:127.0.0.1 -all'],
            [`sel._domainkey.${DOMAIN}`]: [key.record],
            [`_dmarc.${DOMAIN}`]: ['v=DMARC1; p=quarantine']
        } });
        smtp = await startSmtpCapture();
    });

    after(async () => {
        await smtp?.stop();
        await dns?.close();
    });

    const received = async (subject: string) => {
        const page = await smtp.capture.listEmails({ inbox: 'reader', limit: 100 });
        const record = page.records.find((r) => r.subject === subject);
        expect(record, subject).to.exist();
        return record!;
    };

    it('keeps the client\'s address, HELO name and MAIL FROM, and the authentication check passes SPF, DKIM and DMARC with them', async () => {
        await smtp.transport({ name: `mail.${DOMAIN}` }).sendMail({
            envelope: { from: `bounces@${DOMAIN}`, to: ['reader@example.test'] },
            raw: await signed(mail('kept'), key, DOMAIN, 'sel')
        });
        const record = await received('Session kept');
        expect(record.smtpClient).to.equal({ address: '127.0.0.1', helo: `mail.${DOMAIN}`, mailFrom: `bounces@${DOMAIN}` });

        const result = await keptAuthCheck(smtp.capture, record.messageId, undefined, authDnsFor({ dnsServers: [dns.address] }));
        expect(result).to.include({
            spf: { result: 'pass', domain: DOMAIN },
            dkim: [{ result: 'pass', domain: DOMAIN, selector: 'sel' }],
            dmarc: { result: 'pass', domain: DOMAIN, policy: 'quarantine' }
        });
    });

    it('keeps the null sender as "", and SPF then checks the HELO name', async () => {
        await smtp.transport({ name: `mail.${DOMAIN}` }).sendMail({ envelope: { from: '', to: ['reader@example.test'] }, raw: mail('bounce') });
        const record = await received('Session bounce');
        expect(record.smtpClient).to.equal({ address: '127.0.0.1', helo: `mail.${DOMAIN}`, mailFrom: '' });
        const result = await keptAuthCheck(smtp.capture, record.messageId, undefined, authDnsFor({ dnsServers: [dns.address] }));
        expect(result!.spf).to.equal({ result: 'pass', domain: `mail.${DOMAIN}` });
    });
});
