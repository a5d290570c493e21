import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { execFile } from 'node:child_process';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { CLIENT_SCRIPT_OUTPUT, clientScripts } from '../helpers/client-scripts';
import { provisionServer } from '../helpers/provision-server';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');

// What a consumer's script does, run with the consumer's directory as cwd: only
// public subpath exports, migrations from inside node_modules, a full round trip.
const CONSUMER_SCRIPT = `
'use strict';
const Hapi = require('@hapi/hapi');
const core = require('inbox-capture');
const { openEmbeddedStores } = require('inbox-capture/embedded-stores');
const { createKnexRecordStore } = require('inbox-capture/record-store/knex');
const { openSqliteKnex } = require('inbox-capture/record-store/sqlite');
const { createFsBlobStore } = require('inbox-capture/blob-store/fs');
const { inboxCapturePlugin } = require('inbox-capture/hapi');
const { createSmtpListener } = require('inbox-capture/smtp');
const pkg = require('inbox-capture/package.json');

async function main() {
    const out = {};
    out.resolved = require.resolve('inbox-capture');
    out.exports = {
        createInboxCapture: typeof core.createInboxCapture,
        createKnexRecordStore: typeof createKnexRecordStore,
        openSqliteKnex: typeof openSqliteKnex,
        createFsBlobStore: typeof createFsBlobStore,
        plugin: typeof inboxCapturePlugin.register,
        createSmtpListener: typeof createSmtpListener
    };

    // Plain core use, as from an MTA hook: migrations must run from node_modules.
    const service = core.createInboxCapture(await openEmbeddedStores({ dataDir: 'core-data' }));
    await service.start();
    const records = await service.ingestRawEmail('From: a@x.test\\r\\nTo: hook@x.test\\r\\nSubject: via hook\\r\\nMessage-ID: <hook-1@x.test>\\r\\n\\r\\nhello\\r\\n');
    out.ingested = records.map((r) => r.messageId);
    await service.close();

    // The plugin with no options: embedded defaults in ./data of the consumer.
    const server = Hapi.server();
    await server.register(inboxCapturePlugin);
    const capture = server.plugins['inbox-capture'].capture;
    const key = await capture.createKey('consumer');
    await server.plugins['inbox-capture'].ingestForApi('From: a@x.test\\r\\nTo: app@x.test\\r\\nSubject: via plugin\\r\\n\\r\\nhi\\r\\n');
    const res = await server.inject({ url: '/v1/emails?inbox=app', headers: { authorization: 'Bearer ' + key } });
    out.list = { status: res.statusCode, subjects: res.result.emails.map((e) => e.subject) };
    const version = await server.inject('/version');
    out.version = version.result.version === pkg.version;
    await server.stop();
    console.log(JSON.stringify(out));
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
`;

// The client from both module systems: its named exports, a real call, a typed error.
const CLIENT = clientScripts('inbox-capture/client');

// A TypeScript consumer on Node's own resolution, one file per module system, no Node types.
const CLIENT_TS_ESM = `import { InboxCaptureClient, InboxCaptureApiError, WaitTimeoutError, type Email } from 'inbox-capture/client';
const api = new InboxCaptureClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' });
export const wait: Promise<Email> = api.waitForEmail({ inbox: 'x', timeoutMs: 1000 });
export const codes = (e: Email): string[] => e.codes;
export const kinds = [InboxCaptureApiError, WaitTimeoutError];
`;
const CLIENT_TS_CJS = `import client = require('inbox-capture/client');
const api = new client.InboxCaptureClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' });
export const bytes: Promise<Uint8Array> = api.downloadRaw('id');
`;
const CLIENT_TS_BAD = `import { InboxCaptureClient } from 'inbox-capture/client';
export const wrong: Promise<number> = new InboxCaptureClient({ baseUrl: 'http://x', apiKey: 'k' }).getEmail('id');
`;

/** Runs `node <file>` in `cwd`; resolves to its stdout, rejects with its stderr. */
function runIn(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
    return new Promise<string>((resolve, reject) => {
        execFile(process.execPath, args, { cwd, env, timeout: 60_000 }, (err, out, errOut) => {
            if (err) {
                reject(new Error(`${args.join(' ')} failed: ${err.message}\n${out}\n${errOut}`));
                return;
            }

            resolve(out);
        });
    });
}

