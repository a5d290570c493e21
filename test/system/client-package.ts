import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Ts from 'typescript';
import { runNode } from '../helpers/child-process';
import { CLIENT_SCRIPT_OUTPUT, clientScripts } from '../helpers/client-scripts';
import { provisionServer } from '../helpers/provision-server';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const PACKAGE = Path.join(ROOT, 'packages', 'client');

interface Manifest {
    name: string;
    version: string;
    license?: string;
    files?: string[];
    scripts?: Record<string, string>;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    bundleDependencies?: string[];
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    exports: Record<string, unknown>;
    workspaces?: string[];
}

const readManifest = async (dir: string): Promise<Manifest> => JSON.parse(await Fs.readFile(Path.join(dir, 'package.json'), 'utf8')) as Manifest;

/** The scripts npm runs when it installs a package. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

// The client from both module systems (a real call, a typed error), and the fixture beside it.
const CLIENT = clientScripts('inbox-capture-client', `
    const fixture = await load('inbox-capture-client/playwright');
    out.playwright = { test: typeof fixture.test, extend: typeof fixture.test.extend, expect: typeof fixture.expect };
`);

// A TypeScript user's test code: the client, and a Playwright test with the fixture.
const TS_CLIENT = `import { InboxCaptureClient, InboxCaptureApiError, WaitTimeoutError, type Email } from 'inbox-capture-client';
const api = new InboxCaptureClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' });
export const wait: Promise<Email> = api.waitForEmail({ inbox: 'x', timeoutMs: 1000 });
export const bytes: Promise<Uint8Array> = api.downloadRaw('id');
export const codes = (e: Email): string[] => e.codes;
export const kinds = [InboxCaptureApiError, WaitTimeoutError];
`;
const TS_FIXTURE = `import { test, expect } from 'inbox-capture-client/playwright';
import type { Email } from 'inbox-capture-client';
test.use({ inboxCapture: { mailDomain: 'example.test', prefix: 'signup-' } });
test('signs up', async ({ page, inbox }) => {
    await page.fill('input[name=email]', inbox.address);
    const email: Email = await inbox.waitForEmail({ subject: 'sign-up', timeoutMs: 20_000 });
    const name: string = inbox.inbox;
    expect(email.codes).toHaveLength(1);
    expect((await inbox.client.listInboxes({})).inboxes.map((i) => i.name)).toContain(name);
});
`;
// Mistakes the declarations must catch: a wrong result type, an option that is not one, a fixture member that is not one.
const TS_WRONG = `import { InboxCaptureClient } from 'inbox-capture-client';
import { test } from 'inbox-capture-client/playwright';
export const wrong: Promise<number> = new InboxCaptureClient({ baseUrl: 'http://x', apiKey: 'k' }).getEmail('id');
test.use({ inboxCapture: { mailDomian: 'x.test' } });
test('t', async ({ inbox }) => {
    inbox.waitForMail();
    inbox.client.waitForMail();
});
`;

/** The TypeScript settings of a user's project under each module resolution the package supports. */
const RESOLUTIONS: Array<{ name: string; options: Ts.CompilerOptions; files: Array<[string, string]> }> = [
    // Node's own resolution decides per file: .mts is an ES module, .cts CommonJS.
    { name: 'node16', options: { module: Ts.ModuleKind.Node16, moduleResolution: Ts.ModuleResolutionKind.Node16 }, files: [['client.mts', TS_CLIENT], ['client.cts', TS_CLIENT], ['fixture.mts', TS_FIXTURE], ['fixture.cts', TS_FIXTURE]] },
    { name: 'bundler', options: { module: Ts.ModuleKind.ESNext, moduleResolution: Ts.ModuleResolutionKind.Bundler }, files: [['client.ts', TS_CLIENT], ['fixture.ts', TS_FIXTURE]] },
    { name: 'node10', options: { module: Ts.ModuleKind.CommonJS, moduleResolution: Ts.ModuleResolutionKind.Node10 }, files: [['client.ts', TS_CLIENT], ['fixture.ts', TS_FIXTURE]] }
];

/**
 * Type-checks the files in `dir` as a strict project with `options`; one line per
 * diagnostic. Declaration files are not checked themselves (seconds each, and ours come
 * from tsc), but an import of theirs that does not resolve turns their types to `any`,
 * which the user's files and the mistakes below notice.
 */
function typecheck(dir: string, files: string[], options: Ts.CompilerOptions): string[] {
    const program = Ts.createProgram(files.map((f) => Path.join(dir, f)), {
        ...options, strict: true, noEmit: true, skipLibCheck: true, target: Ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: []
    });
    return Ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? Path.relative(dir, d.file.fileName) : ''}: TS${d.code} ${Ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
}

