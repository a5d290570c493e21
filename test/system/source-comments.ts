import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Path from 'node:path';

const { describe, it } = exports.lab = Lab.script();
const { expect } = Code;

const ROOT = Path.join(__dirname, '..', '..');

/** The packages: the core, the adapters, the client package's own. */
const PACKAGES = ['lib', 'adapters', 'packages/client/src'];
/** Beside them: the tests, the scripts, the examples. */
const BESIDE = ['test', 'scripts', 'examples'];
/** The benchmarks, which measure named issues' targets: bench/README.md holds that history. */
const BENCH = ['bench'];

/** What a check reads: sources only. The fixtures are inputs, and this file names the patterns it looks for. */
const SOURCE = /\.(?:ts|js|mjs)$/;
const SKIPPED = [/^test\/fixtures\//, /^test\/system\/source-comments\.ts$/, /(?:^|\/)node_modules\//];

/** Every source file under `dirs`, relative to the root, with `/` between its parts. */
function sources(dirs: string[]): string[] {
    return dirs.flatMap((dir) => Fs.readdirSync(Path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .map((file) => `${dir}/${file.split(Path.sep).join('/')}`)
        .filter((file) => SOURCE.test(file) && !SKIPPED.some((skip) => skip.test(file))));
}

/** `file:line: text` for each line of the sources under `dirs` matching `pattern`. */
function linesMatching(dirs: string[], pattern: RegExp): string[] {
    const found: string[] = [];
    for (const file of sources(dirs)) {
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

    it('cite no file outside the repository (the contract, its sections): not in the packages, the tests, the scripts, the examples or the benchmarks', () => {
        // Users of the repository have no contract: docs/ says its rules in our words.
        expect(linesMatching([...PACKAGES, ...BESIDE, ...BENCH], /EXTENSIONS|DECISIONS|interface[- ]spec|\b[Tt]he spec\b|§/)).to.equal([]);
    });

    it('carry no history (issues, attacks) in the packages, the tests, the scripts or the examples', () => {
        // The history is the CHANGELOG and bench/README.md; a comment or a title says what the code does.
        expect(linesMatching([...PACKAGES, ...BESIDE], /\b[Ii]ssues?[- ]#?\d+|\b[Aa]ttacks?[- ]#?\d+/)).to.equal([]);
    });

    it('point at docs/ and bench/README.md text that exists: every `file.md, "A › B"` names a file holding each part', () => {
        const citation = /((?:docs\/[\w.-]+|bench\/README)\.md)[,:]?\s*"([^"]+)"/g;
        const missing: string[] = [];
        let count = 0;
        for (const file of sources([...PACKAGES, ...BESIDE, ...BENCH])) {
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
