import type { Notifier } from './notifier';
import type { RecordStore } from '../record-store/record-store';
import type { ListQuery, RecordPage } from '../types';
import { createProbeLimiter, type ProbeLimiter, type VersionProbe } from './probe-limiter';
import { TimerHeap } from './timer-heap';
import type { WaitCanceller } from './wait-canceller';
import { EMPTY_PAGE, Group, Waiter, type Bucket, type Seq, type SharedQuery, type WaitEnder } from './waiters';

/**
 * How long a waiter whose deadline passes during a fallback check (a version probe)
 * waits for that check, ms: mail the check is about to find is answered rather than
 * dropped for an empty page.
 */
export const DEADLINE_GRACE_MS = 1_000;
/**
 * How long a waiter whose deadline passes while its inbox's new mail is being read
 * waits for that read, ms. The mail was announced (or seen by a probe) before the
 * deadline, so the answer is known to be coming, and a loaded store can take seconds;
 * answering empty then would drop mail that arrived in time. Bounded, so a hung store
 * cannot hold requests far past their timeout.
 */
// Tuned by measurement: bench/README.md, "Tuned constants › ANNOUNCED_GRACE_MS".
export const ANNOUNCED_GRACE_MS = 10_000;

/** How long and how to wait. */
export interface WaitOptions {
    timeoutMs: number;
    /** Aborting (client gone) releases timers and subscriptions and resolves empty. */
    signal?: AbortSignal;
    /** The same as `signal`, lighter: for servers that hold many waits. */
    canceller?: WaitCanceller;
}

/** Answers list queries that may wait for matching mail. */
export interface LongPoller {
    /** The first non-empty page, or an empty one at the timeout or on abort. */
    wait(query: ListQuery, options: WaitOptions): Promise<RecordPage>;
    /** Requests currently waiting (for leak checks and metrics). */
    waiterCount(): number;
}

/**
 * Long-polling with work shared between waiters of one inbox and of one query.
 *
 * Fallback checks are made per inbox: when any waiter's check is due, one version
 * probe checks every waiter of the inbox, and each one's next check is its own
 * interval later (an interval doubles only when that waiter's own check was due). So
 * no request is checked less often than its own schedule, and an inbox is probed
 * at most as often as its youngest waiter needs.
 */
class Poller implements LongPoller, WaitEnder {
    private readonly queries = new Map<string, SharedQuery>();
    private readonly groups = new Map<string, Group>();
    private readonly deadlines = new TimerHeap<Waiter>((waiter, now) => this.expireWaiter(waiter, now));
    private readonly checks = new TimerHeap<Group>((group) => this.checkGroup(group));
    private readonly probes: ProbeLimiter;
    private seq: Seq = 0;
    private waiting = 0;

    constructor(private readonly recordStore: RecordStore, private readonly notifier: Notifier) {
        this.probes = createProbeLimiter({ recordStore, nextSeq: () => ++this.seq });
    }

    waiterCount(): number {
        return this.waiting;
    }

    wait(query: ListQuery, options: WaitOptions): Promise<RecordPage> {
        // The timeout counts from the request, not from when the store got to its first query.
        const deadlineAt = Date.now() + options.timeoutMs;
        if (this.isAborted(options)) {
            return Promise.resolve(EMPTY_PAGE);
        }

        const startSeq = ++this.seq;
        return new Promise<RecordPage>((resolve, reject) => {
            this.admit(query, options, startSeq, deadlineAt, resolve, reject).catch(reject);
        });
    }

    private isAborted(options: WaitOptions): boolean {
        return options.signal?.aborted === true || options.canceller?.aborted === true;
    }

