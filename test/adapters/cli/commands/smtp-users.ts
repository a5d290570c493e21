import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Path from 'node:path';
import type { InboxCapture } from '../../../../lib/service/inbox-capture';
import { runNode, type RunResult } from '../../../helpers/child-process';
import { withEmbeddedCapture } from '../../../helpers/embedded-capture';
import { isolatedEnv } from '../../../helpers/service-env';
import { removeDir, tempDir } from '../../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, beforeEach, afterEach } = exports.lab = Lab.script();

/** The built executable: the commands are tested as people run them (`npm test` builds first). */
const BIN = Path.join(__dirname, '..', '..', '..', '..', 'dist', 'adapters', 'cli', 'bin.js');

describe('smtp-users (the CLI commands, as a child process)', () => {
    let dataDir: string;

    const cli = (args: string[]): Promise<RunResult> =>
        runNode([BIN, ...args], { cwd: dataDir, env: isolatedEnv({ INBOX_CAPTURE_DATA_DIR: dataDir }) });

    const withCapture = <T>(fn: (capture: InboxCapture) => Promise<T>): Promise<T> => withEmbeddedCapture(dataDir, fn);

    beforeEach(async () => {
        dataDir = await tempDir('cli-smtp-users');
        await withCapture(async () => undefined);
    });

    afterEach(() => removeDir(dataDir));

    it('create prints only the password, which logs in as that user with its prefix; list shows no secret; delete ends it', async () => {
        const created = await cli(['smtp-users', 'create', 'team-a', '--inbox-prefix', 'team-a-']);
        expect(created.stderr).to.equal('');
        expect(created.code).to.equal(0);
        expect(created.stdout).to.match(/^[A-Za-z0-9_-]{32}\n$/);
        const password = created.stdout.trim();
        expect(await withCapture((c) => c.verifySmtpUser('team-a', password))).to.equal({ inboxPrefix: 'team-a-' });

        const again = await cli(['smtp-users', 'create', 'team-a', '--inbox-prefix', 'team-a-']);
        expect(again.code).to.equal(1);
        expect(again.stderr).to.contain('an SMTP user named "team-a" already exists');

        const listed = await cli(['smtp-users', 'list']);
        expect(listed.code).to.equal(0);
        expect(listed.stdout).to.match(/^team-a\t\d{4}-\d\d-\d\dT[\d:.]+Z\tprefix=team-a-\n$/);
        expect(listed.stdout).to.not.contain(password);

        expect(await cli(['smtp-users', 'delete', 'team-a'])).to.include({ code: 0, stdout: 'deleted SMTP user "team-a"\n' });
        expect(await withCapture((c) => c.verifySmtpUser('team-a', password))).to.equal('unknown-user');
        const gone = await cli(['smtp-users', 'delete', 'team-a']);
        expect(gone.code).to.equal(1);
        expect(gone.stderr).to.contain('no SMTP user named "team-a"');
        expect((await cli(['smtp-users', 'list'])).stdout).to.equal('');
    });

    it('create needs a prefix of a-z 0-9 . _ - ending in -, . or _, at most 32 characters', async () => {
        const missing = await cli(['smtp-users', 'create', 'team-a']);
        expect(missing.code).to.equal(1);
        expect(missing.stderr).to.contain('--inbox-prefix P is needed');
        for (const prefix of ['team-a', 'Team-a-', `${'a'.repeat(32)}-`, 'team a-']) {
            const bad = await cli(['smtp-users', 'create', 'team-a', '--inbox-prefix', prefix]);
            expect(bad.code, prefix).to.equal(1);
            expect(bad.stderr).to.contain('ending in -, . or _');
        }

        expect(await withCapture((c) => c.listSmtpUsers())).to.equal([]);
        expect((await cli(['smtp-users', 'create', 'team-b', '--inbox-prefix', 'team.b.'])).code).to.equal(0);
    });

    it('smtp-users alone names its subcommands, and help lists them', async () => {
        const group = await cli(['smtp-users', '--help']);
        expect(group.code).to.equal(0);
        expect(group.stdout).to.contain('smtp-users create <name> --inbox-prefix P');
        expect(group.stdout).to.contain('smtp-users delete <name>');
        expect((await cli(['--help'])).stdout).to.contain('  smtp-users list');
    });
});
