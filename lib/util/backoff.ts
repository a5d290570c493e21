/** Exponential backoff: the one retry schedule of the code base. */

/** How waits grow. */
export interface BackoffOptions {
    /** Wait before the first retry, ms; doubles per retry. */
    firstMs: number;
    /** Longest wait, ms (default: no cap). */
    maxMs?: number;
    /**
     * Pick each wait at random from the upper half of its step, so that writers that
     * failed together do not retry together (default false).
     */
    jitter?: boolean;
}

/** How a failing call is retried. */
export interface RetryOptions extends BackoffOptions {
    /** Retries after the first attempt; the last failure is thrown after them. */
    retries: number;
    /** Whether a failure is worth another attempt (default: every failure). */
    retryable?: (err: unknown) => boolean;
    /** Told of each failure that is retried, before the wait. */
    onRetry?: (err: unknown, retry: number) => void;
}

/** The wait before retry number `retry` (0 for the first), ms. */
export function backoffMs(retry: number, options: BackoffOptions): number {
    const step = Math.min(options.maxMs ?? Infinity, options.firstMs * 2 ** retry);
    return options.jitter ? step / 2 + Math.random() * step / 2 : step;
}

/** Calls `fn` until it succeeds, waiting longer after each retryable failure. */
export async function retryWithBackoff<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
    for (let retry = 0; ; retry++) {
        try {
            return await fn();
        }
        catch (err) {
            if (retry >= options.retries || (options.retryable && !options.retryable(err))) {
                throw err;
            }

            options.onRetry?.(err, retry);
            await sleep(backoffMs(retry, options));
        }
    }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
