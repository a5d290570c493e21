import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { cruise, type Cruise } from '../helpers/dependency-cruise';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const MIGRATIONS = 'lib/record-store/sql/migrations';
const MIGRATION_SOURCE = 'lib/record-store/sql/migration-source.ts';

/** A file of this repository, not a package (`node_modules/...`) or a Node built-in. */
function isOurs(dependency: Cruise['modules'][number]['dependencies'][number]): boolean {
    return !dependency.coreModule && !dependency.resolved.startsWith('node_modules/');
}

/**
 * The imports that break "migrations are history" (docs/design.md): a file under
 * `migrations` importing a file of ours outside it, or a file outside it importing one
 * under it, except `source` (the migration source, which lists them).
 */
function migrationOffenders(result: Cruise, migrations: string, source: string): string[] {
    const isMigration = (file: string) => file.startsWith(`${migrations}/`);
    const offenders: string[] = [];
    for (const module of result.modules) {
        for (const dependency of module.dependencies.filter(isOurs)) {
            const inward = isMigration(dependency.resolved) && !isMigration(module.source) && module.source !== source;
            const outward = isMigration(module.source) && !isMigration(dependency.resolved);
            if (inward || outward) {
                offenders.push(`${module.source} → ${dependency.resolved}`);
            }
        }
    }

    return offenders.sort();
}

/** Each file outside lib/extract/ that imports one inside it, with the files it imports. */
function extractImporters(result: Cruise): Record<string, string[]> {
    const importers: Record<string, string[]> = {};
    for (const module of result.modules) {
        const inside = module.dependencies.filter((d) => d.resolved.startsWith('lib/extract/')).map((d) => d.resolved.slice('lib/extract/'.length));
        if (!module.source.startsWith('lib/extract/') && inside.length > 0) {
            importers[module.source] = inside.sort();
        }
    }

    return importers;
}

describe('import rules', () => {

    describe('migrations are history', () => {

        it('a migration imports nothing of ours outside migrations/, and only the migration source imports a migration', async () => {
            const result = await cruise(['lib', 'adapters', 'knexfile.ts']);
            expect(migrationOffenders(result, MIGRATIONS, MIGRATION_SOURCE)).to.equal([]);
            // The check saw the migrations and what imports them.
            const migrations = result.modules.filter((m) => m.source.startsWith(`${MIGRATIONS}/`));
            expect(migrations.length).to.be.above(10);
            const source = result.modules.find((m) => m.source === MIGRATION_SOURCE)!;
            expect(source.dependencies.filter((d) => d.resolved.startsWith(`${MIGRATIONS}/`)).length).to.equal(migrations.length - 1);
        });

        it('finds a migration that imports runtime code and runtime code that imports a migration', async () => {
            const fixture = 'test/fixtures/migration-imports';
            const result = await cruise([fixture]);
            expect(migrationOffenders(result, `${fixture}/migrations`, `${fixture}/source.ts`)).to.equal([
                `${fixture}/migrations/001_first.ts → ${fixture}/names.ts`,
                `${fixture}/names.ts → ${fixture}/migrations/002_second.ts`
            ]);
        });
    });

    describe('links and codes are worked out at ingest', () => {

        it('only ingest, the parse (in a worker or, for a small message, the calling thread) and the back-fills of migrate() reach the extractor (the public API re-exports it; the MCP view reads HTML as text; a store folds what search compares); no other part of a store does', async () => {
            const result = await cruise(['lib', 'adapters']);
            expect(extractImporters(result)).to.equal({
                // The one place at ingest, and the parse that finds them (and folds the searched text) for the messages it parses.
                'lib/ingest/ingest.ts': ['links-and-codes.ts', 'search-text.ts'],
                'lib/mime/parse-and-extract.ts': ['links-and-codes.ts', 'search-text.ts'],
                // The text of an HTML part; the type of what the worker found.
                'lib/mime/parsed-message.ts': ['html-text.ts', 'links-and-codes.ts'],
                // Emails stored before links and codes, or before the searched texts, filled once by migrate().
                'lib/record-store/sql/backfill-links-codes.ts': ['links-and-codes.ts'],
                'lib/record-store/sql/backfill-search.ts': ['html-text.ts', 'search-text.ts'],
                // Not links or codes: the fold of a row's recipient and file names, and of a query's needles.
                'lib/record-store/sql/rows.ts': ['search-text.ts'],
                'lib/record-store/sql/search-sql.ts': ['search-text.ts'],
                // The public API re-exports the two searches for code of yours.
                'lib/index.ts': ['codes.ts', 'links.ts'],
                // Not links or codes: MCP's get_email shows the HTML as text when the text part is blank.
                'adapters/mcp/email-views.ts': ['html-text.ts']
            });
        });
    });
});
