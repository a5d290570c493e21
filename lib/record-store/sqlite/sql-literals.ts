/**
 * Values written into SQL text as literals, for the write tail of a small batch
 * (sqlite-batch-writer.ts): the tail runs as one multi-statement exec, which binds
 * nothing, so its values travel in the text (docs/design.md, "SQLite connections").
 */

/**
 * Most characters of a write tail sent as one SQL text; a larger batch binds its
 * values to the prepared statements instead. A bound on text built per batch (a blob
 * doubles as hex), far above a small message's few kilobytes.
 */
export const MAX_TAIL_CHARS = 256 * 1024;

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

/** `value` as JSON in an SQL string literal (JSON.stringify escapes NUL, so it always fits). */
export function sqlJson(value: unknown): string {
    return sqlString(JSON.stringify(value))!;
}

/** `bytes` as an SQL blob literal. */
export function sqlBlob(bytes: Uint8Array): string {
    return `X'${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}'`;
}
