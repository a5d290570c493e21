/**
 * One line of write transactions per SQLite database file and process. The record
 * store's writer and the SQLite blob store's writer may share a file (the embedded
 * default keeps small blobs beside the records): taking turns, neither ever meets the
 * other's lock (SQLITE_BUSY), and writes keep the order they were made in.
 */

import * as Path from 'node:path';
import { createConcurrencyLimit, type ConcurrencyLimit } from '../util/concurrency-limit';

const turnsByFile = new Map<string, ConcurrencyLimit>();

/** The write line of the database at `filename` (resolved, so two spellings of one path share it). */
export function sqliteWriteTurns(filename: string): ConcurrencyLimit {
    const key = Path.resolve(filename);
    let turns = turnsByFile.get(key);
    if (!turns) {
        turns = createConcurrencyLimit(1);
        turnsByFile.set(key, turns);
    }

    return turns;
}
