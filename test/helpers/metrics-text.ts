import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One family of a `/metrics` answer, parsed by a Prometheus text parser. */
export interface MetricFamily {
    type: string;
    samples: Array<{ labels: Record<string, string>; value: number; buckets?: Record<string, number>; count?: number }>;
}

/** The families of a `/metrics` body by name. */
export function parseMetrics(text: string): Map<string, MetricFamily> {
    return new Map(parsePrometheusTextFormat(text).map((family) => [family.name, {
        type: family.type,
        samples: family.metrics.map((m) => ({
            labels: m.labels ?? {},
            value: Number(m.value ?? m.count),
            ...(m.buckets ? { buckets: Object.fromEntries(Object.entries(m.buckets).map(([le, n]) => [le, Number(n)])), count: Number(m.count) } : {})
        }))
    }]));
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
    const family = families.get(name);
    const sample = family?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    return sample?.value ?? 0;
}
