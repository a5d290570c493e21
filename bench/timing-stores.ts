import type { BlobStore } from '../lib/blob-store/blob-store';
import type { RecordStore } from '../lib/record-store/record-store';
import { summarize, type Summary } from './stats';

/** Wall time of every call of the wrapped methods, ms, by `store.method`. */
export interface CallTimes {
    record: RecordStore;
    blob: BlobStore;
    /** Summaries per method since the last reset. */
    summary(): Record<string, Summary>;
    reset(): void;
}

/**
 * Wraps real stores so that every method call's wall time (from call to settle,
 * waiting for locks and the thread pool included) is recorded: where an ingest's
 * time goes, without touching the code under test.
 */
export function timingStores(record: RecordStore, blob: BlobStore): CallTimes {
    let samples: Record<string, number[]> = {};
    const wrap = <T extends object>(target: T, label: string): T => new Proxy(target, {
        get(inner, property, receiver) {
            const value = Reflect.get(inner, property, receiver) as unknown;
            if (typeof value !== 'function' || typeof property !== 'string') {
                return value;
            }

            return (...args: unknown[]) => {
                const start = process.hrtime.bigint();
                const result = (value as (...a: unknown[]) => unknown).apply(inner, args);
                if (result instanceof Promise) {
                    const key = `${label}.${property}`;
                    const record = () => {
                        (samples[key] ??= []).push(Number(process.hrtime.bigint() - start) / 1e6);
                    };

                    result.then(record, record);
                }

                return result;
            };
        }
    });

    return {
        record: wrap(record, 'recordStore'),
        blob: wrap(blob, 'blobStore'),
        summary: () => Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarize([...v])])),
        reset() {
            samples = {};
        }
    };
}
