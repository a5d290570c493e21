import type { Notifier } from './notifier';
import type { RecordStore } from './record-store/record-store';
import type { ListQuery, RecordPage } from './types';

/** Spec §4.2 rule 7: the check interval starts at 500 ms ... */
export const FIRST_CHECK_MS = 500;
/** ... and doubles up to 10 s. */
export const MAX_CHECK_MS = 10_000;
/**
 * How long one inbox-version probe answers for every waiter of that inbox after it
 * returns, ms: with the checks of an inbox's waiters made together, bounds idle store
 * queries to a few a second per inbox, however many wait on it.
 */
export const VERSION_SHARE_MS = 250;
/**
 * How long a waiter whose deadline passes during a fallback check (a version probe)
 * waits for that check, ms: mail the check is about to find is answered rather than
 * dropped for an empty page.
 */
export const DEADLINE_GRACE_MS = 1_000;
/**
 * How long a waiter whose deadline passes while its inbox's new mail is being read
 * waits for that read, ms. The mail was announced (or seen by a probe) before the
 * deadline, so the answer is known to be coming; a loaded store can take seconds (a
 * fan-out bench on SQLite, one connection behind eight ingests, took 1.7 s), and
 * answering empty then would drop mail that arrived in time. Bounded, so a hung store
 * cannot hold requests far past their timeout.
 */
export const ANNOUNCED_GRACE_MS = 10_000;
/**
 * Version probes sent to the store at once; the rest wait in the poller's own queue
 * (an inbox name each). Queued inside the store instead, hundreds of probes (10,000
 * waiters arriving over 1,000 inboxes) would each hold a query object long enough to
 * be promoted and die in the old generation (tens of MB of RSS). Not fewer: a freed
 * slot is refilled only when the event loop runs the probe's callback, so on a busy
 * loop (15 ms mean delay in a soak of 2,000 long-polls) four slots let new requests'
 * probes queue for seconds, and 4 of 6 such soaks answered a long-poll more than 2 s
 * after its timeout; with 32, none of 4 (worst 1.6 s). Postgres runs them on its pool.
 */
export const MAX_PROBES_IN_FLIGHT = 32;

/**
 * Ends a wait early, as an AbortController would, for a fraction of its memory: an
 * AbortSignal with one listener costs about 1 KB (an EventTarget), and a server may
 * hold ten thousand waits. `abort` is bound, so it can be an event listener as is.
 */
export class WaitCanceller {
    private target: { cancel(): void } | undefined = undefined;
    private done = false;

    /** True once abort() was called. */
    get aborted(): boolean {
        return this.done;
    }

    /** Ends the wait it was given to with an empty page; later calls do nothing. */
    readonly abort = (): void => {
        if (this.done) {
            return;
        }

        this.done = true;
        const target = this.target;
        this.target = undefined;
        target?.cancel();
    };

    /** For the long-poller: what abort() ends (undefined once the wait is over). */
    attach(target: { cancel(): void } | undefined): void {
        this.target = target;
    }
}

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

const EMPTY: RecordPage = Object.freeze({ records: [], hasMore: false }) as RecordPage;

/**
 * Order of events inside one poller. A query answers for an event only when it started
 * after it: a query already running when mail is announced may have missed that mail.
 */
type Seq = number;

/** One version probe of an inbox, shared while in flight and VERSION_SHARE_MS after. */
interface Probe {
    /** When it resolved, Unix ms (Infinity before). */
    at: number;
    value: Promise<number>;
    /** When it was sent: a probe sent after a request began sees everything stored before it. */
    issuedSeq: Seq;
    /** When it resolved (Infinity before): queries started after it see what it saw. */
    resolvedSeq: Seq;
}

/** One list query in flight, shared by every caller that may use its answer. */
interface SharedQuery {
    startedSeq: Seq;
    page: Promise<RecordPage>;
}

/** Something a TimerHeap wakes at `dueAt`. */
interface Timed {
    dueAt: number;
    /** Position in its heap, -1 when not in it. */
    heapIndex: number;
}

/**
 * A min-heap of items by due time, served by one timer: ten thousand waiters cost one
 * Node timer, not two each.
 */
