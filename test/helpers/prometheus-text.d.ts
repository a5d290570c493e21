// The part of parse-prometheus-text-format (no types of its own) the metrics tests use.
declare module 'parse-prometheus-text-format' {
    interface Sample { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }
    interface Family { name: string; help: string; type: string; metrics: Sample[] }
    function parsePrometheusTextFormat(text: string): Family[];
    export default parsePrometheusTextFormat;
}
