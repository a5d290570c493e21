/** What Playwright's JSON reporter writes, as far as the tests read it. */
export interface PlaywrightReport {
    stats: { expected: number; unexpected: number; flaky: number; skipped: number };
    suites: PlaywrightSuite[];
}

interface PlaywrightSuite {
    title: string;
    specs: Array<{ title: string; ok: boolean; tests: Array<{ annotations: Annotation[] }> }>;
    suites?: PlaywrightSuite[];
}

interface Annotation {
    type: string;
    description?: string;
}

/** One test of the report: its title, whether it passed, and the annotations it made. */
export interface PlaywrightSpec {
    title: string;
    ok: boolean;
    annotations: Annotation[];
}

/** Every spec of the report, nested suites included. */
export function specsOf(report: PlaywrightReport): PlaywrightSpec[] {
    const walk = (suite: PlaywrightSuite): PlaywrightSpec[] => [
        ...suite.specs.map((spec) => ({ title: spec.title, ok: spec.ok, annotations: spec.tests.flatMap((t) => t.annotations) })),
        ...(suite.suites ?? []).flatMap(walk)
    ];
    return report.suites.flatMap(walk);
}