class TimerHeap<T extends Timed> {
    private readonly items: T[] = [];
    private timer: NodeJS.Timeout | undefined = undefined;
    private armedAt = Infinity;

    constructor(private readonly onDue: (item: T, now: number) => void) {}

    /** (Re)places `item` at `dueAt`. */
    schedule(item: T, dueAt: number): void {
        this.remove(item);
        item.dueAt = dueAt;
        item.heapIndex = this.items.length;
        this.items.push(item);
        this.siftUp(item.heapIndex);
        if (this.items[0] === item) {
            this.arm();
        }
    }

    remove(item: T): void {
        const index = item.heapIndex;
        if (index < 0) {
            return;
        }

        const items = this.items;
        const last = items.pop()!;
        item.heapIndex = -1;
        if (last !== item) {
            items[index] = last;
            last.heapIndex = index;
            this.siftUp(index);
            this.siftDown(last.heapIndex);
        }

        if (items.length === 0) {
            this.arm();
        }
    }

    private readonly fire = (): void => {
        this.timer = undefined;
        this.armedAt = Infinity;
        const now = Date.now();
        while (this.items.length > 0 && this.items[0].dueAt <= now) {
            const item = this.items[0];
            this.remove(item);
            this.onDue(item, now);
        }

        this.arm();
    };

    private arm(): void {
        const top = this.items[0];
        if (!top) {
            if (this.timer) {
                clearTimeout(this.timer);
                this.timer = undefined;
                this.armedAt = Infinity;
            }

            return;
        }

        if (this.timer && this.armedAt <= top.dueAt) {
            // Fires in time; fire() arms the next one.
            return;
        }

        if (this.timer) {
            clearTimeout(this.timer);
        }

        this.armedAt = top.dueAt;
        this.timer = setTimeout(this.fire, Math.max(0, top.dueAt - Date.now()));
    }

    private siftUp(index: number): void {
        const items = this.items;
        const item = items[index];
        while (index > 0) {
            const parent = (index - 1) >> 1;
            if (items[parent].dueAt <= item.dueAt) {
                break;
            }

            items[index] = items[parent];
            items[index].heapIndex = index;
            index = parent;
        }

        items[index] = item;
        item.heapIndex = index;
    }

    private siftDown(index: number): void {
        const items = this.items;
        const item = items[index];
        const length = items.length;
        for (;;) {
            const left = 2 * index + 1;
            if (left >= length) {
                break;
            }

            const right = left + 1;
            const child = right < length && items[right].dueAt < items[left].dueAt ? right : left;
            if (items[child].dueAt >= item.dueAt) {
                break;
            }

            items[index] = items[child];
            items[index].heapIndex = index;
            index = child;
        }

        items[index] = item;
        item.heapIndex = index;
    }
}

/**
 * The waiters of one inbox: one notifier subscription and one schedule of fallback
 * checks for all of them.
 */
class Group implements Timed {
    dueAt = Infinity;
    heapIndex = -1;
    /** Waiters by query (JSON of the ListQuery): waiters with the same query share its answer. */
    readonly buckets = new Map<string, Bucket>();
    /** The last announcement of mail for this inbox heard (0: none since the group was made). */
    lastPublish: Seq = 0;
    /** Its fallback check (a version probe) is in flight. */
    probing = false;
    /** The newest probe applied to its waiters (Probe.issuedSeq). */
    checkedSeq: Seq = 0;
    unsubscribe: () => void = () => undefined;

    constructor(readonly inbox: string) {}
}

/** Waiters with the same query: one store query answers them all, with one page object. */
interface Bucket {
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
class Waiter implements Timed {
    /** Its deadline, or the end of its grace once expired (the deadline heap). */
    dueAt = 0;
    heapIndex = -1;
    /** Its own check interval (spec: 500 ms doubling to 10 s) and when that check is due. */
    interval = FIRST_CHECK_MS;
    nextCheckAt: number;
    /** The deadline passed while a check that covers it was in flight: that check answers it, within a grace. */
    expired = false;
    done = false;

