/** A bound on how long the service waits for a store call that may never answer. */

/** A call that did not finish in time. */
export class TimeoutError extends Error {}

/** `work`'s outcome, or a TimeoutError after `timeoutMs` (the work itself is not stopped). */
export async function within<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs);
    });

    try {
        return await Promise.race([work, deadline]);
    }
    finally {
        clearTimeout(timer);
    }
}
