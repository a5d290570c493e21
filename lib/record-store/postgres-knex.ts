import knexFactory, { type Knex } from 'knex';

/**
 * Connections per process. node-postgres' own default; each ingest holds one for
 * a short transaction and long-polls share version probes, so this is rarely the
 * limit. Several processes multiply it: keep the total under max_connections.
 */
const POOL_MAX = 10;

/** The Knex configuration openPostgresKnex() uses (also read by knexfile.ts). */
export function postgresKnexConfig(connectionString: string): Knex.Config {
    return {
        client: 'pg',
        connection: {
            connectionString,
            application_name: 'inbox-capture'
        },
        pool: { min: 0, max: POOL_MAX }
    };
}

/** A Knex instance for Postgres (the scale-out backend) from a `postgres://` URL. */
export function openPostgresKnex(connectionString: string): Knex {
    return knexFactory(postgresKnexConfig(connectionString));
}
