import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { withEmbeddedCapture } from '../../helpers/embedded-capture';
import { removeDir, tempDir } from '../../helpers/temp-dir';
import { checkSmtpPassword, hashSmtpPassword } from '../../../lib/service/smtp-users';

const { expect } = Code;
const { describe, it, beforeEach, afterEach } = exports.lab = Lab.script();

describe('smtp-users (the service\'s stored SMTP users)', () => {
    let dataDir: string;

    beforeEach(async () => {
        dataDir = await tempDir('smtp-users');
    });

    afterEach(() => removeDir(dataDir));

    it('stores a salted scrypt hash: the same password hashes twice differently, and only it checks', async () => {
        const first = await hashSmtpPassword('s3cret');
        const second = await hashSmtpPassword('s3cret');
        expect(first).to.startWith('scrypt$16384$8$1$');
        expect(first).to.not.equal(second);
        expect(first).to.not.contain('s3cret');
        expect(await checkSmtpPassword('s3cret', first)).to.be.true();
        expect(await checkSmtpPassword('s3cret', second)).to.be.true();
        expect(await checkSmtpPassword('s3cres', first)).to.be.false();
        expect(await checkSmtpPassword('', first)).to.be.false();
        expect(await checkSmtpPassword('s3cret', 'sha256$abc')).to.be.false();
    });

    it('creates a user with a new password each time, shown once; the store keeps only the hash', async () => {
        await withEmbeddedCapture(dataDir, async (capture) => {
            const password = await capture.createSmtpUser('team-a', 'team-a-');
            expect(password).to.match(/^[A-Za-z0-9_-]{32}$/);
            expect(await capture.createSmtpUser('team-a', 'team-b-')).to.be.null();
            const stored = await capture.recordStore.findSmtpUser!('team-a');
            expect(stored!.passwordHash).to.not.contain(password!);
            expect(await capture.verifySmtpUser('team-a', password!)).to.equal({ inboxPrefix: 'team-a-' });
            expect(await capture.verifySmtpUser('team-a', `${password!}x`)).to.equal('wrong-password');
            expect(await capture.verifySmtpUser('team-b', password!)).to.equal('unknown-user');
            expect(await capture.listSmtpUsers()).to.equal([{ name: 'team-a', inboxPrefix: 'team-a-', createdAt: stored!.createdAt }]);
        });
    });

    it('refuses a name or a prefix an SMTP user cannot have (INVALID_INPUT)', async () => {
        await withEmbeddedCapture(dataDir, async (capture) => {
            for (const prefix of ['team-a', 'Team-a-', 'team-a-x', 'a'.repeat(32) + '-', 'team a-', '']) {
                const err = await expect(capture.createSmtpUser('team-a', prefix)).to.reject();
                expect(err).to.include({ code: 'INVALID_INPUT' });
            }

            for (const name of ['', 'with space', 'x'.repeat(65)]) {
                const err = await expect(capture.createSmtpUser(name, 'team-a-')).to.reject();
                expect(err).to.include({ code: 'INVALID_INPUT' });
            }

            // The longest and shortest prefixes that are allowed.
            expect(await capture.createSmtpUser('long', 'a'.repeat(31) + '_')).to.be.a.string();
            expect(await capture.createSmtpUser('short', '.')).to.be.a.string();
        });
    });

    it('a user created or deleted through another service on the same store counts at its next check', async () => {
        await withEmbeddedCapture(dataDir, async (running) => {
            expect(await running.verifySmtpUser('team-a', 'x')).to.equal('unknown-user');
            const password = await withEmbeddedCapture(dataDir, (cli) => cli.createSmtpUser('team-a', 'team-a-'));
            expect(await running.verifySmtpUser('team-a', password!)).to.equal({ inboxPrefix: 'team-a-' });
            expect(await withEmbeddedCapture(dataDir, (cli) => cli.deleteSmtpUser('team-a'))).to.be.true();
            expect(await running.verifySmtpUser('team-a', password!)).to.equal('unknown-user');
        });
    });
});
