/**
 * The migrations as the package ships them: frozen history (docs/design.md, "Migrations
 * are history"). This is the one module that imports them; migrate.ts runs them.
 */

import type { Knex } from 'knex';
import * as initial from './migrations/20261121000000_initial';
import * as searchTrigrams from './migrations/20261121120000_search_trigrams';
import * as smallBlobs from './migrations/20261124000000_small_blobs';
import * as addressableIds from './migrations/20261124120000_addressable_ids';
import * as inboxSummary from './migrations/20261124200000_inbox_summary';
import * as linksCodes from './migrations/20261125000000_links_codes';
import * as shortMessageIds from './migrations/20261126000000_short_message_ids';
import * as retentionIndex from './migrations/20261128000000_retention_index';
import * as webhookDeliveries from './migrations/20261129000000_webhook_deliveries';
import * as expiryIndex from './migrations/20261130000000_expiry_index';
import * as search from './migrations/20261201000000_search';
import * as keyScopes from './migrations/20261202000000_key_scopes';
import * as smtpFaults from './migrations/20261203000000_smtp_faults';
import * as deliveryKinds from './migrations/20261203000100_delivery_kinds';
import * as rawDigest from './migrations/20261205000000_raw_digest';
import * as senderNameSearch from './migrations/20261206000000_sender_name_search';
import * as relayedMessages from './migrations/20261207000000_relayed_messages';
import * as smtpClientAuthCheck from './migrations/20261208000000_smtp_client_auth_check';
import * as smtpUsers from './migrations/20261209000000_smtp_users';
import * as seenFlag from './migrations/20261210000000_seen_flag';
import * as derivedSourceIndex from './migrations/20261211000000_derived_source_index';

/**
 * Our own migrations table, so the schema can live in a database that also holds
 * the host application's `knex_migrations` (knex adds `_lock` for its lock table).
 */
export const MIGRATIONS_TABLE_NAME = 'inbox_capture_migrations';

/** Every migration, by name; names sort in the order they apply. */
const MIGRATIONS: Record<string, Knex.Migration> = {
    '20261121000000_initial': initial,
    '20261121120000_search_trigrams': searchTrigrams,
    '20261124000000_small_blobs': smallBlobs,
    '20261124120000_addressable_ids': addressableIds,
    '20261124200000_inbox_summary': inboxSummary,
    '20261125000000_links_codes': linksCodes,
    '20261126000000_short_message_ids': shortMessageIds,
    '20261128000000_retention_index': retentionIndex,
    '20261129000000_webhook_deliveries': webhookDeliveries,
    '20261130000000_expiry_index': expiryIndex,
    '20261201000000_search': search,
    '20261202000000_key_scopes': keyScopes,
    '20261203000000_smtp_faults': smtpFaults,
    '20261203000100_delivery_kinds': deliveryKinds,
    '20261205000000_raw_digest': rawDigest,
    '20261206000000_sender_name_search': senderNameSearch,
    '20261207000000_relayed_messages': relayedMessages,
    '20261208000000_smtp_client_auth_check': smtpClientAuthCheck,
    '20261209000000_smtp_users': smtpUsers,
    '20261210000000_seen_flag': seenFlag,
    '20261211000000_derived_source_index': derivedSourceIndex
};

/**
 * Migrations imported as modules rather than read from a directory: knex resolves
 * directories against the working directory, which breaks once this package sits
 * inside someone's node_modules (or is bundled).
 */
export const migrationSource: Knex.MigrationSource<string> = {
    getMigrations() {
        return Promise.resolve(Object.keys(MIGRATIONS).sort());
    },

    getMigrationName(name) {
        return name;
    },

    getMigration(name) {
        const migration = MIGRATIONS[name];
        if (!migration) {
            return Promise.reject(new Error(`Unknown inbox-capture migration ${name}`));
        }

        return Promise.resolve(migration);
    }
};

/** The migrator configuration the store and knexfile.ts share. */
export const migratorConfig: Knex.MigratorConfig = {
    migrationSource,
    tableName: MIGRATIONS_TABLE_NAME
};
