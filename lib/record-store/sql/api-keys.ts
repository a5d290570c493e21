/**
 * The API keys of a Knex record store (docs/operations.md, "API keys"): only a key's hash is
 * kept, with its name, when it was made and revoked, and its scope.
 */

import type { Knex } from 'knex';
import { InboxCaptureError } from '../../errors';
import type { ApiKeyInfo } from '../../types';
import type { RecordStore } from '../record-store';
import { cleanText } from './clean-text';
import { isUniqueViolation } from './db-errors';
import { toKeyInfo, type KeyRow } from './rows';
import { API_KEYS_TABLE, KEY_COLUMNS } from './schema';

type KeyMethods = Pick<RecordStore, 'createKey' | 'findActiveKeyByHash' | 'revokeKey' | 'listKeys'>;

/** The RecordStore's key methods on Knex; `serialize` puts a write in the store's writer line (SQLite). */
export function apiKeys(knex: Knex, serialize: <T>(fn: () => Promise<T>) => Promise<T>): KeyMethods {
    return {
        async createKey(name, hashHex, scope = {}) {
            const info: ApiKeyInfo = {
                name: cleanText(name),
                createdAt: Date.now(),
                revokedAt: null,
                inboxPrefix: scope.inboxPrefix ? cleanText(scope.inboxPrefix) : null,
                readOnly: scope.readOnly === true
            };
            try {
                await serialize(() => knex(API_KEYS_TABLE).insert({
                    name: info.name,
                    key_hash: cleanText(hashHex),
                    created_at: info.createdAt,
                    inbox_prefix: info.inboxPrefix,
                    read_only: info.readOnly
                }));
            }
            catch (err) {
                if (isUniqueViolation(err) && await knex(API_KEYS_TABLE).select('name').where('name', info.name).first()) {
                    throw new InboxCaptureError('DUPLICATE_KEY', `An API key named ${JSON.stringify(info.name)} already exists`, { cause: err });
                }

                throw err;
            }

            return info;
        },

        async findActiveKeyByHash(hashHex) {
            const row = await knex(API_KEYS_TABLE)
                .select(KEY_COLUMNS)
                .where('key_hash', cleanText(hashHex))
                .whereNull('revoked_at')
                .first() as KeyRow | undefined;
            return row ? toKeyInfo(row) : null;
        },

        async revokeKey(name) {
            const updated = await serialize(async () => knex(API_KEYS_TABLE)
                .where('name', cleanText(name))
                .whereNull('revoked_at')
                .update({ revoked_at: Date.now() }));
            return updated > 0;
        },

        async listKeys() {
            const rows = await knex(API_KEYS_TABLE).select(KEY_COLUMNS).orderBy([
                { column: 'created_at', order: 'asc' },
                { column: 'id', order: 'asc' }
            ]) as KeyRow[];
            return rows.map(toKeyInfo);
        }
    };
}
