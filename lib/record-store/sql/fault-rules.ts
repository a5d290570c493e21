/**
 * The fault rules of a Knex record store (docs/api.md, "Faults"): kept as rows so that every
 * instance sharing the database sees them, with a rule's remaining uses counted by one
 * conditional UPDATE, as the webhook outbox claims its deliveries.
 */

import type { Knex } from 'knex';
import type { FaultRule, FaultStage } from '../../faults/fault-rule';
import type { RecordStore } from '../record-store';
import { isPostgres } from './dialect';
import { toNumber } from './rows';
import { IN_LIST_CHUNK } from './save-statements';
import { SMTP_FAULTS_TABLE } from './schema';

interface FaultRow {
    id: string;
    stage: string;
    rule: string;
    remaining: number | string | null;
    created_at: number | string;
}

type FaultMethods = Required<Pick<RecordStore, 'saveFaultRule' | 'listFaultRules' | 'deleteFaultRules' | 'claimFaultRule'>>;

function toRule(row: FaultRow): FaultRule {
    const rest = JSON.parse(row.rule) as Omit<FaultRule, 'id' | 'stage' | 'remaining' | 'createdAt'>;
    return {
        id: row.id,
        stage: row.stage as FaultStage,
        ...rest,
        remaining: row.remaining === null ? null : toNumber(row.remaining),
        createdAt: toNumber(row.created_at)
    };
}

/** The RecordStore's fault methods on Knex; `write` is the store's write transaction (SQLite's writer line). */
export function faultRules(knex: Knex, write: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>): FaultMethods {
    const table = SMTP_FAULTS_TABLE;
    const pg = isPostgres(knex);
    return {
        async saveFaultRule(rule, admit) {
            const { id, stage, remaining, createdAt, ...rest } = rule;
            await write(async (trx) => {
                if (admit) {
                    // SQLite has one writer; on Postgres this lock makes concurrent creates take
                    // turns (it lets reads and claims by) so the count they check stays true.
                    if (pg) {
                        await trx.raw(`LOCK TABLE ${table} IN SHARE ROW EXCLUSIVE MODE`);
                    }

                    admit((await trx(table).select('id', 'stage', 'rule', 'remaining', 'created_at') as FaultRow[]).map(toRule));
                }

                await trx(table).insert({ id, stage, rule: JSON.stringify(rest), remaining, created_at: createdAt });
            });
        },

        async listFaultRules() {
            const rows = await knex(table).select('id', 'stage', 'rule', 'remaining', 'created_at').orderBy([{ column: 'created_at' }, { column: 'id' }]) as FaultRow[];
            return rows.map(toRule);
        },

        async deleteFaultRules(ids) {
            if (ids === undefined) {
                return write((trx) => trx(table).delete());
            }

            let deleted = 0;
            for (let i = 0; i < ids.length; i += IN_LIST_CHUNK) {
                const chunk = ids.slice(i, i + IN_LIST_CHUNK);
                deleted += await write((trx) => trx(table).whereIn('id', chunk).delete());
            }

            return deleted;
        },

        async claimFaultRule(id) {
            return write(async (trx) => {
                // Postgres re-checks `remaining > 0` on a row another transaction just
                // updated, and SQLite has one writer: no use is ever counted twice.
                const claimed = await trx(table).where('id', id).where('remaining', '>', 0).decrement('remaining', 1);
                if (claimed === 0) {
                    return null;
                }

                const row = await trx(table).select('remaining').where('id', id).first() as { remaining: number | string } | undefined;
                const remaining = row ? toNumber(row.remaining) : 0;
                if (remaining <= 0) {
                    await trx(table).where('id', id).delete();
                }

                return Math.max(0, remaining);
            });
        }
    };
}
