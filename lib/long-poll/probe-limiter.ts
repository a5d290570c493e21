import { createConcurrencyLimit } from '../util/concurrency-limit';
import type { RecordStore } from '../record-store/record-store';

/**
 * How long one inbox-version probe answers for every waiter of that inbox after it
 * returns, ms: with the checks of an inbox's waiters made together, bounds idle store
 * queries to a few a second per inbox, however many wait on it.
 */
export const VERSION_SHARE_MS = 250;
/**
 * Version probes sent to the store at once; the rest wait in the limiter's line. Queued
 * inside the store instead, each would hold a query object long enough to be promoted
 * and die in the old generation; fewer slots let probes queue for seconds on a busy
 * event loop, since a slot is refilled only when the loop runs the probe's callback.
 */
// Tuned by measurement: bench/README.md, "Tuned constants › MAX_PROBES_IN_FLIGHT".
export const MAX_PROBES_IN_FLIGHT = 32;

/** One version probe of an inbox, shared while in flight and VERSION_SHARE_MS after. */
export interface VersionProbe {
    /** When it resolved, Unix ms (Infinity before). */
    at: number;
    /** The inbox's version (RecordStore.inboxVersion()). */
    value: Promise<number>;
    /** When it was sent, in the caller's order of events: a probe sent after a request began sees everything stored before it. */
    issuedSeq: number;
    /** When it resolved, in that order (Infinity before): queries started after it see what it saw. */
    resolvedSeq: number;
}

/** Version probes of a record store, one per inbox at a time. */
export interface ProbeLimiter {
    /** Probes the inbox's version, or joins the probe of it in flight or resolved less than VERSION_SHARE_MS ago. */
    probeVersion(inbox: string): VersionProbe;
}

/** Version probes shared per inbox, at most MAX_PROBES_IN_FLIGHT at once; `nextSeq` stamps when each is sent and resolves. */
export function createProbeLimiter(deps: { recordStore: Pick<RecordStore, 'inboxVersion'>; nextSeq: () => number }): ProbeLimiter {
    const { recordStore, nextSeq } = deps;
    const probes = new Map<string, VersionProbe>();
    const limit = createConcurrencyLimit(MAX_PROBES_IN_FLIGHT);

    return {
        // Shared while in flight too: when the store is slow, a new probe every
        // VERSION_SHARE_MS would pile up behind the last ones (and answer no fresher).
        probeVersion(inbox: string): VersionProbe {
            const cached = probes.get(inbox);
            if (cached && (cached.at === Infinity || Date.now() - cached.at < VERSION_SHARE_MS)) {
                return cached;
            }

            const probe: VersionProbe = { at: Infinity, value: limit.run(() => recordStore.inboxVersion(inbox)), issuedSeq: nextSeq(), resolvedSeq: Infinity };
            probes.set(inbox, probe);
            const forget = () => {
                if (probes.get(inbox) === probe) {
                    probes.delete(inbox);
                }
            };

            // Registered first, so resolvedSeq is set before any caller's await resumes.
            probe.value.then(() => {
                probe.at = Date.now();
                probe.resolvedSeq = nextSeq();
                setTimeout(forget, VERSION_SHARE_MS).unref();
            }, forget);
            return probe;
        }
    };
}
