/** The string `code` of a Node, driver or database error (`ENOENT`, `SQLITE_BUSY`, `23505`), if it has one. */
export function errorCode(err: unknown): string | undefined {
    const code = (err as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : undefined;
}
