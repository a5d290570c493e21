/**
 * Summarises a .cpuprofile as the cpu-profile benchmark does: self time by owner
 * (package) and the top functions. Usage:
 *   node dist-bench/bench/profile-summary.js FILE [--top 25] [--from-ms N] [--to-ms N] [--stages]
 * (`--from-ms`/`--to-ms`: only samples in that part of the profile, ms from its start;
 * `--stages`: self time by stage of a message's way too, profile-stages.ts).
 */
import * as Fs from 'node:fs';
import { parseArgs } from 'node:util';
import { summarizeProfile, type CpuProfile } from './cpu-profile';
import { summarizeStages } from './profile-stages';
import { markdownTable } from './report';
import { fmt } from './stats';

const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: { top: { type: 'string' }, 'from-ms': { type: 'string' }, 'to-ms': { type: 'string' }, stages: { type: 'boolean' } },
    allowPositionals: true
});
if (positionals.length !== 1) {
    console.error('usage: profile-summary FILE [--top N] [--from-ms N] [--to-ms N] [--stages]');
    process.exit(1);
}

const profile = JSON.parse(Fs.readFileSync(positionals[0], 'utf8')) as CpuProfile;
const top = Number(values.top ?? 25);
const window = { fromMs: Number(values['from-ms'] ?? 0), toMs: Number(values['to-ms'] ?? Infinity) };
const summary = summarizeProfile(profile, window);
const pct = (ms: number) => fmt(ms / summary.total * 100);
console.log(`${fmt(summary.total)} ms sampled\n`);
console.log(markdownTable({ title: 'Self time by owner', columns: ['owner', 'self ms', '%'], rows: summary.owners.slice(0, 15).map(([o, ms]) => [o, fmt(ms), pct(ms)]) }));
console.log('');
console.log(markdownTable({ title: `Top ${top} functions by self time`, columns: ['function', 'self ms', '%'], rows: summary.functions.slice(0, top).map(([f, ms]) => [`\`${f}\``, fmt(ms), pct(ms)]) }));
if (values.stages) {
    const { stages } = summarizeStages(profile, window);
    console.log('');
    console.log(markdownTable({ title: 'Self time by stage', columns: ['stage', 'self ms', '%'], rows: [...stages].filter(([, ms]) => ms > 0).map(([stage, ms]) => [stage, fmt(ms), pct(ms)]) }));
}
