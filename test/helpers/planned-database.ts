import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { createKnexRecordStore } from '../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../lib/record-store/postgres/postgres-knex';
import { openSqliteKnex } from '../../lib/sqlite/knex';
import { startPostgres } from './postgres';
import { tempDir } from './temp-dir';

/** A migrated, seeded database to read query plans on: SQLite's as lines (`string[]`), Postgres' as one text. */
export interface PlannedDatabase<Plan> {
    knex: Knex;
    /** The plan of `sql`: EXPLAIN QUERY PLAN details on SQLite, the EXPLAIN text on Postgres. */
    plan(query: { sql: string; bindings: readonly unknown[] }): Promise<Plan>;
    close(): Promise<void>;
}

// Migrated by the store, which is closed again: the tests query through `knex` alone.
async function migrated(knex: Knex, seed: (knex: Knex) => Promise<void>): Promise<void> {
    const store = createKnexRecordStore({ knex });
    await store.migrate();
    await store.close();
    await seed(knex);
}

/** A fresh SQLite file in a temp dir, migrated and seeded by `seed`. */
export async function openPlannedSqlite(seed: (knex: Knex) => Promise<void>): Promise<PlannedDatabase<string[]>> {
    const dir = await tempDir('plans');
    const knex = openSqliteKnex(join(dir, 'inbox-capture.sqlite'));
    await migrated(knex, seed);
    return {
        knex,
        plan: async ({ sql, bindings }) => (await knex.raw(`EXPLAIN QUERY PLAN ${sql}`, bindings as Knex.RawBinding[]) as { detail: string }[]).map((r) => r.detail),
        async close() {
            await knex.destroy();
            await rm(dir, { recursive: true, force: true });
        }
    };
}

/** A fresh database on the shared embedded Postgres (held until close()), migrated and seeded by `seed`. */
export async function openPlannedPostgres(seed: (knex: Knex) => Promise<void>): Promise<PlannedDatabase<string>> {
    const server = await startPostgres();
    const knex = openPostgresKnex(await server.createDatabase());
    await migrated(knex, seed);
    return {
        knex,
        plan: async ({ sql, bindings }) =>
            ((await knex.raw(`EXPLAIN ${sql}`, bindings as Knex.RawBinding[])) as { rows: { 'QUERY PLAN': string }[] }).rows.map((r) => r['QUERY PLAN']).join('\n'),
        async close() {
            await knex.destroy();
            await server.stop();
        }
    };
}
