import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Defaults from '../../lib/defaults';
import { DEFAULT_MAIL_DOMAIN } from '../../adapters/mcp/mail-domain';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const DEFAULTS_FILE = Path.join('lib', 'defaults.ts');

/** Every source file a default could be written again in: the core, the adapters, the examples, the knexfile. */
async function sources(): Promise<Array<{ file: string; code: string }>> {
    const found: Array<{ file: string; code: string }> = [];
    const walk = async (dir: string): Promise<void> => {
        for (const entry of await Fs.readdir(Path.join(ROOT, dir), { withFileTypes: true })) {
            const path = Path.join(dir, entry.name);
            if (entry.isDirectory()) {
                await walk(path);
            }
            else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
                // Comments may name a value; only code counts.
                const code = (await Fs.readFile(Path.join(ROOT, path), 'utf8'))
                    .replace(/\/\*[\s\S]*?\*\//g, '')
                    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
                found.push({ file: path, code });
            }
        }
    };

    for (const dir of ['lib', 'adapters', 'examples']) {
        await walk(dir);
    }

    found.push({ file: 'knexfile.ts', code: await Fs.readFile(Path.join(ROOT, 'knexfile.ts'), 'utf8') });
    return found;
}

describe('defaults', () => {

    it('are declared in defaults.ts alone: no other file defines a constant of the same name', async () => {
        const names = Object.keys(Defaults);
        expect(names.length).to.be.above(8);
        const offenders: string[] = [];
        for (const { file, code } of await sources()) {
            for (const name of names) {
                if (file !== DEFAULTS_FILE && new RegExp(`\\b(?:const|let|var)\\s+${name}\\b`).test(code)) {
                    offenders.push(`${file} declares ${name}`);
                }
            }
        }

        expect(offenders).to.equal([]);
    });

    it('hold the only copy of their string values (the data dir and its file names)', async () => {
        // Paths and file names; a bare word such as `blobs` is also a table name.
        const strings = (Object.values(Defaults) as unknown[]).filter((v): v is string => typeof v === 'string' && v.includes('.'));
        expect(strings).to.include(['./data', 'inbox-capture.sqlite', 'blobs.sqlite']);
        const offenders: string[] = [];
        for (const { file, code } of await sources()) {
            for (const value of strings) {
                if (file !== DEFAULTS_FILE && (code.includes(`'${value}'`) || code.includes(`"${value}"`))) {
                    offenders.push(`${file} writes ${value}`);
                }
            }
        }

        expect(offenders).to.equal([]);
    });

    it('of an adapter are written once too, in the one module that owns them (the mail domain of new inboxes)', async () => {
        // The core never needs it: MCP's new_inbox (over HTTP and stdio) and the Playwright fixture take it from the client.
        const owner = Path.join('adapters', 'client', 'new-inbox.ts');
        const writers: string[] = [];
        for (const { file, code } of await sources()) {
            if (code.includes(`'${DEFAULT_MAIL_DOMAIN}'`) || code.includes(`"${DEFAULT_MAIL_DOMAIN}"`) || code.includes(`\`${DEFAULT_MAIL_DOMAIN}\``)) {
                writers.push(file);
            }
        }

        expect(writers).to.equal([owner]);
    });

    it('leave the memory budget to the service: only createInboxCapture() makes one', async () => {
        const makers: string[] = [];
        for (const { file, code } of await sources()) {
            if (/\bcreateMessageBudget\(/.test(code) && !file.endsWith(Path.join('util', 'message-budget.ts'))) {
                makers.push(file);
            }
        }

        expect(makers).to.equal([Path.join('lib', 'service', 'inbox-capture.ts')]);
    });
});
