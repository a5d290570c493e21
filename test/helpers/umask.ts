/** `fn()` with the process umask set to `mask`, restored after: files made and children spawned meanwhile get it. */
export function withUmask<T>(mask: number, fn: () => T): T {
    const previous = process.umask(mask);
    try {
        return fn();
    }
    finally {
        process.umask(previous);
    }
}
