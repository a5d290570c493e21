import { abortReason, WaitTimeoutError } from './errors';
import type { Email, EmailPage, ListEmailsQuery, RequestOptions, WaitForEmailOptions } from './types';

/** The server's longest long-poll, seconds (docs/api.md: `timeout` 1 to 28). */
export const MAX_LONG_POLL_SECONDS = 28;

/** `waitForEmail()`'s default total wait, ms. */
export const DEFAULT_WAIT_MS = 60_000;

/** The longest `timeoutMs`, ms (about 24.8 days): timers fire at once beyond a signed 32-bit delay. */
export const MAX_WAIT_MS = 2 ** 31 - 1;

/**
 * The newest email matching `options`, chaining server long-polls of at most
 * `longPollSeconds` each until one answers with an email; rejects with
 * WaitTimeoutError after `timeoutMs`, and with the signal's reason at once on abort.
 */
export async function waitForEmail(
    listEmails: (query: ListEmailsQuery, options: RequestOptions) => Promise<EmailPage>,
    options: WaitForEmailOptions,
    longPollSeconds: number
): Promise<Email> {
    const { timeoutMs = DEFAULT_WAIT_MS, signal, inbox, sender, subject, q, hasAttachments, receivedAfter } = options;
    if (!(timeoutMs >= 0 && timeoutMs <= MAX_WAIT_MS)) {
        throw new TypeError(`waitForEmail: timeoutMs must be a number of milliseconds from 0 to ${MAX_WAIT_MS}`);
    }

    if (signal?.aborted) {
        throw abortReason(signal);
    }

    // One controller ends the request in flight on the caller's abort or on the deadline.
    const controller = new AbortController();
    const deadline = Date.now() + timeoutMs;
    let timedOut = false;
    let rejectNow: (reason: unknown) => void = () => undefined;
    const stopped = new Promise<never>((_resolve, reject) => {
        rejectNow = reject;
    });
    const onAbort = () => {
        rejectNow(abortReason(signal!));
        controller.abort();
    };
    const timer = setTimeout(() => {
        timedOut = true;
        rejectNow(new WaitTimeoutError(timeoutMs));
        controller.abort();
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });

    const poll = async (): Promise<Email> => {
        for (;;) {
            const remaining = deadline - Date.now();
            if (remaining <= 0) {
                throw new WaitTimeoutError(timeoutMs);
            }

            // Whole seconds, at least 1: the deadline timer ends a poll that would outlast it.
            const seconds = Math.min(longPollSeconds, Math.max(1, Math.ceil(remaining / 1000)));
            const query: ListEmailsQuery = { inbox, sender, subject, q, hasAttachments, receivedAfter, limit: 1, wait: true, timeout: seconds };
            const page = await listEmails(query, { signal: controller.signal });
            if (page.emails.length > 0) {
                return page.emails[0];
            }
        }
    };

    try {
        // The race settles on an abort or the deadline even if a fetch is slow to notice it.
        return await Promise.race([poll(), stopped]);
    }
    catch (err) {
        if (signal?.aborted) {
            throw abortReason(signal);
        }

        throw timedOut ? new WaitTimeoutError(timeoutMs) : err;
    }
    finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
    }
}