    private async admit(query: ListQuery, options: WaitOptions, startSeq: Seq, deadlineAt: number, resolve: (page: RecordPage) => void, reject: (err: unknown) => void): Promise<void> {
        // Version first: mail stored after it is seen either by the query or by a later probe.
        const probe = this.probes.probeVersion(query.inbox);
        const baseline = await probe.value;
        const waiting = this.groups.get(query.inbox);
        if (waiting && probe.issuedSeq > waiting.checkedSeq) {
            // This probe checks the inbox's waiters too.
            this.applyProbe(waiting, probe, baseline, undefined);
        }

        const key = JSON.stringify(query);
        const known = this.groups.get(query.inbox)?.buckets.get(key);
        let firstSeq: Seq;
        if (known && known.emptyVersion === baseline && probe.issuedSeq > startSeq && known.group.lastPublish < known.emptySeq && !known.running) {
            // Waiters with this query wait already and nothing was stored since they found
            // nothing (this request's own probe says so): the first query would be empty.
            firstSeq = known.emptySeq;
        }
        else {
            const first = this.joinOrStartQuery(key, query, probe.resolvedSeq);
            const page = await first.page;
            if (page.records.length > 0) {
                resolve(page);
                return;
            }

            firstSeq = first.startedSeq;
        }

        if (this.isAborted(options) || Date.now() >= deadlineAt) {
            resolve(EMPTY_PAGE);
            return;
        }

        const group = this.openGroup(query.inbox);
        let bucket = group.buckets.get(key);
        if (!bucket) {
            bucket = { key, query, group, waiters: new Set(), running: undefined, again: false, emptyVersion: undefined, emptySeq: 0 };
            group.buckets.set(key, bucket);
        }

        if (firstSeq > bucket.emptySeq && group.lastPublish < firstSeq) {
            bucket.emptyVersion = baseline;
            bucket.emptySeq = firstSeq;
        }

        const now = Date.now();
        const waiter = new Waiter(this, bucket, baseline, deadlineAt, resolve, reject, options.signal, options.canceller, ++this.seq, now);
        bucket.waiters.add(waiter);
        this.waiting++;
        options.signal?.addEventListener('abort', waiter, { once: true });
        options.canceller?.attach(waiter);
        this.deadlines.schedule(waiter, deadlineAt);
        if (!group.probing && waiter.nextCheckAt < group.dueAt) {
            this.checks.schedule(group, waiter.nextCheckAt);
        }

        if (group.lastPublish > firstSeq) {
            // Mail was announced after the first query started: it may not have seen it.
            // (Before the group existed nobody listened; the first fallback check covers that.)
            this.queryBucket(bucket, group.lastPublish);
        }
    }

    /** The inbox's group, made and subscribed to the notifier on first use. */
    private openGroup(inbox: string): Group {
        let group = this.groups.get(inbox);
        if (!group) {
            const created = new Group(inbox);
            created.unsubscribe = this.notifier.subscribe(inbox, () => this.announceMail(created));
            this.groups.set(inbox, created);
            group = created;
        }

        return group;
    }

    /** Forgets a group nobody waits in any more: its fallback checks and its subscription end. */
    private closeGroupIfIdle(group: Group): void {
        if (group.buckets.size === 0 && this.groups.get(group.inbox) === group) {
            this.groups.delete(group.inbox);
            this.checks.remove(group);
            group.unsubscribe();
        }
    }

    /** Mail was announced for the group's inbox: notes when, and queries again for every bucket. */
    private announceMail(group: Group): void {
        const mark = ++this.seq;
        group.lastPublish = mark;
        for (const bucket of group.buckets.values()) {
            this.queryBucket(bucket, mark);
        }
    }

    /** The query in flight for `key` if it started after `notBefore`, else a new one. */
    private joinOrStartQuery(key: string, query: ListQuery, notBefore: Seq): SharedQuery {
        const inflight = this.queries.get(key);
        if (inflight && inflight.startedSeq > notBefore) {
            return inflight;
        }

        const entry: SharedQuery = { startedSeq: ++this.seq, page: this.recordStore.listEmails(query) };
        this.queries.set(key, entry);
        const forget = () => {
            if (this.queries.get(key) === entry) {
                this.queries.delete(key);
            }
        };
        entry.page.then(forget, forget);
        return entry;
    }

    /** Runs the bucket's query unless one that started after `mark` is running already. */
    private queryBucket(bucket: Bucket, mark: Seq): void {
        if (bucket.running) {
            if (bucket.running.startedSeq < mark) {
                bucket.again = true;
            }

            return;
        }

        bucket.again = false;
        bucket.emptyVersion = undefined;
        const running = this.joinOrStartQuery(bucket.key, bucket.query, mark);
        bucket.running = running;
        running.page.then(
            (page) => this.applyQueryAnswer(bucket, running, undefined, page),
            (err: unknown) => this.applyQueryAnswer(bucket, running, err, undefined)
        );
    }

    /** The bucket's query answered: answers the waiters it covers, and queries again if mail came meanwhile. */
    private applyQueryAnswer(bucket: Bucket, ran: SharedQuery, err: unknown, page: RecordPage | undefined): void {
        bucket.running = undefined;
        const found = page !== undefined && page.records.length > 0;
        let missed = false;
        for (const waiter of bucket.waiters) {
            // Deleting the current entry while iterating a Set is safe.
            if (waiter.joinedSeq > ran.startedSeq) {
                // Joined after the query started: its own first query decides what it saw.
                missed ||= found;
                continue;
            }

            if (err !== undefined) {
                this.finish(waiter, err, undefined);
            }
            else if (found) {
                this.finish(waiter, undefined, page);
            }
            else if (waiter.expired && !bucket.again) {
                this.finish(waiter, undefined, EMPTY_PAGE);
            }
        }

        if (bucket.waiters.size > 0 && (bucket.again || missed)) {
            this.queryBucket(bucket, ++this.seq);
        }
    }

