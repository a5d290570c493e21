import { execFile } from 'node:child_process';
import * as Path from 'node:path';

/** The repository's root: dependency-cruiser runs there and names files relative to it. */
export const ROOT = Path.join(__dirname, '..', '..');

const DEPENDENCY_CRUISER = Path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

/** What the tests read of dependency-cruiser's JSON output. */
export interface Cruise {
    modules: {
        /** The file, relative to the repository. */
        source: string;
        dependencies: {
            /** The file imported, relative to the repository (`node_modules/...` for a package). */
            resolved: string;
            /** A Node built-in (`node:fs`). */
            coreModule: boolean;
            circular: boolean;
            /** The way back from the dependency to `source`, when it is on a cycle. */
            cycle?: { name: string }[];
        }[];
    }[];
}

/**
 * Every import among the files under `paths` (relative to the repository), `import type`
 * included (`--ts-pre-compilation-deps`): a cycle of types is still two files a reader
 * must hold in mind at once. Packages are not followed.
 */
export function cruise(paths: string[]): Promise<Cruise> {
    const args = [
        DEPENDENCY_CRUISER, ...paths, '--no-config', '--ts-pre-compilation-deps', '--ts-config', 'tsconfig.json',
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
