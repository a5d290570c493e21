import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import { RawSmtpSession, type SmtpReply } from '../helpers/raw-smtp';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// The memory budget against the standalone service: 50 senders each deliver a 24 MiB
// message at once. Without a budget every one was held and parsed together (about
// 110 MiB of RSS each, 5.5 GB in all); with the default budget (128 MiB of raw bytes)
// the ones that do not fit get 421 mid-DATA, the connection closed at once (the rest of
// the message is not read), and retry later; the process stays small.

const SESSIONS = 50;
const MESSAGE_BYTES = 24 * 1024 * 1024;
/**
 * Peak RSS the service may reach: the default budget (128 MiB of raw bytes) × the
 * expansion while parsing (bench/README.md), plus the idle process, with room for the
 * garbage of the dropped messages that the collector has not reclaimed yet.
 */
const PEAK_RSS_BOUND = 1280 * 1024 * 1024;

/** A 24 MiB body: a base64 attachment in 76-character lines, none starting with a dot. */
function attachmentBody(): Buffer {
    const line = `${Buffer.alloc(57, 'attachment-bytes!').toString('base64')}\r\n`;
    const header = [
        '',
        '--b',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'a large attachment follows',
        '--b',
        'Content-Type: application/octet-stream',
        'Content-Disposition: attachment; filename="big.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        ''
    ].join('\r\n');
    const lines = Math.floor((MESSAGE_BYTES - header.length - 16) / line.length);
    return Buffer.concat([Buffer.from(header), Buffer.from(line.repeat(lines)), Buffer.from('--b--\r\n.\r\n')]);
}

function headerOf(n: number): Buffer {
    return Buffer.from([
        'From: Sender <sender@example.test>',
        'To: budget@example.test',
        `Subject: big ${n}`,
        `Message-ID: <big-${n}@example.test>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"',
        ''
    ].join('\r\n'));
}

/** One session delivering message `n`: the reply to the end of DATA (or to the command refused first). */
async function deliver(port: number, n: number, body: Buffer): Promise<SmtpReply> {
    const { session } = await RawSmtpSession.open(port);
    try {
        for (const command of ['EHLO sender.example.test', 'MAIL FROM:<sender@example.test>', 'RCPT TO:<budget@example.test>']) {
            const reply = await session.command(command);
            if (reply.code !== 250) {
                return reply;
            }
        }

        const data = await session.command('DATA');
        if (data.code !== 354) {
            return data;
        }

        await session.write(headerOf(n));
        await session.write(body);
        return await session.reply();
    }
    finally {
        await session.destroy();
    }
}

/** VmHWM (the largest RSS so far) of a process, bytes. */
async function peakRss(pid: number): Promise<number> {
    const status = await Fs.readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

describe('message budget (standalone, 50 × 24 MiB at once)', () => {
    let service: StandaloneService;

    before(async () => {
        service = await startStandalone();
    });

    after(async () => {
        await service?.stop();
    });

    it('answers every session 250 or 421 (connection closed mid-DATA), keeps peak RSS under 1.25 GiB and /health answering, and lists every message it accepted', { timeout: 600_000 }, async () => {
        const body = attachmentBody();
        const health: number[] = [];
        let sending = true;
        const polling = (async () => {
            while (sending) {
                health.push((await fetch(`${service.baseUrl}/health`)).status);
                await new Promise((resolve) => setTimeout(resolve, 250));
            }
        })();

        let replies: SmtpReply[];
        try {
            replies = await Promise.all(Array.from({ length: SESSIONS }, (_, n) => deliver(service.smtpPort, n, body)));
        }
        finally {
            sending = false;
            await polling;
        }

        const peak = await peakRss(service.spawned.child.pid!);

        const accepted = replies.flatMap((reply, n) => reply.code === 250 ? [n] : []);
        for (const reply of replies) {
            expect(reply.code === 250 || reply.code === 421, reply.text).to.be.true();
        }

        expect(replies.filter((reply) => reply.code === 421).every((reply) => reply.text.includes('try again later'))).to.be.true();

        expect(accepted.length).to.be.at.least(1);
        expect(peak).to.be.below(PEAK_RSS_BOUND);
        expect(health.length).to.be.at.least(1);
        expect(health.every((status) => status === 200)).to.be.true();

        const listed = await fetch(`${service.baseUrl}/v1/emails?inbox=budget&limit=100`, { headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(listed.status).to.equal(200);
        const page = await listed.json() as { emails: { subject: string }[] };
        expect(page.emails.map((e) => e.subject).sort()).to.equal(accepted.map((n) => `big ${n}`).sort());
    });
});
