// For running the knex CLI by hand (`npx knex migrate:status`, `migrate:unlock`, ...).
// The service itself migrates on start with the same source and table name.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Knex } from 'knex';
import { migratorConfig } from './lib/record-store/sql/migration-source';
import { postgresKnexConfig } from './lib/record-store/postgres/postgres-knex';
import { DEFAULT_DATA_DIR, SQLITE_FILENAME } from './lib/defaults';
import { sqliteKnexConfig } from './lib/sqlite/knex';

/** Same variables as the standalone service: DATABASE_URL selects Postgres. */
function connectionConfig(): Knex.Config {
    const databaseUrl = process.env.DATABASE_URL;
    if (databaseUrl) {
        return postgresKnexConfig(databaseUrl);
    }

    const dataDir = resolve(process.env.INBOX_CAPTURE_DATA_DIR ?? DEFAULT_DATA_DIR);
    mkdirSync(dataDir, { recursive: true });
    return sqliteKnexConfig(resolve(dataDir, SQLITE_FILENAME));
}

const config: Knex.Config = {
    ...connectionConfig(),
    migrations: migratorConfig
};

export = config;
