import { createHash } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { run, type RunExit } from './child-process';
import { isolatedEnv } from './service-env';

const ROOT = Path.join(__dirname, '..', '..');

/** What `npm pack` reads besides the `files` of each package.json: a change to any of these makes new tarballs. */
const ALWAYS_PACKED = ['package.json', 'README.md', 'LICENSE', 'packages/client/package.json', 'packages/client/README.md', 'packages/client/LICENSE'];

/** Cache directories of tarballs this old are removed when a run makes new ones, ms: a day. */
const STALE_MS = 24 * 60 * 60 * 1000;

/** The two tarballs of this repository, as `npm pack` makes them. */
export interface PackedTarballs {
    /** inbox-capture (the root package). */
    server: string;
    /** inbox-capture-client (packages/client). */
    client: string;
}

/** npm settings a user's shell (or CI) may pass in the environment: where packages come from and are cached. */
const KEPT_NPM_CONFIG = /^npm_config_(cache|registry|userconfig|cafile|strict_ssl|proxy|https_proxy|noproxy)$/i;

/**
 * The environment of a user's shell: none of this run's other npm variables (an `npm test`
 * sets npm_config_local_prefix and friends, which would point the inner npm at this
 * repository), none of the service's variables, and no analytics calls from install scripts.
 */
export function npmUserEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env = isolatedEnv();
    for (const name of Object.keys(env)) {
        if ((/^npm_/i.test(name) && !KEPT_NPM_CONFIG.test(name)) || name === 'INIT_CWD') {
            delete env[name];
        }
    }

    return { ...env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1', ...vars };
}

/** `npm args` in `cwd`; throws with its output unless it exits 0. */
export async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<RunExit> {
    const result = await run('npm', args, { cwd, env });
    if (result.code !== 0) {
        throw new Error(`npm ${args.join(' ')} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
    }

    return result;
}

let packed: Promise<PackedTarballs> | undefined;

/**
 * The tarballs of this checkout as built (npm test builds first), packed once and shared:
 * by every test of this process, and by other test processes on the same build, through a
 * directory under the OS temp dir named for the content that goes into them. Packing takes
 * seconds; the tests that read tarballs (what ships, installs of them) need the same ones.
 */
export function packedTarballs(): Promise<PackedTarballs> {
    return packed ??= packOnce().catch((err: unknown) => {
        packed = undefined;
        throw err;
    });
}

/** The files in a tarball, relative to its package directory (without tar's `package/`). */
export async function tarballFiles(tarball: string): Promise<string[]> {
    const listed = await run('tar', ['tzf', tarball], { cwd: Path.dirname(tarball), env: process.env });
    if (listed.code !== 0) {
        throw new Error(`tar tzf ${tarball} exited with ${listed.code}: ${listed.stderr}`);
    }

    return listed.stdout.trim().split('\n').filter((line) => !line.endsWith('/')).map((line) => line.replace(/^package\//, ''));
}

async function packOnce(): Promise<PackedTarballs> {
    const key = await contentKey();
    const dir = Path.join(Os.tmpdir(), `inbox-capture-packed-${key}`);
    const made = await readCache(dir);
    if (made) {
        // In use again: not stale to a run that packs another build.
        const now = new Date();
        await Fs.utimes(dir, now, now);
        return made;
    }

    // Packed beside the cache and renamed into place: a process that finds the directory finds both tarballs.
    const work = await Fs.mkdtemp(Path.join(Os.tmpdir(), 'inbox-capture-packing-'));
    try {
        await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT, npmUserEnv());
        await npm(['pack', '-w', 'inbox-capture-client', '--ignore-scripts', '--json', '--pack-destination', work], ROOT, npmUserEnv());
        await Fs.rename(work, dir).catch(async (err: NodeJS.ErrnoException) => {
            // Another process got there first with the same content.
            if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') {
                throw err;
            }
        });
    }
    finally {
        await Fs.rm(work, { recursive: true, force: true });
    }

    await removeStale(dir);
    const ready = await readCache(dir);
    if (!ready) {
        throw new Error(`npm pack left no tarballs in ${dir}`);
    }

    return ready;
}

async function readCache(dir: string): Promise<PackedTarballs | null> {
    const names = await Fs.readdir(dir).catch(() => [] as string[]);
    const server = names.find((name) => /^inbox-capture-\d.*\.tgz$/.test(name));
    const client = names.find((name) => /^inbox-capture-client-.*\.tgz$/.test(name));
    return server && client ? { server: Path.join(dir, server), client: Path.join(dir, client) } : null;
}

// Other builds' tarballs, once nobody can still be using them.
async function removeStale(keep: string): Promise<void> {
    const tmp = Os.tmpdir();
    for (const name of await Fs.readdir(tmp)) {
        const dir = Path.join(tmp, name);
        if (!name.startsWith('inbox-capture-packed-') || dir === keep) {
            continue;
        }

        const stat = await Fs.stat(dir).catch(() => null);
        if (stat && Date.now() - stat.mtimeMs > STALE_MS) {
            await Fs.rm(dir, { recursive: true, force: true });
        }
    }
}

/** A hash of every file the two packages' `files` name and of the files npm always packs. */
async function contentKey(): Promise<string> {
    const hash = createHash('sha256');
    const roots = [...ALWAYS_PACKED];
    for (const [dir, manifest] of [['', 'package.json'], ['packages/client', 'packages/client/package.json']] as const) {
        const { files = [] } = JSON.parse(await Fs.readFile(Path.join(ROOT, manifest), 'utf8')) as { files?: string[] };
        roots.push(...files.map((file) => Path.posix.join(dir, file)));
    }

    for (const file of (await Promise.all(roots.map(filesUnder))).flat().sort()) {
        hash.update(`${file}\0`);
        hash.update(await Fs.readFile(Path.join(ROOT, file)));
        hash.update('\0');
    }

    return hash.digest('hex').slice(0, 16);
}

async function filesUnder(relative: string): Promise<string[]> {
    const stat = await Fs.stat(Path.join(ROOT, relative)).catch(() => null);
    if (!stat) {
        return [];
    }

    if (!stat.isDirectory()) {
        return [relative];
    }

    const entries = await Fs.readdir(Path.join(ROOT, relative), { recursive: true, withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => Path.relative(ROOT, Path.join(entry.parentPath, entry.name)));
}
