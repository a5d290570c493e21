import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as Path from 'node:path';
import { run, type RunExit } from '../helpers/child-process';

const { describe, it } = exports.lab = Lab.script();
const { expect } = Code;

const ROOT = Path.join(__dirname, '..', '..');

/** Whose checkout: `undefined` is this process's user. */
interface Owner {
    name: string;
    uid: number;
    gid: number;
}

function user(name: string): Owner {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
    return { name, uid: id('-u'), gid: id('-g') };
}

const isRoot = process.getuid?.() === 0;

/** What of a checkout the test run reads, besides node_modules. */
const SOURCES = ['lib', 'test', 'scripts', 'package.json', 'tsconfig.json', '.labrc.js'];

/**
 * What runs in the checkout: a small Postgres test file (start the server, migrate, query).
 * Any Postgres test file fails the same way when the server cannot start from the checkout;
 * this one takes seconds where the record store's contract takes a minute.
 */
const POSTGRES_TEST_FILE = Path.join('test', 'fixtures', 'postgres-any-clone', 'postgres-record-store.ts');

/** Tests in POSTGRES_TEST_FILE. */
const POSTGRES_TESTS = 2;

/**
 * A checkout as `git clone` + `npm ci` leave it, at `<mktemp -d>/clone`, the temp dir
 * 0700 and owned by `owner`: the sources copied, node_modules as hard links (same files,
 * new directories; a copy when the temp dir is on another file system).
 */
async function checkout(owner: Owner | undefined): Promise<{ top: string; clone: string }> {
    const top = await mkdtemp(Path.join(tmpdir(), 'inbox-capture-clone-'));
    await chmod(top, 0o700);
    const clone = Path.join(top, 'clone');
    await mkdir(clone);
    for (const entry of SOURCES) {
        await cp(Path.join(ROOT, entry), Path.join(clone, entry), { recursive: true });
    }

    const linked = spawnSync('cp', ['-al', Path.join(ROOT, 'node_modules'), Path.join(clone, 'node_modules')]);
    if (linked.status !== 0) {
        await rm(Path.join(clone, 'node_modules'), { recursive: true, force: true });
        await cp(Path.join(ROOT, 'node_modules'), Path.join(clone, 'node_modules'), { recursive: true, verbatimSymlinks: true });
    }

    if (owner) {
        // The sources are the owner's; node_modules' files are shared links: their modes
        // (world-readable, as npm installs them) must do.
        execFileSync('chown', ['-R', `${owner.uid}:${owner.gid}`, '--', ...SOURCES.map((entry) => Path.join(clone, entry))]);
        await chown(top, owner.uid, owner.gid);
        await chown(clone, owner.uid, owner.gid);
    }

    return { top, clone };
}

/** Runs POSTGRES_TEST_FILE in the checkout through npm test's runner, as `owner`. */
function runPostgresTests(clone: string, top: string, owner: Owner | undefined): Promise<RunExit> {
    const args = [Path.join(clone, 'scripts', 'run-lab.js'), '--typescript', '-m', '120000', '-M', '300000', POSTGRES_TEST_FILE];
    // The outer run's timings file is its own (and may be out of the other user's reach).
    const env = { ...process.env };
    delete env.LAB_TIMINGS_FILE;
    return run(process.execPath, args, {
        cwd: clone,
        env: { ...env, HOME: top, NO_COLOR: '1' },
        ...(owner ? { uid: owner.uid, gid: owner.gid } : {})
    });
}

function expectPassed(result: RunExit): void {
    const detail = `exit ${result.code}\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`;
    expect(result.code, detail).to.equal(0);
    const complete = /(\d+) tests complete/.exec(result.stdout);
    expect(complete, detail).to.not.be.null();
    expect(Number(complete![1])).to.equal(POSTGRES_TESTS);
    expect(result.stderr).to.contain('run-lab: lab finished its report');
}

describe('Postgres tests from any checkout', () => {

    it(`pass in a checkout under a 0700 temp dir, run as ${isRoot ? 'root (PostgreSQL runs as another user, who cannot enter that dir)' : 'this user'}`, { timeout: 240_000 }, async () => {
        const { top, clone } = await checkout(undefined);
        try {
            if (isRoot) {
                // The condition under test: the server's user cannot reach the checkout's binaries.
                const server = user('postgres');
                const enter = spawnSync('test', ['-x', top], { uid: server.uid, gid: server.gid });
                expect(enter.status).to.equal(1);
            }

            expectPassed(await runPostgresTests(clone, top, undefined));
        }
        finally {
            await rm(top, { recursive: true, force: true });
        }
    });

    it('pass in a checkout of a user who is not root, under that user\'s 0700 temp dir', { timeout: 240_000 }, async () => {
        // As root, the checkout and the run are `nobody`'s; otherwise this process already is not root.
        const owner = isRoot ? user('nobody') : undefined;
        const { top, clone } = await checkout(owner);
        try {
            const result = await runPostgresTests(clone, top, owner);
            expectPassed(result);
        }
        finally {
            await rm(top, { recursive: true, force: true });
        }
    });
});
