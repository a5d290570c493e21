// How times and sizes read in the interface.

/** A Unix-ms time in the person's locale, date and time to the second. */
export function formatTime(ms: number): string {
    return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** A short time for list rows: the time of day when today, else the date. */
export function formatShortTime(ms: number, now = Date.now()): string {
    const date = new Date(ms);
    return new Date(now).toDateString() === date.toDateString()
        ? date.toLocaleTimeString(undefined, { timeStyle: 'short' })
        : date.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** Bytes as B, KB or MB (powers of 1024). */
export function formatSize(bytes: number): string {
    if (bytes < 1024) {
        return `${bytes} B`;
    }

    return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
