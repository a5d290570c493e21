import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { spawnSync } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { fileNameOf, shardOf } from '../../../lib/blob-store/fs-blob-layout';
import { run } from '../../helpers/child-process';
import { tempDir } from '../../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..', '..');

/** Blobs of one email written at once by the child: all in one shard directory. */
const CONCURRENT_PUTS = 16;

/**
 * A child that loads the TypeScript store with a bare transpile, writes one blob
 * (the first into its shard), then CONCURRENT_PUTS blobs of one email at once, and
 * prints `done <key>` the moment each put resolves: under strace, that write marks
 * the instant the store said "durable".
 */
const PUT_CHILD = `
const Fs = require('node:fs');
const Ts = require('typescript');
require.extensions['.ts'] = (module, file) => module._compile(Ts.transpileModule(Fs.readFileSync(file, 'utf8'), {
    compilerOptions: { module: Ts.ModuleKind.CommonJS, target: Ts.ScriptTarget.ES2022, esModuleInterop: true }
}).outputText, file);
const { createFsBlobStore } = require(process.argv[1]);
const store = createFsBlobStore({ root: process.argv[2], signingSecret: 'durability test signing secret' });
const keys = JSON.parse(process.argv[3]);
(async () => {
    await store.put(keys[0], Buffer.from(keys[0]), 'text/plain');
    process.stdout.write('done ' + keys[0] + '\\n');
    await Promise.all(keys.slice(1).map(async (key) => {
        await store.put(key, Buffer.alloc(4096, key), 'text/plain');
        process.stdout.write('done ' + key + '\\n');
    }));
})().catch((err) => {
    console.error(err);
    process.exit(1);
});
`;

function straceWorks(): boolean {
    const probe = spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', process.execPath, '-e', '0'], { stdio: 'ignore' });
    return probe.status === 0;
}

/** One system call from `strace -f -y`, with the log lines where it began and where it returned. */
interface Syscall {
    name: string;
    /** Path of the first argument's fd (`-y`). */
    fdPath?: string;
    /** String arguments, in order. */
    strings: string[];
    entry: number;
    exit: number;
}

/**
 * Parses `strace -f -y` output. A call another thread interrupted is logged twice
 * (`<unfinished ...>`, then `<... resumed>`): its entry is the first line, its exit
 * the second, which is what "began after" and "ended before" are judged by.
 */
function parseStrace(text: string): Syscall[] {
    const pending = new Map<string, { head: string; entry: number }>();
    const calls: Syscall[] = [];
    text.split('\n').forEach((raw, index) => {
        let line = raw;
        let entry = index;
        const unfinished = /^(\d+)\s+(.*) <unfinished \.\.\.>$/.exec(line);
        if (unfinished) {
            pending.set(unfinished[1], { head: unfinished[2], entry: index });
            return;
        }

        const resumed = /^(\d+)\s+<\.\.\. \w+ resumed>(.*)$/.exec(line);
        if (resumed) {
            const begun = pending.get(resumed[1]);
            pending.delete(resumed[1]);
            line = `${resumed[1]} ${begun?.head ?? ''}${resumed[2]}`;
            entry = begun?.entry ?? index;
        }

        const call = /^\d+\s+(\w+)\((.*)$/.exec(line);
        if (!call) {
            return;
        }

        const [, name, rest] = call;
        const fdPath = /^-?\d+<([^>]*)>/.exec(rest);
        const strings = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
        calls.push({ name, fdPath: fdPath?.[1], strings, entry, exit: index });
    });
    return calls;
}

const SYNCS = new Set(['fsync', 'fdatasync']);

describe('FsBlobStore durability (system calls under strace)', () => {
    const strace = straceWorks();
    let dir: string;

    before(async () => {
        dir = await tempDir('fs-blob-durability');
    });

    after(async () => {
        await Fs.rm(dir, { recursive: true, force: true });
    });

    it('fsyncs each file before its rename and its shard directory after it, before put() resolves; concurrent puts share directory fsyncs', { skip: !strace }, async () => {
        const root = Path.join(dir, 'blobs');
        const log = Path.join(dir, 'strace.log');
        const email = '0123456789abcdef01234567';
        const keys = [`${email}/raw.eml`, ...Array.from({ length: CONCURRENT_PUTS }, (_, n) => `${email}/att/${n}`)];
        const shardDir = Path.join(root, shardOf(keys[0]));

        const result = await run('strace', [
            '-f', '-qq', '-y', '-s', '256', '-o', log,
            '-e', 'trace=openat,mkdir,mkdirat,write,fsync,fdatasync,rename,renameat,renameat2',
            process.execPath, '-e', PUT_CHILD, require.resolve('../../../lib/blob-store/fs-blob-store'), root, JSON.stringify(keys)
        ], { cwd: ROOT, env: { ...process.env, UV_USE_IO_URING: '0' } });
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout.trim().split('\n').sort()).to.equal(keys.map((key) => `done ${key}`).sort());

        const calls = parseStrace(await Fs.readFile(log, 'utf8'));
        const dirSyncs = calls.filter((c) => SYNCS.has(c.name) && c.fdPath === shardDir);

        // The shard is made once, and its entry in the root synced before anything is filed in it.
        const mkdirs = calls.filter((c) => c.name.startsWith('mkdir') && c.strings.includes(shardDir));
        expect(mkdirs).to.have.length(1);
        const firstRename = calls.find((c) => c.name.startsWith('rename') && c.strings[1]?.startsWith(shardDir + '/'))!;
        expect(calls.some((c) => SYNCS.has(c.name) && c.fdPath === root && c.entry > mkdirs[0].exit && c.exit < firstRename.entry), 'fsync of the root after the shard mkdir').to.be.true();

        for (const key of keys) {
            const target = Path.join(shardDir, fileNameOf(key));
            const rename = calls.find((c) => c.name.startsWith('rename') && c.strings[1] === target);
            expect(rename, `rename to ${target}`).to.exist();
            const done = calls.find((c) => c.name === 'write' && c.strings[0] === `done ${key}\\n`);
            expect(done, `done ${key}`).to.exist();

            // The temp file's content reached the disk before its name did.
            const temp = rename!.strings[0];
            expect(temp.startsWith(Path.join(root, '.tmp') + '/')).to.be.true();
            expect(calls.some((c) => SYNCS.has(c.name) && c.fdPath === temp && c.exit < rename!.entry), `fsync of ${temp} before its rename`).to.be.true();

            // A directory fsync that began after the rename returned, and ended before put() resolved.
            expect(dirSyncs.some((c) => c.entry > rename!.exit && c.exit < done!.entry), `fsync of ${shardDir} between the rename of ${key} and its acknowledgement`).to.be.true();
        }

        // Group commit: the concurrent puts did not each pay their own directory fsync
        // (one for the first put, typically 2-3 for the 16 after it; 17 without sharing).
        expect(dirSyncs.length).to.be.within(2, CONCURRENT_PUTS / 2);
    });
});
