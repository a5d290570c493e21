import type { ListQuery, RecordPage } from '../types';
import type { Timed } from './timer-heap';
import type { WaitCanceller } from './wait-canceller';

/** docs/design.md: the check interval starts at 500 ms ... */
export const FIRST_CHECK_MS = 500;
/** ... and doubles up to 10 s. */
export const MAX_CHECK_MS = 10_000;

/** The page a wait answers with when nothing came. */
export const EMPTY_PAGE: RecordPage = Object.freeze({ records: [], hasMore: false }) as RecordPage;

/**
 * Order of events inside one poller. A query answers for an event only when it started
 * after it: a query already running when mail is announced may have missed that mail.
 */
export type Seq = number;

/** One list query in flight, shared by every caller that may use its answer. */
export interface SharedQuery {
    startedSeq: Seq;
    page: Promise<RecordPage>;
}

/** What ends a wait: the poller that holds it. */
export interface WaitEnder {
    /** Ends a wait: answers it and releases its timer slot, bucket, group and listeners. */
    finish(waiter: Waiter, err: unknown, page: RecordPage | undefined): void;
}

/**
 * The waiters of one inbox: one notifier subscription and one schedule of fallback
 * checks for all of them.
 */
export class Group implements Timed {
    dueAt = Infinity;
    heapIndex = -1;
    /** Waiters by query (JSON of the ListQuery): waiters with the same query share its answer. */
    readonly buckets = new Map<string, Bucket>();
    /** The last announcement of mail for this inbox heard (0: none since the group was made). */
    lastPublish: Seq = 0;
    /** Its fallback check (a version probe) is in flight. */
    probing = false;
    /** The newest probe applied to its waiters (VersionProbe.issuedSeq). */
    checkedSeq: Seq = 0;
    unsubscribe: () => void = () => undefined;

    constructor(readonly inbox: string) {}
}

/** Waiters with the same query: one store query answers them all, with one page object. */
export interface Bucket {
    key: string;
    query: ListQuery;
    group: Group;
    waiters: Set<Waiter>;
    /** The query this bucket is running: answers waiters that joined before it started. */
    running: SharedQuery | undefined;
    /** Mail was announced (or seen by a probe) while it ran: run again when it ends. */
    again: boolean;
    /**
     * The inbox version at which this query was last found empty (undefined: not known
     * since mail was last announced or seen), and when that query started. A request
     * whose own fresh probe reads the same version needs no first query: nothing was
     * stored since (a seq is never reused), so the answer is still empty.
     */
    emptyVersion: number | undefined;
    emptySeq: Seq;
}

/** One waiting request: a plain object, no closures and no timers of its own. */
export class Waiter implements Timed {
    /** Its deadline, or the end of its grace once expired (the deadline heap). */
    dueAt = 0;
    heapIndex = -1;
    /** Its own check interval (FIRST_CHECK_MS doubling to MAX_CHECK_MS) and when that check is due. */
    interval = FIRST_CHECK_MS;
    nextCheckAt: number;
    /** The deadline passed while a check that covers it was in flight: that check answers it, within a grace. */
    expired = false;
    done = false;

    constructor(
        readonly poller: WaitEnder,
        readonly bucket: Bucket,
        public baseline: number,
        readonly deadlineAt: number,
        readonly resolve: (page: RecordPage) => void,
        readonly reject: (err: unknown) => void,
        readonly signal: AbortSignal | undefined,
        readonly canceller: WaitCanceller | undefined,
        readonly joinedSeq: Seq,
        now: number
    ) {
        this.nextCheckAt = now + FIRST_CHECK_MS;
    }

    /** Sets its next check one interval after `now`, doubling the interval first when this check was its own (`due`). */
    planNextCheck(now: number, due: boolean): number {
        if (due) {
            this.interval = Math.min(this.interval * 2, MAX_CHECK_MS);
        }

        this.nextCheckAt = now + this.interval;
        return this.nextCheckAt;
    }

    /** WaitCanceller target: the client went away. */
    cancel(): void {
        this.poller.finish(this, undefined, EMPTY_PAGE);
    }

    /** AbortSignal listener (an object, so no closure per waiter). */
    handleEvent(): void {
        this.cancel();
    }
}
