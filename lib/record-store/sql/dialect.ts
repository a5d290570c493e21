/** Which database a Knex instance talks to: the record store supports two. */

import type { Knex } from 'knex';

/** Whether `knex` is a Postgres client (knex names it 'pg', 'postgres' or 'postgresql'). */
export function isPostgres(knex: Knex): boolean {
    const client = knex.client.config.client;
    return client === 'pg' || client === 'postgres' || client === 'postgresql';
}