    constructor(
        readonly poller: Poller,
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

    /** WaitCanceller target: the client went away. */
    cancel(): void {
        this.poller.finish(this, undefined, EMPTY);
    }

    /** AbortSignal listener (an object, so no closure per waiter). */
    handleEvent(): void {
        this.cancel();
    }
}

/**
 * Long-polling with work shared between waiters of one inbox and of one query.
 *
 * Fallback checks are made per inbox: when any waiter's check is due, one version
 * probe checks every waiter of the inbox, and each one's next check is its own
 * interval later (an interval doubles only when that waiter's own check was due). So
 * no request is checked less often than the spec's schedule, and an inbox is probed
 * at most as often as its youngest waiter needs.
 */
class Poller implements LongPoller {
    private readonly versions = new Map<string, Probe>();
    private readonly queries = new Map<string, SharedQuery>();
    private readonly groups = new Map<string, Group>();
    private readonly deadlines = new TimerHeap<Waiter>((waiter, now) => this.deadline(waiter, now));
    private readonly checks = new TimerHeap<Group>((group) => this.checkGroup(group));
    private seq: Seq = 0;
    private waiting = 0;
    private probesInFlight = 0;
    /** Probes waiting for a slot, oldest first from `probeHead`. */
    private probeQueue: Array<{ inbox: string; resolve: (version: number) => void; reject: (err: unknown) => void }> = [];
    private probeHead = 0;

    constructor(private readonly recordStore: RecordStore, private readonly notifier: Notifier) {}

    waiterCount(): number {
        return this.waiting;
    }

    wait(query: ListQuery, options: WaitOptions): Promise<RecordPage> {
        // The timeout counts from the request, not from when the store got to its first query.
        const deadlineAt = Date.now() + options.timeoutMs;
        if (this.isAborted(options)) {
            return Promise.resolve(EMPTY);
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
        const probe = this.probe(query.inbox);
        const baseline = await probe.value;
        const waiting = this.groups.get(query.inbox);
        if (waiting && probe.issuedSeq > waiting.checkedSeq) {
            // This probe checks the inbox's waiters too.
            this.checked(waiting, probe, baseline, undefined);
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
            const first = this.sharedQuery(key, query, probe.resolvedSeq);
            const page = await first.page;
            if (page.records.length > 0) {
                resolve(page);
                return;
            }

            firstSeq = first.startedSeq;
        }

        if (this.isAborted(options) || Date.now() >= deadlineAt) {
            resolve(EMPTY);
            return;
        }

        const group = this.groupOf(query.inbox);
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
            this.checkBucket(bucket, group.lastPublish);
        }
    }

    private groupOf(inbox: string): Group {
        let group = this.groups.get(inbox);
        if (!group) {
            const created = new Group(inbox);
            created.unsubscribe = this.notifier.subscribe(inbox, () => this.onPublish(created));
            this.groups.set(inbox, created);
            group = created;
        }

        return group;
    }

    private dropIfIdle(group: Group): void {
        if (group.buckets.size === 0 && this.groups.get(group.inbox) === group) {
            this.groups.delete(group.inbox);
            this.checks.remove(group);
            group.unsubscribe();
        }
    }

    private onPublish(group: Group): void {
        const mark = ++this.seq;
        group.lastPublish = mark;
        for (const bucket of group.buckets.values()) {
            this.checkBucket(bucket, mark);
        }
    }

    // One probe per inbox answers every caller while it runs and VERSION_SHARE_MS after.
    // Shared while in flight too: when the store is slow, a new probe every 250 ms would
    // pile up behind the last ones (and its answer would be no fresher).
    private probe(inbox: string): Probe {
        const cached = this.versions.get(inbox);
        if (cached && (cached.at === Infinity || Date.now() - cached.at < VERSION_SHARE_MS)) {
            return cached;
        }

        const entry: Probe = { at: Infinity, value: this.limitedProbe(inbox), issuedSeq: ++this.seq, resolvedSeq: Infinity };
        this.versions.set(inbox, entry);
        const forget = () => {
            if (this.versions.get(inbox) === entry) {
                this.versions.delete(inbox);
            }
        };

        // Registered first, so resolvedSeq is set before any caller's await resumes.
        entry.value.then(() => {
            entry.at = Date.now();
            entry.resolvedSeq = ++this.seq;
            setTimeout(forget, VERSION_SHARE_MS).unref();
        }, forget);
        return entry;
    }

