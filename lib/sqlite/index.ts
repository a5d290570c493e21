/** The embedded SQLite backend's connections, as the package subpath `inbox-capture/record-store/sqlite` exports them. */

export { BUSY_TIMEOUT_MS } from './connection';
export { openSqliteKnex, sqliteKnexConfig } from './knex';
export { openSqliteReader, type SqliteReader } from './reader';
