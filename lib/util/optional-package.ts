/**
 * The Postgres and S3 drivers are optional peer dependencies: a SQLite user's install does
 * not bring them (docs/operations.md, "Scaling out"). Code that needs one checks first, so
 * that a missing driver is one sentence naming the package rather than a loader's stack.
 */

/** One or more optional packages are not installed; `packages` names them, in order. */
export class MissingPackageError extends Error {
    readonly packages: string[];

    /** `purpose` says what needs them, e.g. `the Postgres record store`. */
    constructor(packages: string[], purpose: string) {
        const quoted = packages.map((name) => `"${name}"`).join(' and ');
        super(`${purpose}: install the ${quoted} package${packages.length > 1 ? 's' : ''} (npm install ${packages.join(' ')})`);
        this.name = 'MissingPackageError';
        this.packages = packages;
    }
}

/** Whether `name` can be loaded from this package (as knex and our own lazy imports load it). */
function isInstalled(name: string): boolean {
    try {
        require.resolve(name);
        return true;
    }
    catch (err) {
        // Only the package itself missing counts; a broken install of it should say its own error.
        if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (err as Error).message.includes(`'${name}'`)) {
            return false;
        }

        throw err;
    }
}

/** Throws MissingPackageError unless every package of `names` is installed; `purpose` says what needs them. */
export function requireInstalled(names: string[], purpose: string): void {
    const missing = names.filter((name) => !isInstalled(name));
    if (missing.length > 0) {
        throw new MissingPackageError(missing, purpose);
    }
}
