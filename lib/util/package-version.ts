import * as Fs from 'node:fs';
import * as Path from 'node:path';

/** Name in our package.json, to tell it apart from any other package.json on the way up. */
const PACKAGE_NAME = 'inbox-capture';

let cached: { root: string; version: string } | undefined;

// The package's directory and version, found once by walking up from this file: the
// same from the sources or from `dist/`. A missing package.json is a packaging bug, so
// it throws rather than report a made-up version.
function findPackage(): { root: string; version: string } {
    if (cached !== undefined) {
        return cached;
    }

    for (let dir = __dirname; ; dir = Path.dirname(dir)) {
        try {
            const pkg = JSON.parse(Fs.readFileSync(Path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
            if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') {
                cached = { root: dir, version: pkg.version };
                return cached;
            }
        }
        catch {
            // No package.json here (or not ours): keep walking up.
        }

        if (Path.dirname(dir) === dir) {
            throw new Error(`package.json of ${PACKAGE_NAME} not found above ${__dirname}`);
        }
    }
}

/** The version of this package, read once from its package.json. */
export function packageVersion(): string {
    return findPackage().version;
}

/** The directory holding this package's package.json (where `dist/` is built). */
export function packageRoot(): string {
    return findPackage().root;
}