    /** inboxVersion() with at most MAX_PROBES_IN_FLIGHT in the store. */
    private limitedProbe(inbox: string): Promise<number> {
        if (this.probesInFlight < MAX_PROBES_IN_FLIGHT) {
            return this.sendProbe(inbox);
        }

        return new Promise((resolve, reject) => {
            this.probeQueue.push({ inbox, resolve, reject });
        });
    }

    private sendProbe(inbox: string): Promise<number> {
        this.probesInFlight++;
        const version = this.recordStore.inboxVersion(inbox);
        const done = () => {
            this.probesInFlight--;
            const next = this.probeQueue[this.probeHead];
            if (next) {
                this.probeQueue[this.probeHead++] = undefined!;
                if (this.probeHead > 1024 && this.probeHead * 2 > this.probeQueue.length) {
                    this.probeQueue = this.probeQueue.slice(this.probeHead);
                    this.probeHead = 0;
                }

                this.sendProbe(next.inbox).then(next.resolve, next.reject);
            }
            else if (this.probeHead > 0) {
                this.probeQueue = [];
                this.probeHead = 0;
            }
        };
        version.then(done, done);
        return version;
    }

    /** The query in flight for `key` if it started after `notBefore`, else a new one. */
    private sharedQuery(key: string, query: ListQuery, notBefore: Seq): SharedQuery {
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
    private checkBucket(bucket: Bucket, mark: Seq): void {
        if (bucket.running) {
            if (bucket.running.startedSeq < mark) {
                bucket.again = true;
            }

            return;
        }

        bucket.again = false;
        bucket.emptyVersion = undefined;
        const running = this.sharedQuery(bucket.key, bucket.query, mark);
        bucket.running = running;
        running.page.then(
            (page) => this.settle(bucket, running, undefined, page),
            (err: unknown) => this.settle(bucket, running, err, undefined)
        );
    }

    private settle(bucket: Bucket, ran: SharedQuery, err: unknown, page: RecordPage | undefined): void {
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
                this.finish(waiter, undefined, EMPTY);
            }
        }

        if (bucket.waiters.size > 0 && (bucket.again || missed)) {
            this.checkBucket(bucket, ++this.seq);
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
            this.dropIfIdle(bucket.group);
        }

        waiter.signal?.removeEventListener('abort', waiter);
        waiter.canceller?.attach(undefined);
        if (err !== undefined) {
            waiter.reject(err);
        }
        else {
            waiter.resolve(page ?? EMPTY);
        }
    }

    private deadline(waiter: Waiter, now: number): void {
        if (waiter.expired) {
            // The grace is over: the check it waited for did not answer in time.
            this.finish(waiter, undefined, EMPTY);
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

        this.finish(waiter, undefined, EMPTY);
    }

    /** The fallback check of an inbox (mail stored by a process that cannot tell us): probe the version, query on a change. */
    private checkGroup(group: Group): void {
        group.probing = true;
        const probe = this.probe(group.inbox);
        probe.value.then((version) => {
            group.probing = false;
            this.checked(group, probe, version, undefined);
        }, (err: unknown) => {
            group.probing = false;
            this.checked(group, probe, undefined, err);
        });
    }

    /**
     * A probe of the inbox answered: it is a check of every waiter of the inbox (a
     * waiter's interval doubles when its own check was due), and a changed version
     * sends its bucket's query. Called for the group's own fallback probe and for the
     * probe a new request of the inbox made, so arrivals spare fallback probes.
     */
    private checked(group: Group, probe: Probe, version: number | undefined, err: unknown): void {
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
                    this.finish(waiter, undefined, EMPTY);
                    continue;
                }

                if (due) {
                    waiter.interval = Math.min(waiter.interval * 2, MAX_CHECK_MS);
                }

                waiter.nextCheckAt = now + waiter.interval;
                next = Math.min(next, waiter.nextCheckAt);
            }

            if (changed) {
                this.checkBucket(bucket, probe.resolvedSeq);
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
