import * as Fs from 'node:fs';
import * as Path from 'node:path';

/** Name in our package.json, to tell it apart from any other package.json on the way up. */
const PACKAGE_NAME = 'inbox-capture';

let cached: string | undefined;

/**
 * The version of this package, read once from its package.json, found by walking up
 * from this file: the same from the sources or from `dist/`. A missing package.json is
 * a packaging bug, so it throws rather than report a made-up version.
 */
export function packageVersion(): string {
    if (cached !== undefined) {
        return cached;
    }

    for (let dir = __dirname; ; dir = Path.dirname(dir)) {
        try {
            const pkg = JSON.parse(Fs.readFileSync(Path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
            if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') {
                cached = pkg.version;
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
