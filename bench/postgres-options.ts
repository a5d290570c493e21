import type { PostgresOptions } from '../test/helpers/postgres';

/**
 * The benchmarks' PostgreSQL (started by the tests' helper): its durability defaults
 * (fsync and synchronous_commit on: a 250 after a commit means the record is on disk,
 * as for SQLite's synchronous=FULL), and room for two instances' pools, LISTEN
 * connections and 10,000 long-polls' probes.
 */
export const BENCH_POSTGRES: PostgresOptions = { durable: true, maxConnections: 200 };
