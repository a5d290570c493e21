import type { RecordStore } from '../lib/record-store/record-store';

/** A real record store whose method calls are counted (each call is one store query or transaction). */
export interface CountingStore {
    store: RecordStore;
    /** Calls per method since the last reset. */
    counts(): Record<string, number>;
    /** Total calls since the last reset. */
    total(): number;
    reset(): void;
}

/** Wraps `inner` so that every method call is counted, then passed on unchanged. */
export function countingStore(inner: RecordStore): CountingStore {
    let counts: Record<string, number> = {};
    const store = new Proxy(inner, {
        get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver) as unknown;
            if (typeof value !== 'function' || typeof property !== 'string') {
                return value;
            }

            return (...args: unknown[]) => {
                counts[property] = (counts[property] ?? 0) + 1;
                return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
        }
    });

    return {
        store,
        counts: () => ({ ...counts }),
        total: () => Object.values(counts).reduce((a, b) => a + b, 0),
        reset() {
            counts = {};
        }
    };
}