describe('inbox-capture-client (packages/client)', () => {

    let app: string;

    before(async () => {
        // A user's project with the package as npm installs it (its package.json and what
        // `files` publishes, copied), beside @playwright/test and what it needs, linked.
        await Fs.access(Path.join(PACKAGE, 'dist', 'cjs', 'index.js')).catch(() => {
            throw new Error('packages/client/dist is not built: run `npm run build` first');
        });
        app = await tempDir('client-package');
        const installed = Path.join(app, 'node_modules', 'inbox-capture-client');
        await Fs.mkdir(installed, { recursive: true });
        await Fs.copyFile(Path.join(PACKAGE, 'package.json'), Path.join(installed, 'package.json'));
        await Fs.cp(Path.join(PACKAGE, 'dist'), Path.join(installed, 'dist'), { recursive: true });
        await Fs.mkdir(Path.join(app, 'node_modules', '@playwright'));
        await Fs.mkdir(Path.join(app, 'node_modules', '@types'));
        for (const name of ['@playwright/test', 'playwright', 'playwright-core', '@types/node', 'undici-types']) {
            await Fs.symlink(Path.join(ROOT, 'node_modules', name), Path.join(app, 'node_modules', name));
        }
    });

    after(async () => {
        if (app) {
            await removeDir(app);
        }
    });

    it('is a workspace of this repository at its version, MIT with the same LICENSE, with no dependency and no install script', async () => {
        const root = await readManifest(ROOT);
        const pkg = await readManifest(PACKAGE);
        expect(root.workspaces).to.equal(['packages/client']);
        expect(pkg.name).to.equal('inbox-capture-client');
        expect(pkg.version).to.equal(root.version);
        expect(pkg.license).to.equal('MIT');
        expect(await Fs.readFile(Path.join(PACKAGE, 'LICENSE'), 'utf8')).to.equal(await Fs.readFile(Path.join(ROOT, 'LICENSE'), 'utf8'));
        expect(await Fs.readFile(Path.join(ROOT, 'LICENSE'), 'utf8')).to.startWith('MIT License\n');
        expect(pkg.dependencies ?? {}).to.equal({});
        expect(pkg.optionalDependencies ?? {}).to.equal({});
        expect(pkg.bundleDependencies ?? []).to.equal([]);
        expect(Object.keys(pkg.scripts ?? {}).filter((s) => INSTALL_SCRIPTS.includes(s))).to.equal([]);
        // @playwright/test only for the fixture, and only if the user has it.
        expect(Object.keys(pkg.peerDependencies ?? {})).to.equal(['@playwright/test']);
        expect(pkg.peerDependenciesMeta).to.equal({ '@playwright/test': { optional: true } });
        expect(pkg.files).to.equal(['dist']);
    });

    it('answers require and import, the client against a real server and the fixture beside it', async () => {
        const p = await provisionServer({ listen: true });
        try {
            await Fs.writeFile(Path.join(app, 'client.cjs'), CLIENT.cjs);
            await Fs.writeFile(Path.join(app, 'client.mjs'), CLIENT.esm);
            const env = { ...process.env, BASE_URL: `http://127.0.0.1:${p.server.info.port}`, API_KEY: p.apiKey };
            const expected = { ...CLIENT_SCRIPT_OUTPUT, playwright: { test: 'function', extend: 'function', expect: 'function' } };
            for (const file of ['client.cjs', 'client.mjs']) {
                const result = await runNode([file], { cwd: app, env });
                expect(result.code, `${file}: ${result.stderr}`).to.equal(0);
                expect(JSON.parse(result.stdout), file).to.equal(expected);
            }
        }
        finally {
            await p.cleanup();
        }
    });

    it('types the client and the fixture under moduleResolution node16 (ESM and CJS), bundler and node10, without Node types', { timeout: 60_000 }, async () => {
        for (const { name, options, files } of RESOLUTIONS) {
            const dir = Path.join(app, `ts-${name}`);
            await Fs.mkdir(dir, { recursive: true });
            for (const [file, text] of files) {
                await Fs.writeFile(Path.join(dir, file), text);
            }

            expect(typecheck(dir, files.map(([file]) => file), options), name).to.equal([]);

            // The types are real: each mistake fails to compile.
            await Fs.writeFile(Path.join(dir, 'wrong.ts'), TS_WRONG);
            const wrong = typecheck(dir, ['wrong.ts'], options).join('\n');
            expect(wrong, name).to.match(/wrong\.ts: TS2322 .*number/);
            expect(wrong, name).to.contain('mailDomian');
            expect(wrong.match(/waitForMail/g), name).to.have.length(2);
        }
    });
});
