/**
 * Values written into SQL text as literals, for the write tail of a small batch
 * (sqlite-batch-writer.ts): the tail runs as one multi-statement exec, which binds
 * nothing, so its values travel in the text (docs/design.md, "SQLite connections").
 */

import { isUtf8 } from 'node:buffer';

/**
 * Most characters of a write tail sent as one SQL text; a larger batch binds its
 * values to the prepared statements instead. A bound on text built per batch (a blob
 * doubles as hex), far above a small message's few kilobytes.
 */
export const MAX_TAIL_CHARS = 1024 * 1024;

/**
 * `text` as an SQL string literal, or undefined when it holds a NUL: sqlite3_exec()
 * reads its text up to the first NUL, so such a value must be bound instead.
 */
export function sqlString(text: string): string | undefined {
    if (text.includes('\u0000')) {
        return undefined;
    }

    return `'${text.replaceAll('\'', '\'\'')}'`;
}

/**
 * A row's value as an SQL literal: NULL, a finite number, or a string (sqlString());
 * undefined when it cannot be one (a NUL, a lone surrogate, which a bound value would
 * carry differently, or another type), and the row is then bound instead.
 */
export function sqlValue(value: unknown): string | undefined {
    if (value === null || value === undefined) {
        return 'NULL';
    }

    if (typeof value === 'number') {
        return Number.isFinite(value) ? String(value) : undefined;
    }

    return typeof value === 'string' && (value as WellFormedString).isWellFormed() ? sqlString(value) : undefined;
}

// String.prototype.isWellFormed() (Node 20), which the compiler's library does not declare yet.
type WellFormedString = string & { isWellFormed(): boolean };

/** `value` as JSON in an SQL string literal (JSON.stringify escapes NUL, so it always fits). */
export function sqlJson(value: unknown): string {
    return sqlString(JSON.stringify(value))!;
}

/**
 * `bytes` as an SQL blob expression: text cast to a blob when the bytes are UTF-8 without
 * a NUL (a raw message mostly is: half the characters of hex, and no hex to write or read;
 * SQLite casts a text to the bytes of its UTF-8), else a hex literal.
 */
export function sqlBlob(bytes: Uint8Array): string {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (isUtf8(buffer) && !buffer.includes(0)) {
        return `CAST(${sqlString(buffer.toString('utf8'))!} AS BLOB)`;
    }

    return `X'${buffer.toString('hex')}'`;
}
