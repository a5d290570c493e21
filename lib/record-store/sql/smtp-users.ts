/**
 * The SMTP users of a Knex record store (docs/tenants.md): a name, the salted hash of its
 * password, its inbox prefix and when it was made. Read on every AUTH, so a user created or
 * deleted elsewhere (the CLI) counts at once.
 */

import type { Knex } from 'knex';
import type { SmtpUserInfo } from '../../types';
import type { RecordStore } from '../record-store';
import { cleanText } from './clean-text';
import { isUniqueViolation } from './db-errors';
import { toNumber } from './rows';
import { SMTP_USERS_TABLE } from './schema';

type SmtpUserMethods = Required<Pick<RecordStore, 'createSmtpUser' | 'findSmtpUser' | 'deleteSmtpUser' | 'listSmtpUsers'>>;

/** A row of `smtp_users` as the drivers return it. */
interface SmtpUserRow {
    name: string;
    password_hash: string;
    inbox_prefix: string;
    created_at: number | string;
}

const INFO_COLUMNS = ['name', 'inbox_prefix', 'created_at'];

function toInfo(row: Omit<SmtpUserRow, 'password_hash'>): SmtpUserInfo {
    return { name: row.name, inboxPrefix: row.inbox_prefix, createdAt: toNumber(row.created_at) };
}

/** The RecordStore's SMTP user methods on Knex; `serialize` puts a write in the store's writer line (SQLite). */
export function smtpUsers(knex: Knex, serialize: <T>(fn: () => Promise<T>) => Promise<T>): SmtpUserMethods {
    return {
        async createSmtpUser(name, passwordHash, inboxPrefix) {
            const info: SmtpUserInfo = { name: cleanText(name), inboxPrefix: cleanText(inboxPrefix), createdAt: Date.now() };
            try {
                await serialize(() => knex(SMTP_USERS_TABLE).insert({
                    name: info.name,
                    password_hash: cleanText(passwordHash),
                    inbox_prefix: info.inboxPrefix,
                    created_at: info.createdAt
                }));
            }
            catch (err) {
                if (isUniqueViolation(err)) {
                    return null;
                }

                throw err;
            }

            return info;
        },

        async findSmtpUser(name) {
            const row = await knex(SMTP_USERS_TABLE)
                .select([...INFO_COLUMNS, 'password_hash'])
                .where('name', cleanText(name))
                .first() as SmtpUserRow | undefined;
            return row ? { ...toInfo(row), passwordHash: row.password_hash } : null;
        },

        async deleteSmtpUser(name) {
            const deleted = await serialize(async () => knex(SMTP_USERS_TABLE).where('name', cleanText(name)).delete());
            return deleted > 0;
        },

        async listSmtpUsers() {
            const rows = await knex(SMTP_USERS_TABLE).select(INFO_COLUMNS).orderBy([
                { column: 'created_at', order: 'asc' },
                { column: 'id', order: 'asc' }
            ]) as SmtpUserRow[];
            return rows.map(toInfo);
        }
    };
}
