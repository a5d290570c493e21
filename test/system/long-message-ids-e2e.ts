import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { MAX_MESSAGE_ID_BYTES, sha256Hex } from '../../lib/identity/ids';
import { RawSmtpSession, sendRawMessage } from '../helpers/raw-smtp';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// Long Message-IDs against the standalone service: a Message-ID of 10,000 characters
// and one of 2,000 CJK characters, among older and newer mail. Before, the first
// one's cursor was refused (400) and nothing older could be paged to.

const INBOX = 'long-ids';
const LONG = `${'m'.repeat(10_000 - '@example.test'.length)}@example.test`;
const CJK = '日'.repeat(2000);

function message(id: string, subject: string): Buffer {
    return Buffer.from([
        'From: Tester <tester@example.test>',
        `To: ${INBOX}@example.test`,
        `Subject: ${subject}`,
        `Message-ID: <${id}>`,
        'Content-Type: text/plain; charset=utf-8',
        '',
        `body of ${subject}`,
        ''
    ].join('\r\n'));
}

interface Page {
    emails: { messageId: string; subject: string; rawUrl: string }[];
    hasMore: boolean;
    nextCursor?: string;
}

describe('long Message-IDs end to end (standalone, SQLite + files)', () => {
    let service: StandaloneService;
    let auth: Record<string, string>;
    // Subject → the Message-ID it was sent with, oldest first.
    const sent: Array<[string, string]> = [
        ['older 1', 'older-1@example.test'],
        ['older 2', 'older-2@example.test'],
        ['long', LONG],
        ['cjk', CJK],
        ['newer', 'newer@example.test']
    ];

    before(async () => {
        service = await startStandalone();
        auth = { authorization: `Bearer ${service.apiKey}` };
        const { session, greeting } = await RawSmtpSession.open(service.smtpPort);
        expect(greeting.code).to.equal(220);
        await session.command('EHLO test.example');
        for (const [subject, id] of sent) {
            expect((await sendRawMessage(session, message(id, subject), [`${INBOX}@example.test`])).code).to.equal(250);
        }

        await session.command('QUIT');
        await session.end();
    });

    after(async () => {
        await service?.stop();
    });

    it('pages through every email with nextCursor, one at a time, each id at most the limit', async () => {
        const seen: Page['emails'] = [];
        const cursors: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < sent.length + 1; pages++) {
            const query = new URLSearchParams({ inbox: INBOX, limit: '1', ...cursor ? { cursor } : {} });
            const response = await fetch(`${service.baseUrl}/v1/emails?${query.toString()}`, { headers: auth });
            expect(response.status, `page ${pages}`).to.equal(200);
            const page = await response.json() as Page;
            seen.push(...page.emails);
            if (!page.hasMore) {
                break;
            }

            cursor = page.nextCursor!;
            cursors.push(cursor);
        }

        for (const handedOut of cursors) {
            expect(Buffer.byteLength(handedOut)).to.be.at.most(17 + MAX_MESSAGE_ID_BYTES);
        }

        expect(seen.map((e) => e.subject)).to.equal(sent.map(([subject]) => subject).reverse());
        for (const email of seen) {
            expect(Buffer.byteLength(email.messageId)).to.be.at.most(MAX_MESSAGE_ID_BYTES);
        }

        const ids = new Map(seen.map((e) => [e.subject, e.messageId]));
        expect(ids.get('long')).to.equal(`${sha256Hex(LONG)}@inbox-capture`);
        expect(ids.get('cjk')).to.equal(`${sha256Hex(CJK)}@inbox-capture`);
        expect(ids.get('older 1')).to.equal('older-1@example.test');
    });

    it('answers GET of each email and its raw message with plain fetch', async () => {
        const list = await (await fetch(`${service.baseUrl}/v1/emails?inbox=${INBOX}&limit=100`, { headers: auth })).json() as Page;
        expect(list.emails).to.have.length(sent.length);
        for (const email of list.emails) {
            const one = await fetch(`${service.baseUrl}/v1/emails/${encodeURIComponent(email.messageId)}`, { headers: auth });
            expect(one.status, email.subject).to.equal(200);
            expect((await one.json() as { subject: string }).subject).to.equal(email.subject);

            const redirect = await fetch(`${service.baseUrl}${email.rawUrl}`, { headers: auth, redirect: 'manual' });
            expect(redirect.status, email.subject).to.equal(302);
            const raw = await fetch(new URL(redirect.headers.get('location')!, service.baseUrl));
            expect(raw.status, email.subject).to.equal(200);
            const text = Buffer.from(await raw.arrayBuffer()).toString('utf8');
            const sentId = new Map(sent).get(email.subject)!;
            expect(text).to.include(`Message-ID: <${sentId}>`);
        }
    });
});
