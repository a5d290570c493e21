import type { Knex } from 'knex';

/** The SMTP fault rules (docs/api.md, "Faults"). */
export const SMTP_FAULTS_TABLE = 'smtp_faults';

/**
 * One row per fault rule. `remaining` counts the commands that still get a rule with
 * `times` (NULL: until it is deleted): every instance sharing the database decrements it
 * in one UPDATE, so exactly `times` commands win, and the row goes once it reaches 0.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable(SMTP_FAULTS_TABLE, (t) => {
        t.string('id', 64).primary();
        t.string('stage', 16).notNullable();
        // The rest of the rule as JSON (match, reply, delayMs, disconnect, times, probability).
        t.text('rule').notNullable();
        t.integer('remaining').nullable();
        t.bigInteger('created_at').notNullable();
    });
}

/** Drops the table (and the rules in it). */
export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTableIfExists(SMTP_FAULTS_TABLE);
}
