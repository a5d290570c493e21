/**
 * The names and shapes of the schema that runtime code relies on, in one place. The
 * migrations that created them keep their own copies: they are frozen history and import
 * nothing from here, nor does anything import them but migration-source.ts (docs/design.md,
 * "Migrations are history"). test/lib/record-store/sql/schema.ts checks every name here
 * against a migrated database, on SQLite and Postgres.
 */

/** One row per stored copy of a message. */
export const EMAILS_TABLE = 'emails';

/** One row per blob an email references (raw message, attachments): the orphan check's index. */
export const EMAIL_BLOBS_TABLE = 'email_blobs';

/** API keys, by name, with their SHA-256 hashes. */
export const API_KEYS_TABLE = 'api_keys';

/** The SMTP users kept in the store (docs/tenants.md). */
export const SMTP_USERS_TABLE = 'smtp_users';

/** SQLite: small blobs beside the records, committed with them (docs/design.md, "The parts"). */
export const BLOBS_TABLE = 'blobs';

/** The per-inbox summary GET /v1/inboxes reads, kept exact by triggers on `emails`. */
export const INBOXES_TABLE = 'inboxes';

/**
 * The outbox of deliveries, written with the emails they are for: webhook POSTs and relays
 * over SMTP (its `kind`); `url` holds the target, a webhook's URL or the relay's name.
 * Named for its first kind.
 */
export const DELIVERIES_TABLE = 'webhook_deliveries';

/** The SMTP fault rules, with the count of uses a rule with `times` has left. */
export const SMTP_FAULTS_TABLE = 'smtp_faults';

/** What auto-relay sent: a row per (message, recipient), so a copy that comes back is not sent again. */
export const RELAYED_MESSAGES_TABLE = 'relayed_messages';

/** The columns of `emails` a record is read from (rows.ts maps them). */
export const EMAIL_COLUMNS = [
    'seq', 'message_id', 'source_id', 'inbox', 'sender', 'recipient', 'subject',
    'body', 'html_body', 'received_at', 'raw_key', 'raw_size', 'raw_sha256', 'attachments', 'links', 'codes', 'tags', 'sender_name',
    'client_address', 'client_helo', 'mail_from', 'seen'
];

/**
 * The folded texts of an email that searches compare (docs/design.md, "Search"), besides
 * `sender_folded` and `subject_folded`: NULL in rows stored before them until migrate()'s
 * back-fill (backfill-search.ts) fills them.
 */
export const SEARCH_TEXT_COLUMNS = ['recipient_folded', 'filenames_folded', 'body_folded'] as const;

/** SQLite: the FTS5 table (trigram, contentless, detail=none), one document per email, rowid = seq. */
export const SEARCH_INDEX_TABLE = 'email_search';

/**
 * SQLite: an email's document in SEARCH_INDEX_TABLE. The inbox between U+0001 and U+0002
 * comes first, so a query names its inbox with trigrams no text holds (foldForSearch()
 * turns those characters into U+FFFD): the index then answers with the inbox's candidates,
 * not the whole store's. The texts follow, each apart (U+0003), the display name last.
 */
export const SQLITE_DOCUMENT_SQL = "char(1) || inbox || char(2) || sender_folded || char(3) || subject_folded || char(3) || coalesce(recipient_folded, '') || char(3) || coalesce(filenames_folded, '') || char(3) || coalesce(body_folded, '') || char(3) || sender_name_folded";

/** Postgres: the GIN index of (inbox, body_folded) with pg_trgm. */
export const POSTGRES_SEARCH_INDEX = 'emails_search_trgm';

/** The columns of `api_keys` a key's info is read from. */
export const KEY_COLUMNS = ['name', 'created_at', 'revoked_at', 'inbox_prefix', 'read_only'];

/**
 * Characters of `message_id` the Postgres list index (emails_inbox_order) holds: at most
 * 1 KiB of UTF-8, under a btree entry's limit. The list query must order by exactly
 * `left(message_id, ORDER_PREFIX_CHARS)` to read that index in order.
 */
export const ORDER_PREFIX_CHARS = 256;

/**
 * The expression Postgres' retention index (emails_expiry) is on: the sweep's query must
 * spell it the same to use the index, and no list query does, so lists never pick it.
 */
export const EXPIRY_KEY_SQL = '(received_at + 0)';