    /** Ends a wait: answers it and releases its timer slot, bucket, group and listeners. */
    finish(waiter: Waiter, err: unknown, page: RecordPage | undefined): void {
        if (waiter.done) {
            return;
        }

        waiter.done = true;
        this.waiting--;
        this.deadlines.remove(waiter);
        const bucket = waiter.bucket;
        bucket.waiters.delete(waiter);
        if (bucket.waiters.size === 0 && bucket.group.buckets.get(bucket.key) === bucket) {
            bucket.group.buckets.delete(bucket.key);
            this.closeGroupIfIdle(bucket.group);
        }

        waiter.signal?.removeEventListener('abort', waiter);
        waiter.canceller?.attach(undefined);
        if (err !== undefined) {
            waiter.reject(err);
        }
        else {
            waiter.resolve(page ?? EMPTY_PAGE);
        }
    }

    /** The waiter's deadline (or grace) passed: answers it empty, or grants a grace to a check that covers it. */
    private expireWaiter(waiter: Waiter, now: number): void {
        if (waiter.expired) {
            // The grace is over: the check it waited for did not answer in time.
            this.finish(waiter, undefined, EMPTY_PAGE);
            return;
        }

        const running = waiter.bucket.running;
        if (running && running.startedSeq > waiter.joinedSeq) {
            // Its inbox's new mail is being read: that answer decides.
            waiter.expired = true;
            this.deadlines.schedule(waiter, now + ANNOUNCED_GRACE_MS);
            return;
        }

        if (waiter.bucket.group.probing) {
            // A fallback check is on its way: it may find mail, within a grace.
            waiter.expired = true;
            this.deadlines.schedule(waiter, now + DEADLINE_GRACE_MS);
            return;
        }

        this.finish(waiter, undefined, EMPTY_PAGE);
    }

    /** The fallback check of an inbox (mail stored by a process that cannot tell us): probe the version, query on a change. */
    private checkGroup(group: Group): void {
        group.probing = true;
        const probe = this.probes.probeVersion(group.inbox);
        probe.value.then((version) => {
            group.probing = false;
            this.applyProbe(group, probe, version, undefined);
        }, (err: unknown) => {
            group.probing = false;
            this.applyProbe(group, probe, undefined, err);
        });
    }

    /**
     * A probe of the inbox answered: it is a check of every waiter of the inbox (a
     * waiter's interval doubles when its own check was due), and a changed version
     * sends its bucket's query. Called for the group's own fallback probe and for the
     * probe a new request of the inbox made, so arrivals spare fallback probes.
     */
    private applyProbe(group: Group, probe: VersionProbe, version: number | undefined, err: unknown): void {
        if (this.groups.get(group.inbox) !== group) {
            // Every waiter left meanwhile.
            return;
        }

        group.checkedSeq = Math.max(group.checkedSeq, probe.issuedSeq);
        const now = Date.now();
        let next = Infinity;
        for (const bucket of group.buckets.values()) {
            let changed = false;
            for (const waiter of bucket.waiters) {
                const due = waiter.nextCheckAt <= now;
                // Expired while its inbox's new mail is read: that read decides, not a probe.
                const reading = waiter.expired && bucket.running !== undefined && bucket.running.startedSeq > waiter.joinedSeq;
                if (err !== undefined) {
                    // As before: a failed check fails the requests whose own check it was.
                    if ((due || waiter.expired) && !reading) {
                        this.finish(waiter, err, undefined);
                        continue;
                    }
                }
                else if (version !== waiter.baseline) {
                    waiter.baseline = version!;
                    changed = true;
                    if (waiter.expired) {
                        // Its probe found new mail: now that mail is being read.
                        this.deadlines.schedule(waiter, now + ANNOUNCED_GRACE_MS);
                    }
                }
                else if (waiter.expired && !reading) {
                    this.finish(waiter, undefined, EMPTY_PAGE);
                    continue;
                }

                next = Math.min(next, waiter.planNextCheck(now, due));
            }

            if (changed) {
                this.queryBucket(bucket, probe.resolvedSeq);
            }
        }

        // While its own probe is in flight the group is out of the heap; that probe's answer reschedules it.
        if (next < Infinity && !group.probing && this.groups.get(group.inbox) === group) {
            this.checks.schedule(group, next);
        }
    }
}

/** Long-polling with work shared between waiters of one inbox and of one query. */
export function createLongPoller(deps: { recordStore: RecordStore; notifier: Notifier }): LongPoller {
    return new Poller(deps.recordStore, deps.notifier);
}
