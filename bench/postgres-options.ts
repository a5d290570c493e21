import type { PostgresOptions } from '../test/helpers/postgres';

/**
 * The benchmarks' PostgreSQL (started by the tests' helper): its durability defaults
 * (fsync and synchronous_commit on: a 250 after a commit means the record is on disk,
 * as for SQLite's synchronous=FULL), and room for two instances' pools, LISTEN
 * connections and 10,000 long-polls' probes.
 */
export const BENCH_POSTGRES: PostgresOptions = { durable: !isSmokeRun(), maxConnections: 200 };

/**
 * A smoke run (`--smoke`, the test suite's) measures nothing: its Postgres skips the
 * fsyncs, which make migrations and seeding slow on a loaded machine.
 */
function isSmokeRun(): boolean {
    return process.argv.includes('--smoke');
}
