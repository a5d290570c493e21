import { join } from 'node:path';
import type { Knex } from 'knex';
import { sha256Hex } from '../../lib/identity/ids';
import { createKnexRecordStore } from '../../lib/record-store/knex-record-store';
import { openPostgresKnex } from '../../lib/record-store/postgres/postgres-knex';
import type { RecordStore } from '../../lib/record-store/record-store';
import { openSqliteKnex } from '../../lib/sqlite/knex';
import { draft } from './email-draft';
import type { PostgresServer } from './postgres';

/** A fresh, migrated record store and the knex under it, for a migration test to tamper with. */
export interface MigratedStore {
    knex: Knex;
    store: RecordStore;
    close(): Promise<void>;
}

/** Opens a fresh migrated store on SQLite (a file in `dir`) and on Postgres (a new database of `postgres`), by name. */
export function migratedStores(postgres: () => PostgresServer, dir: () => string): Array<[string, () => Promise<MigratedStore>]> {
    const opened = async (knex: Knex): Promise<MigratedStore> => {
        const store = createKnexRecordStore({ knex, destroyKnexOnClose: true });
        await store.migrate();
        return { knex, store, close: () => store.close() };
    };

    return [
        ['SQLite', () => opened(openSqliteKnex(join(dir(), `${Date.now()}-${Math.random()}.sqlite`)))],
        ['Postgres', async () => opened(openPostgresKnex(await postgres().createDatabase()))]
    ];
}

/** An empty database (nothing migrated) on SQLite (a file in `dir`) and on Postgres, by name; cleanup() destroys the knex. */
export function emptyDatabases(postgres: () => PostgresServer, dir: () => string): Array<[string, () => Promise<{ knex: Knex; cleanup(): Promise<void> }>]> {
    const opened = (knex: Knex) => ({ knex, cleanup: () => knex.destroy() });
    return [
        ['SQLite', async () => opened(openSqliteKnex(join(dir(), `${Date.now()}-${Math.random()}.sqlite`)))],
        ['Postgres', async () => opened(openPostgresKnex(await postgres().createDatabase()))]
    ];
}

/** Stores email `n` for `inbox`, then gives it `id` (message and source) the way an earlier version stored it. */
export async function storedUnder(knex: Knex, store: RecordStore, inbox: string, id: string, n: number): Promise<void> {
    const { saved } = await store.saveEmails([draft(inbox, n)]);
    await knex('emails').where('message_id_hash', sha256Hex(saved[0]!.messageId))
        .update({ message_id: id, message_id_hash: sha256Hex(id), source_id: id, source_id_hash: sha256Hex(id) });
}

/** Runs a back-fill whose onBatch throws after its first batch (an interrupted start); answers what onBatch heard. */
export async function interruptedBackfill(run: (onBatch: (filled: number) => void) => Promise<number>): Promise<number[]> {
    const told: number[] = [];
    let stopped = false;
    try {
        await run((filled) => {
            told.push(filled);
            throw new Error('stopped after one batch');
        });
    }
    catch (err) {
        stopped = (err as Error).message === 'stopped after one batch';
    }

    if (!stopped) {
        throw new Error('the back-fill ran to its end: onBatch did not stop it');
    }

    return told;
}
