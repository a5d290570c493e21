import type { Knex } from 'knex';

// Copied, not imported: a migration keeps doing what it did whatever runtime code becomes
// (docs/design.md, "Migrations are history").
const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(knex.client.config.client as string);

/** The per-inbox summary GET /v1/inboxes reads: one row per inbox that holds mail. */
export const INBOXES_TABLE = 'inboxes';
/** The index that serves the order of the list: newest first, then name. */
export const INBOXES_ORDER_INDEX = 'inboxes_recent';

// SQLite has row triggers only; it has one writer at a time, so their order cannot deadlock.
// The newest email of an inbox is deleted: the next newest is one seek on emails_inbox_order.
const SQLITE_TRIGGERS = [
    `CREATE TRIGGER inboxes_on_insert AFTER INSERT ON emails BEGIN
    INSERT INTO ${INBOXES_TABLE} (name, email_count, last_received_at) VALUES (NEW.inbox, 1, NEW.received_at)
    ON CONFLICT (name) DO UPDATE SET email_count = email_count + 1, last_received_at = max(last_received_at, excluded.last_received_at);
END`,
    `CREATE TRIGGER inboxes_on_delete AFTER DELETE ON emails BEGIN
    DELETE FROM ${INBOXES_TABLE} WHERE name = OLD.inbox AND email_count <= 1;
    UPDATE ${INBOXES_TABLE} SET email_count = email_count - 1,
        last_received_at = CASE WHEN OLD.received_at < last_received_at THEN last_received_at
            ELSE coalesce((SELECT max(received_at) FROM emails WHERE inbox = OLD.inbox), last_received_at) END
    WHERE name = OLD.inbox;
END`
];

// Postgres: statement triggers over transition tables, so a multi-row statement updates each of
// its inboxes once, and every writer locks summary rows in one order (by name, bytewise) at the
// end of its statement: concurrent batches over the same inboxes wait for each other, never
// deadlock. The delete locks first and recomputes afterwards, in a statement of its own: under
// READ COMMITTED that statement's snapshot sees every email committed before the lock was granted.
const POSTGRES_FUNCTIONS = [
    `CREATE FUNCTION inbox_capture_inboxes_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ${INBOXES_TABLE} AS i (name, email_count, last_received_at)
    SELECT inbox COLLATE "C", count(*), max(received_at) FROM new_emails GROUP BY inbox COLLATE "C" ORDER BY inbox COLLATE "C"
    ON CONFLICT (name) DO UPDATE SET email_count = i.email_count + excluded.email_count,
        last_received_at = greatest(i.last_received_at, excluded.last_received_at);
    RETURN NULL;
END $$`,
    `CREATE FUNCTION inbox_capture_inboxes_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM ${INBOXES_TABLE} WHERE name IN (SELECT inbox COLLATE "C" FROM old_emails) ORDER BY name FOR UPDATE;
    UPDATE ${INBOXES_TABLE} AS i SET email_count = i.email_count - d.n,
        last_received_at = CASE WHEN d.newest < i.last_received_at THEN i.last_received_at
            ELSE coalesce((SELECT max(e.received_at) FROM emails e WHERE e.inbox = d.inbox), i.last_received_at) END
    FROM (SELECT inbox, count(*) AS n, max(received_at) AS newest FROM old_emails GROUP BY inbox) AS d
    WHERE i.name = d.inbox COLLATE "C";
    DELETE FROM ${INBOXES_TABLE} WHERE name IN (SELECT inbox COLLATE "C" FROM old_emails) AND email_count <= 0;
    RETURN NULL;
END $$`,
    // TRUNCATE fires no delete trigger; SQLite has no TRUNCATE (its DELETE without WHERE fires the row trigger).
    `CREATE FUNCTION inbox_capture_inboxes_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM ${INBOXES_TABLE};
    RETURN NULL;
END $$`,
    `CREATE TRIGGER inboxes_on_truncate AFTER TRUNCATE ON emails FOR EACH STATEMENT EXECUTE PROCEDURE inbox_capture_inboxes_on_truncate()`,
    `CREATE TRIGGER inboxes_on_insert AFTER INSERT ON emails REFERENCING NEW TABLE AS new_emails
    FOR EACH STATEMENT EXECUTE PROCEDURE inbox_capture_inboxes_on_insert()`,
    `CREATE TRIGGER inboxes_on_delete AFTER DELETE ON emails REFERENCING OLD TABLE AS old_emails
    FOR EACH STATEMENT EXECUTE PROCEDURE inbox_capture_inboxes_on_delete()`
];

/**
 * The `inboxes` summary (name, count, newest receivedAt), kept exact by triggers on
 * `emails` whatever writes or deletes (batch writer, Knex path, CLI, bench seeding), and
 * filled from the emails already stored. Records never change inbox or receivedAt once
 * stored, so inserts and deletes are all the triggers follow.
 */
export async function up(knex: Knex): Promise<void> {
    const pg = isPostgres(knex);
    // Names compare bytewise on both backends (C collation, SQLite's BINARY), so ties on
    // time, pages and prefixes come out the same.
    await knex.raw(`CREATE TABLE ${INBOXES_TABLE} (
    name ${pg ? 'text COLLATE "C"' : 'TEXT'} NOT NULL PRIMARY KEY,
    email_count BIGINT NOT NULL,
    last_received_at BIGINT NOT NULL
)${pg ? '' : ' WITHOUT ROWID'}`);
    await knex.raw(`CREATE INDEX ${INBOXES_ORDER_INDEX} ON ${INBOXES_TABLE} (last_received_at DESC, name)`);

    // Triggers before the fill: on Postgres, CREATE TRIGGER holds off writers of emails
    // until this transaction commits, so no email slips between the fill and the triggers.
    for (const sql of pg ? POSTGRES_FUNCTIONS : SQLITE_TRIGGERS) {
        await knex.raw(sql);
    }

    await knex.raw(`INSERT INTO ${INBOXES_TABLE} (name, email_count, last_received_at)
    SELECT inbox, count(*), max(received_at) FROM emails GROUP BY inbox`);
}

/** Drops the triggers, their functions and the summary. */
export async function down(knex: Knex): Promise<void> {
    const pg = isPostgres(knex);
    for (const event of pg ? ['insert', 'delete', 'truncate'] : ['insert', 'delete']) {
        await knex.raw(`DROP TRIGGER IF EXISTS inboxes_on_${event}${pg ? ' ON emails' : ''}`);
        if (pg) {
            await knex.raw(`DROP FUNCTION IF EXISTS inbox_capture_inboxes_on_${event}()`);
        }
    }

    await knex.schema.dropTableIfExists(INBOXES_TABLE);
}
