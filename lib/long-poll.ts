import type { Notifier } from './notifier';
import type { RecordStore } from './record-store/record-store';
import type { ListQuery, RecordPage } from './types';

/** Spec §4.2 rule 7: the check interval starts at 500 ms ... */
export const FIRST_CHECK_MS = 500;
/** ... and doubles up to 10 s. */
export const MAX_CHECK_MS = 10_000;
/**
 * How long one inbox-version probe answers for every waiter of that inbox: bounds
 * idle store queries to about four a second per inbox, however many wait on it.
 */
export const VERSION_SHARE_MS = 250;
/**
 * How long a waiter whose deadline passes during a check waits for that check, ms:
 * mail the check is about to return is answered rather than dropped for an empty page.
 */
export const DEADLINE_GRACE_MS = 1_000;

/** How long and how to wait. */
export interface WaitOptions {
    timeoutMs: number;
    /** Aborting (client gone) releases timers and subscriptions and resolves empty. */
    signal?: AbortSignal;
}

/** Answers list queries that may wait for matching mail. */
export interface LongPoller {
    /** The first non-empty page, or an empty one at the timeout or on abort. */
    wait(query: ListQuery, options: WaitOptions): Promise<RecordPage>;
    /** Requests currently waiting (for leak checks and metrics). */
    waiterCount(): number;
}

const EMPTY: RecordPage = Object.freeze({ records: [], hasMore: false }) as RecordPage;

/** Long-polling with work shared between waiters of one inbox. */
export function createLongPoller(deps: { recordStore: RecordStore; notifier: Notifier }): LongPoller {
    const { recordStore, notifier } = deps;
    const versions = new Map<string, { at: number; value: Promise<number> }>();
    const queries = new Map<string, Promise<RecordPage>>();
    let waiting = 0;

    // One probe per inbox answers every waiter that asks within VERSION_SHARE_MS.
    const probeVersion = (inbox: string): Promise<number> => {
        const now = Date.now();
        const cached = versions.get(inbox);
        if (cached && now - cached.at < VERSION_SHARE_MS) {
            return cached.value;
        }

        const value = recordStore.inboxVersion(inbox);
        const entry = { at: now, value };
        versions.set(inbox, entry);
        const forget = () => {
            setTimeout(() => {
                if (versions.get(inbox) === entry) {
                    versions.delete(inbox);
                }
            }, VERSION_SHARE_MS).unref();
        };

        value.then(forget, () => versions.delete(inbox));
        return value;
    };

    // Waiters with the same query share the one query in flight.
    const runQuery = (query: ListQuery): Promise<RecordPage> => {
        const key = JSON.stringify(query);
        const inflight = queries.get(key);
        if (inflight) {
            return inflight;
        }

        const page = recordStore.listEmails(query).finally(() => queries.delete(key));
        queries.set(key, page);
        return page;
    };

    const wait = async (query: ListQuery, options: WaitOptions): Promise<RecordPage> => {
        const { signal } = options;
        // The timeout counts from the request, not from when the store got to its first query.
        const deadlineAt = Date.now() + options.timeoutMs;
        if (signal?.aborted) {
            return EMPTY;
        }

        // Version first: mail stored after it is seen either by the query or by a later probe.
        let baseline = await probeVersion(query.inbox);
        const first = await runQuery(query);
        if (first.records.length > 0 || signal?.aborted || Date.now() >= deadlineAt) {
            return first.records.length > 0 ? first : EMPTY;
        }

        waiting++;
        return new Promise<RecordPage>((resolve, reject) => {
            let interval = FIRST_CHECK_MS;
            let checkTimer: NodeJS.Timeout | undefined;
            let checking = false;
            let again = false;
            let done = false;
            let expired = false;

            const finish = (err: unknown, page?: RecordPage) => {
                if (done) {
                    return;
                }

                done = true;
                waiting--;
                clearTimeout(checkTimer);
                clearTimeout(deadline);
                unsubscribe();
                signal?.removeEventListener('abort', onAbort);
                if (err) {
                    reject(err);
                }
                else {
                    resolve(page ?? EMPTY);
                }
            };

            const check = async (force: boolean) => {
                if (checking) {
                    again = again || force;
                    return;
                }

                checking = true;
                try {
                    const version = await probeVersion(query.inbox);
                    if (!done && (force || version !== baseline)) {
                        baseline = version;
                        const page = await runQuery(query);
                        if (page.records.length > 0) {
                            finish(null, page);
                        }
                    }
                }
                catch (err) {
                    finish(err);
                }
                finally {
                    checking = false;
                }

                if (expired) {
                    finish(null, EMPTY);
                    return;
                }

                if (again && !done) {
                    again = false;
                    void check(true);
                }
            };

            const schedule = () => {
                checkTimer = setTimeout(() => {
                    interval = Math.min(interval * 2, MAX_CHECK_MS);
                    void check(false).then(() => {
                        if (!done) {
                            schedule();
                        }
                    });
                }, interval);
            };

            const onAbort = () => finish(null, EMPTY);
            const unsubscribe = notifier.subscribe(query.inbox, () => void check(true));
            const onDeadline = () => {
                if (!checking) {
                    finish(null, EMPTY);
                    return;
                }

                // A check is on its way (woken by mail, say): its answer decides, within a grace.
                expired = true;
                deadline = setTimeout(() => finish(null, EMPTY), DEADLINE_GRACE_MS);
            };
            let deadline = setTimeout(onDeadline, Math.max(0, deadlineAt - Date.now()));
            signal?.addEventListener('abort', onAbort, { once: true });
            schedule();
        });
    };

    return {
        wait,
        waiterCount: () => waiting
    };
}
