/** Summary statistics of a sample, in the sample's unit. */
export interface Summary {
    count: number;
    mean: number;
    p50: number;
    p99: number;
    max: number;
}

/** The q-quantile (0..1) of an ascending sample, nearest-rank; NaN when empty. */
export function quantile(sorted: number[], q: number): number {
    if (sorted.length === 0) {
        return NaN;
    }

    const rank = Math.ceil(q * sorted.length) - 1;
    return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** Count, mean, p50, p99 and max of a sample (it is sorted in place). */
export function summarize(sample: number[]): Summary {
    sample.sort((a, b) => a - b);
    const total = sample.reduce((sum, v) => sum + v, 0);
    return {
        count: sample.length,
        mean: sample.length ? total / sample.length : NaN,
        p50: quantile(sample, 0.5),
        p99: quantile(sample, 0.99),
        max: sample.length ? sample[sample.length - 1] : NaN
    };
}

/** A number for a table: three significant digits, thousands grouped, `-` for NaN. */
export function fmt(value: number, digits = 3): string {
    if (!Number.isFinite(value)) {
        return '-';
    }

    const abs = Math.abs(value);
    if (abs >= 10 ** digits) {
        return Math.round(value).toLocaleString('en-US');
    }

    return Number(value.toPrecision(digits)).toString();
}

/** High-resolution wall clock in Unix ms (comparable between processes of one machine). */
export function wallMs(): number {
    return performance.timeOrigin + performance.now();
}

/** Milliseconds since `start` (a `process.hrtime.bigint()` value). */
export function msSince(start: bigint): number {
    return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The median of a sample (not modified); NaN when empty. */
export function median(values: number[]): number {
    return quantile([...values].sort((a, b) => a - b), 0.5);
}
