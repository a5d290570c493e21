import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Path from 'node:path';

const { describe, it } = exports.lab = Lab.script();
const { expect } = Code;

const ROOT = Path.join(__dirname, '..', '..');

/** Every TypeScript source of the package: the core and the adapters. */
function sources(): string[] {
    return ['lib', 'adapters'].flatMap((dir) => Fs.readdirSync(Path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => Path.join(dir, file)));
}

/** `file:line: text` for each line of the sources matching `pattern`. */
function linesMatching(pattern: RegExp): string[] {
    const found: string[] = [];
    for (const file of sources()) {
        Fs.readFileSync(Path.join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
            if (pattern.test(line)) {
                found.push(`${file}:${i + 1}: ${line.trim()}`);
            }
        });
    }

    return found;
}

/** Text as the check compares it: a citation may wrap onto the next comment line; no code or emphasis marks, one space, lower case. */
const plain = (text: string) => text.replace(/\n\s*(?:\/\/|\*)?/g, ' ').replace(/[`*]/g, '').replace(/\s+/g, ' ').toLowerCase();

describe('source comments', () => {

    it('cite no file outside the repository (the contract, its sections) and carry no history (issues, attacks)', () => {
        // The reference is docs/; the history is the CHANGELOG and bench/README.md.
        expect(linesMatching(/EXTENSIONS|interface spec|§|\b[Ii]ssue \d+|\b[Aa]ttack \d+/)).to.equal([]);
    });

    it('point at docs/ and bench/README.md text that exists: every `file.md, "A › B"` names a file holding each part', () => {
        const citation = /((?:docs\/[\w.-]+|bench\/README)\.md)[,:]?\s*"([^"]+)"/g;
        const missing: string[] = [];
        let count = 0;
        for (const file of sources()) {
            const text = Fs.readFileSync(Path.join(ROOT, file), 'utf8');
            for (const match of text.matchAll(citation)) {
                count++;
                const doc = Path.join(ROOT, match[1]!);
                const body = Fs.existsSync(doc) ? plain(Fs.readFileSync(doc, 'utf8')) : '';
                for (const part of match[2]!.split('›').map((p) => plain(p.trim()))) {
                    if (!body.includes(part)) {
                        missing.push(`${file}: ${match[1]} "${part}"`);
                    }
                }
            }
        }

        expect(count).to.be.above(50);
        expect(missing).to.equal([]);
    });
});
