import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { execFile } from 'node:child_process';
import * as Path from 'node:path';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');
const DEPENDENCY_CRUISER = Path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

/** What this test reads of dependency-cruiser's JSON output. */
interface Cruise {
    modules: {
        source: string;
        dependencies: {
            circular: boolean;
            /** The way back from the dependency to `source`, when it is on a cycle. */
            cycle?: { name: string }[];
        }[];
    }[];
}

/**
 * Every import among the files under `dirs` (relative to the repository), `import type`
 * included (`--ts-pre-compilation-deps`): a cycle of types is still two files a reader
 * must hold in mind at once. Packages are not followed.
 */
function cruise(dirs: string[]): Promise<Cruise> {
    const args = [
        DEPENDENCY_CRUISER, ...dirs, '--no-config', '--ts-pre-compilation-deps', '--ts-config', 'tsconfig.json',
        '--do-not-follow', 'node_modules', '--output-type', 'json'
    ];
    return new Promise((resolve, reject) => {
        execFile(process.execPath, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
            if (err) {
                reject(new Error(`dependency-cruiser failed: ${stderr || err.message}`));
                return;
            }

            resolve(JSON.parse(stdout) as Cruise);
        });
    });
}

/** Each cycle once, as `a.ts → b.ts → a.ts`, starting from its first file by name. */
function cyclesOf(result: Cruise): string[] {
    const cycles = new Set<string>();
    for (const module of result.modules) {
        for (const dependency of module.dependencies) {
            if (dependency.circular) {
                const files = (dependency.cycle ?? []).map((step) => step.name);
                const start = files.indexOf([...files].sort()[0]);
                const ordered = [...files.slice(start), ...files.slice(0, start)];
                cycles.add([...ordered, ordered[0]].join(' → '));
            }
        }
    }

    return [...cycles].sort();
}

describe('import cycles', () => {

    it('lib/ and adapters/ have none, `import type` counted', async () => {
        const result = await cruise(['lib', 'adapters']);
        expect(cyclesOf(result)).to.equal([]);
        expect(result.modules.filter((module) => /^(lib|adapters)\//.test(module.source)).length).to.be.above(150);
    });

    it('finds a cycle made of `import type` alone', async () => {
        const result = await cruise(['test/fixtures/type-cycle']);
        expect(cyclesOf(result)).to.equal(['test/fixtures/type-cycle/a.ts → test/fixtures/type-cycle/b.ts → test/fixtures/type-cycle/a.ts']);
    });
});
