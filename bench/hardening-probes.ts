/**
 * The eight probe shapes of the fourth hardening round, replayed against
 * `examples/standalone.js` of each given checkout (loopback only): a relay leading back
 * to the service, 30 readers of a 1 MiB header section, a `times` rule two instances
 * must count together, `%` and `!` local parts past the allow-list, the fault-rule
 * limit, a DELETE whose `q` holds nothing, a refused relay's log, and `/mcp` from a
 * foreign Origin. For each probe and checkout it prints what was sent, the answer the
 * attacker got and the probe's figure. Each checkout needs `npm run build`; the probes
 * run whatever that build does, so an older checkout's error answers are figures too.
 *
 *   node dist-bench/bench/hardening-probes.js [--roots /a,/b] [--only 1,5] [--smoke] [--json FILE]
 *
 * `--smoke` shrinks the sizes (the loop watched 5 s instead of 20, 5 readers of 64 KiB,
 * 110 rules instead of 1,000): the figures then only show that each probe ran.
 */

import { execFileSync } from 'node:child_process';
import * as Path from 'node:path';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres';
import { API_PROBES } from './api-probes';
import { FAULT_RULE_PROBES } from './fault-rule-probes';
import type { Probe, ProbeOutcome } from './hardening-probe';
import { BENCH_POSTGRES } from './postgres-options';
import { RELAY_PROBES } from './relay-probes';
import { runBench } from './report';
import { ROOT } from './standalone';

/** Every probe, in the order of the hardening round. */
const PROBES: Probe[] = [...RELAY_PROBES, ...API_PROBES, ...FAULT_RULE_PROBES].sort((a, b) => a.item - b.item);

/** "wt-before @ 9c8b870": the checkout's folder and commit. */
function describeCheckout(root: string): string {
    try {
        return `${Path.basename(root)} @ ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()}`;
    }
    catch {
        return Path.basename(root);
    }
}

runBench('Issue 40: the probe shapes before and after', 'hardening-probes', async (args) => {
    const size = args.smoke ? 'smoke' : 'full';
    const roots = typeof args.values.roots === 'string' ? args.values.roots.split(',').filter((r) => r !== '').map((r) => Path.resolve(r)) : [ROOT];
    const only = typeof args.values.only === 'string' ? args.values.only.split(',').map(Number) : undefined;
    const chosen = PROBES.filter((p) => !only || only.includes(p.item));
    let postgres: Promise<PostgresServer> | undefined;
    const sent = new Map<number, string>();
    const rows: string[][] = [];
    try {
        for (const root of roots) {
            const checkout = describeCheckout(root);
            for (const probe of chosen) {
                console.error(`${checkout}: probe ${probe.item}, ${probe.title} ...`);
                const began = Date.now();
                let outcome: ProbeOutcome;
                try {
                    outcome = await probe.run({ root, size, postgres: () => (postgres ??= startPostgres(BENCH_POSTGRES)) });
                }
                catch (err) {
                    outcome = { sent: probe.title, answer: `the harness failed: ${(err as Error).message.slice(0, 300)}`, figure: 'none' };
                }

                const seconds = ((Date.now() - began) / 1000).toFixed(1);
                console.error(`${checkout}: probe ${probe.item} done in ${seconds} s: ${outcome.figure}`);
                if (!sent.has(probe.item)) {
                    sent.set(probe.item, outcome.sent);
                }

                rows.push([String(probe.item), checkout, outcome.answer, outcome.figure, seconds]);
            }
        }
    }
    finally {
        await (await postgres?.catch(() => undefined))?.stop();
    }

    rows.sort((a, b) => Number(a[0]) - Number(b[0]));
    return {
        tables: [
            { title: 'The probes', columns: ['#', 'probe', 'sent'], rows: chosen.map((p) => [String(p.item), p.title, sent.get(p.item) ?? '']) },
            { title: 'What each checkout answered', columns: ['#', 'checkout', 'answer', 'figure', 's'], rows }
        ],
        targets: [],
        notes: [`sizes: ${size}; checkouts: ${roots.join(', ')}`]
    };
}, ['roots', 'only']);
