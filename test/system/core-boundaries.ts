import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const LIB = Path.join(__dirname, '..', '..', 'lib');

/** Packages the core must never load: it is protocol-free, adapters depend on it, never the reverse. */
const FORBIDDEN = /^(@hapi\/|joi$|hapi-swagger|smtp-server|nodemailer)/;

async function sources(dir: string): Promise<string[]> {
    const entries = await Fs.readdir(dir, { withFileTypes: true });
    const files = await Promise.all(entries.map((e) => {
        const path = Path.join(dir, e.name);
        return e.isDirectory() ? sources(path) : Promise.resolve(e.name.endsWith('.ts') ? [path] : []);
    }));
    return files.flat();
}

describe('core boundaries', () => {

    it('lib/ imports nothing of Hapi, joi, Boom, SMTP or the adapters', async () => {
        const offenders: string[] = [];
        for (const file of await sources(LIB)) {
            const text = await Fs.readFile(file, 'utf8');
            for (const match of text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)) {
                const target = match[1];
                const resolved = target.startsWith('.') ? Path.resolve(Path.dirname(file), target) : '';
                if (FORBIDDEN.test(target) || resolved.startsWith(Path.join(LIB, '..', 'adapters'))) {
                    offenders.push(`${Path.relative(LIB, file)} → ${target}`);
                }
            }
        }

        expect(offenders).to.equal([]);
        expect((await sources(LIB)).length).to.be.above(20);
    });

    it('lib/ makes no network call: no http, https, net, tls, dgram, http2 or undici import, no fetch()', async () => {
        // Sending webhooks is the adapters' (adapters/webhooks); store drivers take ready clients.
        const network = /^(?:node:)?(?:http|https|http2|net|tls|dgram)(?:\/.*)?$|^undici(?:\/.*)?$/;
        const offenders: string[] = [];
        for (const file of await sources(LIB)) {
            const code = (await Fs.readFile(file, 'utf8'))
                .replace(/\/\*[\s\S]*?\*\//g, '')
                .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
            for (const match of code.matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)) {
                if (network.test(match[1])) {
                    offenders.push(`${Path.relative(LIB, file)} → ${match[1]}`);
                }
            }

            if (/\bfetch\s*\(/.test(code)) {
                offenders.push(`${Path.relative(LIB, file)} calls fetch()`);
            }
        }

        expect(offenders).to.equal([]);
    });

    it('lib/mime/ holds the only importers of mailparser and libmime (of mailparser, parse.ts, the bounds it parses with, the parse without its streams and the fields both fill)', async () => {
        const importers: Record<string, string[]> = { mailparser: [], libmime: [] };
        for (const file of await sources(LIB)) {
            const code = await Fs.readFile(file, 'utf8');
            for (const match of code.matchAll(/['"](mailparser|libmime)(?:\/[^'"]*)?['"]/g)) {
                importers[match[1]].push(Path.relative(LIB, file));
            }
        }

        expect([...new Set(importers.mailparser)].sort()).to.equal(['mime/address-bounds.ts', 'mime/parse.ts', 'mime/parsed-message.ts', 'mime/plain-parse.ts']);
        expect([...new Set(importers.libmime)].sort()).to.equal(['mime/header-fields.ts', 'mime/libmime.d.ts', 'mime/plain-parse.ts']);
    });

    it('lib/ builds no URL of ours: no /v1 path outside comments', async () => {
        const offenders: string[] = [];
        for (const file of await sources(LIB)) {
            const code = (await Fs.readFile(file, 'utf8'))
                .replace(/\/\*[\s\S]*?\*\//g, '')
                .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
            if (/\/v1\b/.test(code)) {
                offenders.push(Path.relative(LIB, file));
            }
        }

        expect(offenders).to.equal([]);
    });

    it('adapters/client/ imports only its own files: no package, no Node module, nothing of the server', async () => {
        const client = Path.join(LIB, '..', 'adapters', 'client');
        const offenders: string[] = [];
        for (const file of await sources(client)) {
            const code = (await Fs.readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
            for (const match of code.matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)) {
                const target = match[1];
                if (!target.startsWith('./')) {
                    offenders.push(`${Path.basename(file)} → ${target}`);
                }
            }

            if (/\b(?:process|Buffer|__dirname|require)\b/.test(code)) {
                offenders.push(`${Path.basename(file)} uses a Node global`);
            }
        }

        expect(offenders).to.equal([]);
        expect((await sources(client)).length).to.be.above(5);
    });

    it('packages/client/src (the Playwright fixture) imports only @playwright/test and the client, by its package name', async () => {
        const own = Path.join(LIB, '..', 'packages', 'client', 'src');
        const targets: string[] = [];
        for (const file of await sources(own)) {
            const code = (await Fs.readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
            targets.push(...[...code.matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]));
        }

        expect([...new Set(targets)].sort()).to.equal(['@playwright/test', 'inbox-capture-client']);
    });
});
