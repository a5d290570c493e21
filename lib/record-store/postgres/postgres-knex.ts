import knexFactory, { type Knex } from 'knex';
import { requireInstalled } from '../../util/optional-package';

/**
 * Connections per process. node-postgres' own default; each ingest holds one for
 * a short transaction and long-polls share version probes, so this is rarely the
 * limit. Several processes multiply it: keep the total under max_connections.
 */
const POOL_MAX = 10;

/** Ms a new connection may take: a database that silently drops packets answers 503 soon, not after 60 s. */
const CONNECT_TIMEOUT_MS = 5_000;

/** Ms a query may wait for a pooled connection before the store reports itself unavailable. */
const ACQUIRE_TIMEOUT_MS = 10_000;

/** The Knex configuration openPostgresKnex() uses (also read by knexfile.ts). */
export function postgresKnexConfig(connectionString: string): Knex.Config {
    return {
        client: 'pg',
        connection: {
            connectionString,
            application_name: 'inbox-capture',
            connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
            // A silently dropped connection (the LISTEN one above all) is noticed and replaced.
            keepAlive: true
        },
        acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
        pool: { min: 0, max: POOL_MAX }
    };
}

/** A Knex instance for Postgres (the scale-out backend) from a `postgres://` URL. */
export function openPostgresKnex(connectionString: string): Knex {
    // knex loads "pg" by name; missing, it would log a stack before throwing.
    requireInstalled(['pg'], 'the Postgres record store');
    return knexFactory(postgresKnexConfig(connectionString));
}
