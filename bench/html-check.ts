/**
 * What the HTML compatibility check costs (docs/api.md, "Checks"): a 100 KB newsletter
 * (the test fixture's body repeated) checked against the default clients. The first check
 * (the thread started, the package and its data loaded), checks of new HTML (a comment
 * with a counter makes each one new), a check answered from the kept results, the
 * caniemail package called directly in this thread for comparison, and the longest the
 * caller's event loop was held while the thread worked.
 *
 * node dist-bench/bench/html-check.js [--runs 10] [--kb 100]
 */

import * as Fs from 'node:fs';
import * as Path from 'node:path';
import { pathToFileURL } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { checkHtmlCompatibility } from '../lib/html-check/html-checker';
import { DEFAULT_CLIENT_GLOBS } from '../lib/html-check/html-check-types';

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : process.argv[at + 1]!;
}

/** The fixture newsletter with its body repeated up to `kb` KB. */
function newsletter(kb: number): string {
    const html = Fs.readFileSync(Path.join(__dirname, '..', '..', 'test', 'fixtures', 'html', 'newsletter.html'), 'utf8');
    const body = html.slice(html.indexOf('<body>') + 6, html.indexOf('</body>'));
    let repeated = '';
    while (repeated.length < kb * 1024) {
        repeated += body;
    }

    return `${html.slice(0, html.indexOf('<body>') + 6)}${repeated}</body></html>`;
}

async function ms<T>(work: () => Promise<T>): Promise<[number, T]> {
    const started = process.hrtime.bigint();
    const result = await work();
    return [Number(process.hrtime.bigint() - started) / 1e6, result];
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
    const runs = Number(option('runs', '10'));
    const html = newsletter(Number(option('kb', '100')));
    const loop = monitorEventLoopDelay({ resolution: 1 });

    const [first, result] = await ms(() => checkHtmlCompatibility(html));
    const fresh: number[] = [];
    loop.enable();
    for (let i = 0; i < runs; i++) {
        fresh.push((await ms(() => checkHtmlCompatibility(`${html}<!-- ${i} -->`)))[0]);
    }

    loop.disable();
    const kept: number[] = [];
    for (let i = 0; i < runs; i++) {
        kept.push((await ms(() => checkHtmlCompatibility(html)))[0]);
    }

    // The package alone, in this thread: what a check without a thread would hold the loop for.
    const url = pathToFileURL(require.resolve('caniemail')).href;
    const { caniemail } = await (new Function('url', 'return import(url)') as (u: string) => Promise<{ caniemail(o: object): unknown }>)(url);
    const direct: number[] = [];
    for (let i = 0; i < runs; i++) {
        const started = process.hrtime.bigint();
        caniemail({ clients: [...DEFAULT_CLIENT_GLOBS], html: `${html}<!-- ${i} -->` });
        direct.push(Number(process.hrtime.bigint() - started) / 1e6);
    }

    console.log(`HTML ${html.length} bytes, ${result.clients.length} clients, score ${result.score}, ${result.findings.length} findings; node ${process.version}, ${runs} runs`);
    console.log(`first check (thread start, package load)   ${first.toFixed(0)} ms`);
    console.log(`new HTML, median / max                     ${median(fresh).toFixed(0)} / ${Math.max(...fresh).toFixed(0)} ms`);
    console.log(`kept result, median                        ${median(kept).toFixed(3)} ms`);
    console.log(`caniemail() in this thread, median         ${median(direct).toFixed(0)} ms`);
    console.log(`caller's event loop delay while checking   max ${(loop.max / 1e6).toFixed(1)} ms, mean ${(loop.mean / 1e6).toFixed(1)} ms`);
    process.exit(0);
}

void main();
