import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { isInboxCaptureError } from '../../../lib/errors';
import { RawSmtpSession } from '../../helpers/raw-smtp';
import { sendError, startSmtpCapture, type SmtpCapture } from '../../helpers/smtp-capture';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** One message from `user` (logged in with `pass`, or not at all) to `to`: Nodemailer as an application sends it. */
function send(t: SmtpCapture, to: string[], subject: string, auth?: { user: string; pass: string }) {
    return t.transport(auth ? { auth } : {}).sendMail({
        envelope: { from: 'app@example.test', to },
        raw: `From: app@example.test\r\nTo: ${to.join(', ')}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '-')}@example.test>\r\n\r\nHello.\r\n`
    });
}

/** Every stored copy of the capture, as `inbox recipient subject` lines, sorted. */
async function copies(t: SmtpCapture): Promise<string[]> {
    const lines: string[] = [];
    for (const inbox of (await t.capture.listInboxes({ limit: 100 })).inboxes) {
        for (const r of (await t.capture.listEmails({ inbox: inbox.name, limit: 100 })).records) {
            lines.push(`${r.inbox} ${r.recipient} ${r.subject}`);
        }
    }

    return lines.sort();
}

describe('smtp tenants: users kept in the store', () => {

    describe('auth { users: {} } (SMTP_AUTH=users without SMTP_AUTH_USERS)', () => {
        let t: SmtpCapture;
        let pass: string;

        before(async () => {
            t = await startSmtpCapture({ auth: { users: {} } });
            pass = (await t.capture.createSmtpUser('team-c', 'team-c-'))!;
        });

        after(() => t.stop());

        it('lets in only the stored users: theirs is routed, an unknown name gets 535, no AUTH gets 530', async () => {
            await send(t, ['signup@app.test'], 'from c', { user: 'team-c', pass });
            expect(await copies(t)).to.equal(['team-c-signup signup@app.test from c']);
            expect((await sendError(send(t, ['x@app.test'], 'unknown', { user: 'ops', pass }))).responseCode).to.equal(535);
            expect((await sendError(send(t, ['x@app.test'], 'anonymous'))).responseCode).to.equal(530);
            expect(await copies(t)).to.equal(['team-c-signup signup@app.test from c']);
        });
    });

    describe("auth { users }", () => {
        let t: SmtpCapture;
        let passA: string;

        before(async () => {
            t = await startSmtpCapture({ auth: { users: { ops: 'ops-secret' } } });
            passA = (await t.capture.createSmtpUser('team-a', 'team-a-'))!;
        });

        after(() => t.stop());

        it('a stored user logs in and its copies go to prefix + inbox, recipient as given; an SMTP_AUTH_USERS user is not prefixed', async () => {
            await send(t, ['signup@app.test', 'team-a-welcome@app.test'], 'from a', { user: 'team-a', pass: passA });
            await send(t, ['signup@app.test'], 'from ops', { user: 'ops', pass: 'ops-secret' });
            expect(await copies(t)).to.equal([
                'signup signup@app.test from ops',
                'team-a-signup signup@app.test from a',
                // Already under the prefix: not prefixed twice.
                'team-a-welcome team-a-welcome@app.test from a'
            ]);
        });

        it('a stored user\'s wrong password, and an unknown name, get 535', async () => {
            const wrong = await sendError(send(t, ['x@app.test'], 'wrong', { user: 'team-a', pass: `${passA}x` }));
            expect(wrong.responseCode).to.equal(535);
            const unknown = await sendError(send(t, ['x@app.test'], 'unknown', { user: 'team-z', pass: passA }));
            expect(unknown.responseCode).to.equal(535);
        });

        it('a user created or deleted while the listener runs counts at its next AUTH', async () => {
            const passB = (await t.capture.createSmtpUser('team-b', 'team-b-'))!;
            await send(t, ['later@app.test'], 'from b', { user: 'team-b', pass: passB });
            expect(await t.subjects('team-b-later')).to.equal(['from b']);
            expect(await t.capture.deleteSmtpUser('team-b')).to.be.true();
            const gone = await sendError(send(t, ['later@app.test'], 'b again', { user: 'team-b', pass: passB }));
            expect(gone.responseCode).to.equal(535);
        });

        it('a recipient whose inbox would pass 64 characters under the prefix gets 550 at RCPT TO; the others are kept', async () => {
            const long = `${'l'.repeat(60)}@app.test`;
            const info = await send(t, [long, 'short@app.test'], 'long one', { user: 'team-a', pass: passA });
            expect(info.rejected).to.equal([long]);
            expect((info as { rejectedErrors?: Error[] }).rejectedErrors![0]!.message).to.contain('550');
            expect(await t.subjects('team-a-short')).to.equal(['long one']);
            // Without a prefix the same address fits.
            await send(t, [long], 'long plain', { user: 'ops', pass: 'ops-secret' });
            expect(await t.subjects('l'.repeat(60))).to.equal(['long plain']);
        });

        it('a fault rule limited to an inbox matches the tenant\'s prefixed inbox', async () => {
            const rule = await t.capture.faults.create({ stage: 'rcpt', match: { inbox: 'team-a-faulty' }, reply: { code: 452, message: 'full' } });
            try {
                const refused = await sendError(send(t, ['faulty@app.test'], 'faulty', { user: 'team-a', pass: passA }));
                expect(refused.responseCode).to.equal(452);
                // The same address from a user without a prefix is another inbox: no fault.
                await send(t, ['faulty@app.test'], 'plain faulty', { user: 'ops', pass: 'ops-secret' });
                expect(await t.subjects('faulty')).to.equal(['plain faulty']);
            }
            finally {
                await t.capture.faults.delete(rule.id);
            }
        });
    });

    describe("auth 'accept-any'", () => {
        let t: SmtpCapture;
        let passA: string;

        before(async () => {
            t = await startSmtpCapture({ auth: 'accept-any', authLockout: { failures: 3 } });
            passA = (await t.capture.createSmtpUser('team-a', 'team-a-'))!;
        });

        after(() => t.stop());

        it('a stored user\'s right password is prefixed, its wrong one 535; other logins and none are accepted, unprefixed', async () => {
            await send(t, ['signup@app.test'], 'right', { user: 'team-a', pass: passA });
            await send(t, ['signup@app.test'], 'anyone', { user: 'someone', pass: 'anything' });
            await send(t, ['signup@app.test'], 'nobody');
            const wrong = await sendError(send(t, ['signup@app.test'], 'wrong', { user: 'team-a', pass: 'guess' }));
            expect(wrong.responseCode).to.equal(535);
            expect(await copies(t)).to.equal([
                'signup signup@app.test anyone',
                'signup signup@app.test nobody',
                'team-a-signup signup@app.test right'
            ]);
        });

        it('wrong passwords of a stored user count toward the per-address slow-down: then 454, even for the right one', async () => {
            const auth = (password: string) => `AUTH PLAIN ${Buffer.from(`\0team-a\0${password}`).toString('base64')}`;
            // One failure from the test above, two more here: locked at the third.
            const { session } = await RawSmtpSession.open(t.port);
            try {
                await session.command('EHLO client.test');
                expect((await session.command(auth('guess-1'))).code).to.equal(535);
                expect((await session.command(auth('guess-2'))).code).to.equal(535);
            }
            finally {
                await session.destroy();
            }

            const { session: next } = await RawSmtpSession.open(t.port);
            try {
                await next.command('EHLO client.test');
                expect((await next.command(auth(passA))).code).to.equal(454);
            }
            finally {
                await next.destroy();
            }
        });
    });

    describe('ingestRawEmail({ inboxPrefix })', () => {
        let t: SmtpCapture;

        before(async () => {
            t = await startSmtpCapture();
        });

        after(() => t.stop());

        it('stores each copy under the prefix, skips a recipient too long under it, and refuses a prefix no user may have', async () => {
            const raw = 'From: a@example.test\r\nTo: signup@app.test\r\nSubject: hook\r\n\r\nHi.\r\n';
            const [copy] = await t.capture.ingestRawEmail(raw, { inboxPrefix: 'team-a-' });
            expect(copy).to.include({ inbox: 'team-a-signup', recipient: 'signup@app.test' });

            const stored = await t.capture.ingestRawEmail(raw, { inboxPrefix: 'team-a-', recipients: [`${'l'.repeat(60)}@app.test`, 'other@app.test'] });
            expect(stored.map((r) => r.inbox)).to.equal(['team-a-other']);

            for (const inboxPrefix of ['team-a', 'TEAM-', '']) {
                const err = await expect(t.capture.ingestRawEmail(raw, { inboxPrefix })).to.reject();
                expect(isInboxCaptureError(err, 'INVALID_INPUT')).to.be.true();
            }
        });
    });
});
