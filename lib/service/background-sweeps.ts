/** The sweeps a service runs on its own while it is started: retention and orphan blobs. */

import { startPeriodicTask, type PeriodicTask } from '../util/periodic-task';
import type { RetentionOptions, RetentionPolicy } from './retention';

/** The two passes the sweeps run (the service, InboxCapture in inbox-capture.ts, has both). */
export interface SweptService {
    pruneEmails(policy: RetentionPolicy, options: { signal: AbortSignal }): Promise<number>;
    sweepOrphanBlobs(options: { graceMs?: number; signal: AbortSignal }): Promise<number>;
}

/** The periodic orphan-blob sweep (what `inbox-capture gc` does once). */
export interface OrphanSweepOptions {
    /** Pause between the end of one sweep and the start of the next, ms. */
    intervalMs: number;
    /** Orphans younger than this are left (default ORPHAN_GRACE_MS, 10 min). */
    graceMs?: number;
}

/** Which sweeps run; each is off when absent. */
export interface BackgroundSweepOptions {
    retention?: RetentionOptions;
    orphanSweep?: OrphanSweepOptions;
}

/** The sweeps as the service settled them (service-options.ts): the retention interval is set. */
export interface SweepSettings {
    retention?: RetentionOptions & { intervalMs: number };
    orphanSweep?: OrphanSweepOptions;
}

/**
 * Starts each configured sweep: a first pass at once, then one per interval, failures
 * logged. Returns the stopper, which ends passes under way after their current batch
 * and waits for them.
 */
export function startBackgroundSweeps(
    capture: SweptService,
    options: SweepSettings,
    log: (message: string, error?: unknown) => void
): () => Promise<void> {
    const tasks: PeriodicTask[] = [];
    const { retention, orphanSweep } = options;
    if (retention && (retention.maxAgeMs !== undefined || retention.maxPerInbox !== undefined)) {
        const { maxAgeMs, maxPerInbox } = retention;
        tasks.push(startPeriodicTask({
            run: (signal) => capture.pruneEmails({ maxAgeMs, maxPerInbox }, { signal }),
            intervalMs: retention.intervalMs,
            onError: (err) => log('retention pass failed; the next one tries again', err)
        }));
    }

    if (orphanSweep) {
        tasks.push(startPeriodicTask({
            run: (signal) => capture.sweepOrphanBlobs({ graceMs: orphanSweep.graceMs, signal }),
            intervalMs: orphanSweep.intervalMs,
            onError: (err) => log('orphan blob sweep failed; the next one tries again', err)
        }));
    }

    return async () => {
        await Promise.all(tasks.map((task) => task.stop()));
    };
}