describe('package exports', () => {

    let app: string;

    before(async () => {
        // A consumer app whose node_modules holds the built package (package.json + dist,
        // what `files` publishes) beside links to the same dependencies.
        app = await tempDir('consumer');
        const modules = Path.join(app, 'node_modules');
        const installed = Path.join(modules, 'inbox-capture');
        await Fs.mkdir(installed, { recursive: true });
        await Fs.copyFile(Path.join(ROOT, 'package.json'), Path.join(installed, 'package.json'));
        await Fs.cp(Path.join(ROOT, 'dist'), Path.join(installed, 'dist'), { recursive: true });
        for (const entry of await Fs.readdir(Path.join(ROOT, 'node_modules'))) {
            if (!entry.startsWith('.')) {
                await Fs.symlink(Path.join(ROOT, 'node_modules', entry), Path.join(modules, entry));
            }
        }

        await Fs.writeFile(Path.join(app, 'consumer.js'), CONSUMER_SCRIPT);
    });

    after(async () => {
        await Fs.rm(app, { recursive: true, force: true });
    });

    it('works from inside node_modules through its public subpaths, migrations included', async () => {
        const stdout = await new Promise<string>((resolve, reject) => {
            execFile(process.execPath, ['consumer.js'], { cwd: app, timeout: 60_000 }, (err, out, errOut) => {
                if (err) {
                    reject(new Error(`consumer failed: ${err.message}\n${errOut}`));
                    return;
                }

                resolve(out);
            });
        });

        const result = JSON.parse(stdout.trim().split('\n').pop()!);
        expect(result.resolved).to.equal(Path.join(app, 'node_modules', 'inbox-capture', 'dist', 'lib', 'index.js'));
        expect(Object.values(result.exports)).to.only.include('function');
        expect(result.ingested).to.equal(['hook-1@x.test']);
        expect(result.list).to.equal({ status: 200, subjects: ['via plugin'] });
        expect(result.version).to.be.true();

        // The embedded defaults landed in the consumer's own directory, not in the package.
        await Fs.access(Path.join(app, 'data', 'inbox-capture.sqlite'));
        await Fs.access(Path.join(app, 'core-data', 'inbox-capture.sqlite'));
    });

    it('ships type declarations for every export', async () => {
        const pkg = JSON.parse(await Fs.readFile(Path.join(ROOT, 'package.json'), 'utf8'));
        type Target = { types: string; default: string };
        for (const [subpath, entry] of Object.entries<Target | { import: Target; require: Target } | string>(pkg.exports)) {
            if (typeof entry === 'string') {
                continue;
            }

            // A dual subpath (the client) names a target per module system.
            const targets = 'import' in entry ? [entry.import, entry.require] : [entry];
            for (const target of targets) {
                await Fs.access(Path.join(ROOT, target.types)).catch(() => {
                    throw new Error(`${subpath}: missing ${target.types}`);
                });
                await Fs.access(Path.join(ROOT, target.default)).catch(() => {
                    throw new Error(`${subpath}: missing ${target.default}`);
                });
            }
        }

        // The build, and the docs the README links to.
        expect(pkg.files).to.equal(['dist', 'docs', 'bench/README.md', 'CHANGELOG.md']);
        expect(pkg.bin['inbox-capture']).to.equal('dist/adapters/cli/bin.js');

        // TypeScript's older `moduleResolution: node` reads no `exports`: typesVersions names
        // the same declarations, subpath by subpath (a new export adds its line there).
        const typesVersions: Record<string, string[]> = {};
        for (const [subpath, entry] of Object.entries<Target | { import: Target; require: Target } | string>(pkg.exports)) {
            if (subpath !== '.' && typeof entry !== 'string') {
                typesVersions[subpath.slice(2)] = [('require' in entry ? entry.require : entry).types.slice(2)];
            }
        }

        expect(pkg.typesVersions).to.equal({ '*': typesVersions });
    });

    it('serves inbox-capture/client to require and to import, against a real server', async () => {
        const p = await provisionServer({ listen: true });
        try {
            await Fs.writeFile(Path.join(app, 'client.cjs'), CLIENT.cjs);
            await Fs.writeFile(Path.join(app, 'client.mjs'), CLIENT.esm);
            const env = { ...process.env, BASE_URL: `http://127.0.0.1:${p.server.info.port}`, API_KEY: p.apiKey };
            expect(JSON.parse(await runIn(app, ['client.cjs'], env))).to.equal(CLIENT_SCRIPT_OUTPUT);
            expect(JSON.parse(await runIn(app, ['client.mjs'], env))).to.equal(CLIENT_SCRIPT_OUTPUT);
        }
        finally {
            await p.cleanup();
        }
    });

    it('types inbox-capture/client for TypeScript under Node16 resolution, ESM and CJS, and under node10, without Node types', async () => {
        const dir = Path.join(app, 'ts-consumer');
        await Fs.mkdir(dir, { recursive: true });
        await Fs.writeFile(Path.join(dir, 'esm.mts'), CLIENT_TS_ESM);
        await Fs.writeFile(Path.join(dir, 'cjs.cts'), CLIENT_TS_CJS);
        await Fs.writeFile(Path.join(dir, 'bad.mts'), CLIENT_TS_BAD);
        const options = { module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, types: [], lib: ['ES2022', 'DOM'] };
        const tsc = Path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
        await Fs.writeFile(Path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['esm.mts', 'cjs.cts'] }));
        await runIn(dir, [tsc, '-p', 'tsconfig.json']);

        // The types are real: a wrong program fails to compile.
        await Fs.writeFile(Path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['bad.mts'] }));
        const failed = await runIn(dir, [tsc, '-p', 'tsconfig.json']).then(() => null, (err: Error) => err.message);
        expect(failed).to.match(/bad\.mts.*TS2322/);

        // `moduleResolution: node` (node10), through typesVersions.
        await Fs.writeFile(Path.join(dir, 'node10.ts'), CLIENT_TS_ESM);
        await Fs.writeFile(Path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...options, module: 'commonjs', moduleResolution: 'node10', target: 'ES2022' }, files: ['node10.ts'] }));
        await runIn(dir, [tsc, '-p', 'tsconfig.json']);
    });
});
