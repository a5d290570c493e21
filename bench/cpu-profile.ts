import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { samplesInWindow } from './profile-samples';
import { STAGES, summarizeStages, type Stage } from './profile-stages';
import { PROFILE_NAMES, profiles, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table } from './report';
import { runLoad } from './smtp-load';
import { ROOT, startStandalone } from './standalone';
import { fmt } from './stats';
import { cpuBetween, threadTicks } from './thread-ticks';
import { tempDir } from '../test/helpers/temp-dir';

/** Seconds of load while the profiler runs. */
const LOAD_MS = 10_000;
/** SMTP sessions of the load (the issue's largest C). */
const SESSIONS = 16;
/** Rows of the function table. */
const TOP = 25;

interface CpuProfileNode {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
}

export interface CpuProfile {
    nodes: CpuProfileNode[];
    samples: number[];
    timeDeltas: number[];
}

/** Part of a profile, ms after the profile started. */
export interface ProfileWindow {
    fromMs: number;
    toMs: number;
}

/** Where a frame's code lives: a package, node's internals, our own code, or V8's pseudo-frames. */
function ownerOf(url: string, name: string): string {
    if (!url) {
        return name.startsWith('(') ? name : '(native)';
    }

    const inModules = url.lastIndexOf('node_modules/');
    if (inModules !== -1) {
        const rest = url.slice(inModules + 'node_modules/'.length).split('/');
        return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    }

    if (url.startsWith('node:')) {
        return 'node (internals)';
    }

    const rel = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
    return rel.startsWith('dist/') ? `inbox-capture ${rel.split('/').slice(1, -1).join('/')}` : rel;
}

/** Self time per function and per owner (package), ms, from a .cpuprofile (only samples inside `window`). */
export function summarizeProfile(profile: CpuProfile, window: ProfileWindow = { fromMs: 0, toMs: Infinity }): { total: number; functions: Array<[string, number]>; owners: Array<[string, number]> } {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<number, number>();
    let total = 0;
    for (const { node, us } of samplesInWindow(profile, window)) {
        self.set(node, (self.get(node) ?? 0) + us);
        total += us;
    }

    const functions = new Map<string, number>();
    const owners = new Map<string, number>();
    for (const [id, us] of self) {
        const node = byId.get(id)!;
        const { functionName, url, lineNumber } = node.callFrame;
        const name = functionName || '(anonymous)';
        const where = url ? `${url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '')}:${lineNumber + 1}` : '';
        const key = where ? `${name} ${where}` : name;
        functions.set(key, (functions.get(key) ?? 0) + us / 1000);
        const owner = ownerOf(url, name);
        owners.set(owner, (owners.get(owner) ?? 0) + us / 1000);
    }

    const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
    return { total: total / 1000, functions: sorted(functions), owners: sorted(owners) };
}

/**
 * CPU by stage (profile-stages.ts), µs per message. A profile samples a thread by the wall
 * clock, so on a busy machine its busy time includes time the thread waited for a core:
 * the main thread's and the parse workers' stages are their shares of the samples times the
 * CPU /proc measured for those threads (`cpu`, seconds a message). libuv's pool (SQLite, fsync)
 * and V8's helpers run no JS, so they have no profile: their CPU together is a row of its own.
 */
async function stageTable(files: string[], read: (name: string) => Promise<CpuProfile & { startTime: number; endTime: number }>, windowOf: (profile: CpuProfile & { startTime: number; endTime: number }) => ProfileWindow, messages: number, cpu: { main: number; parse: number; other: number }): Promise<Table> {
    const columns = new Map<string, Map<Stage, number>>();
    for (const name of files) {
        const profile = await read(name);
        const thread = Number(name.split('.').at(-3));
        const { stages } = summarizeStages(profile, windowOf(profile));
        const kind = thread === 0 ? 'main thread' : 'parse workers';
        const column = columns.get(kind) ?? new Map<Stage, number>();
        for (const [stage, ms] of stages) {
            column.set(stage, (column.get(stage) ?? 0) + ms);
        }

        columns.set(kind, column);
    }

    const kinds = ['main thread', 'parse workers'].filter((k) => columns.has(k));
    const busyOf = (kind: string) => [...columns.get(kind)!].filter(([s]) => s !== '(idle)').reduce((a, [, ms]) => a + ms, 0);
    // µs a message for `ms` of a column's samples.
    const scale = new Map(kinds.map((kind) => {
        const measured = kind === 'main thread' ? cpu.main : kind === 'parse workers' ? cpu.parse : null;
        const sampledPerMessage = busyOf(kind) / Math.max(1, messages);
        return [kind, (ms: number) => measured === null || sampledPerMessage === 0 ? ms * 1000 / Math.max(1, messages) : ms / busyOf(kind) * measured * 1e6];
    }));
    const rows = STAGES.filter((stage) => stage !== '(idle)').map((stage) => {
        const values = kinds.map((k) => scale.get(k)!(columns.get(k)!.get(stage) ?? 0));
        return [stage, ...values.map((v) => fmt(v)), fmt(values.reduce((a, b) => a + b, 0))];
    });
    const busy = kinds.map((k) => scale.get(k)!(busyOf(k)));
    rows.push(['all stages', ...busy.map((v) => fmt(v)), fmt(busy.reduce((a, b) => a + b, 0))]);
    rows.push(['CPU of every thread but the main one and the parse workers (libuv pool with SQLite and fsync, V8 helpers), from /proc', ...kinds.map(() => ''), fmt(cpu.other * 1e6)]);
    rows.push(['CPU of every thread, from /proc', ...kinds.map(() => ''), fmt((cpu.main + cpu.parse + cpu.other) * 1e6)]);
    return {
        title: 'CPU by stage of a message\'s way, µs per acknowledged message (main thread and parse workers: /proc CPU split by their profiles\' self time; node internals counted for the nearest frame of ours or of a package above them)',
        columns: ['stage', ...kinds, 'together'],
        rows
    };
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    // A full run keeps its profile for the flame graph (.bench-tmp/ is git-ignored); a
    // smoke run (npm test) leaves nothing behind.
    const profileDir = smoke ?
        await tempDir('bench-cpu-prof') :
        Path.join(ROOT, '.bench-tmp', `cpu-prof-${Date.now()}`);
    await Fs.mkdir(profileDir, { recursive: true });
    const profileName = (args.values.profile ?? 'text-1k') as ProfileName;
    if (!PROFILE_NAMES.includes(profileName)) {
        throw new Error(`--profile: one of ${PROFILE_NAMES.join(', ')}`);
    }

    const sessions = Number(args.values.c ?? SESSIONS);
    const service = await startStandalone({ nodeFlags: ['--cpu-prof', '--cpu-prof-dir', profileDir] });
    let acked = 0;
    let rate = 0;
    const ticksBefore = threadTicks(service.pid);
    let ticksAfter = ticksBefore;
    const loadStart = Date.now();
    let loadEnd = loadStart;
    try {
        const load = await runLoad({
            port: service.smtpPort,
            profile: profiles()[profileName],
            sessions,
            maxMessages: smoke ? 20 : 1_000_000,
            maxMs: smoke ? 1000 : Number(args.values['load-ms'] ?? LOAD_MS),
            inboxPrefix: 'prof',
            tag: `prof${Date.now().toString(36)}`
        });
        acked = load.acked;
        rate = load.msgPerSec;
        loadEnd = Date.now();
        ticksAfter = threadTicks(service.pid);
    }
    finally {
        // The profile is written when the process exits.
        await service.stop();
    }

    // One profile per thread: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile, the main thread's id 0.
    const files = (await Fs.readdir(profileDir)).filter((f) => f.endsWith('.cpuprofile'));
    const threadOf = (f: string) => Number(f.split('.').at(-3));
    const main = files.filter((f) => threadOf(f) === 0);
    if (main.length !== 1) {
        throw new Error(`expected one .cpuprofile of the main thread in ${profileDir}, found ${main.length} (of ${files.length})`);
    }

    // Only the load: start-up (module loading, migrations) and shutdown are left out.
    // A profile ends when its thread ends (at the process' exit), so its clock is placed from the end.
    // A tenth of the load trimmed at each end covers the error of that placement.
    const margin = (loadEnd - loadStart) / 10;
    const windowOf = (profile: CpuProfile & { startTime: number; endTime: number }) => {
        const profileStart = service.exitedAt() - (profile.endTime - profile.startTime) / 1000;
        return { fromMs: loadStart - profileStart + margin, toMs: loadEnd - profileStart - margin };
    };
    const read = async (name: string) => JSON.parse(await Fs.readFile(Path.join(profileDir, name), 'utf8')) as CpuProfile & { startTime: number; endTime: number };
    const summarize = async (name: string) => {
        const profile = await read(name);
        return summarizeProfile(profile, windowOf(profile));
    };
    const file = Path.join(profileDir, main[0]!);
    const summary = await summarize(main[0]!);
    const pct = (ms: number) => fmt(ms / summary.total * 100);
    const tables: Table[] = [
        {
            title: 'Self time by owner (package or our module directory), main thread',
            columns: ['owner', 'self ms', '% of profile'],
            rows: summary.owners.slice(0, 15).map(([owner, ms]) => [owner, fmt(ms), pct(ms)])
        },
        {
            title: `Top ${TOP} functions by self time, main thread`,
            columns: ['function and location', 'self ms', '% of profile'],
            rows: summary.functions.slice(0, TOP).map(([name, ms]) => [`\`${name}\``, fmt(ms), pct(ms)])
        }
    ];
    // The worker threads: the parse workers (the save runs on the main thread).
    const others: string[][] = [];
    for (const name of files.filter((f) => threadOf(f) !== 0).sort()) {
        const thread = await summarize(name);
        const busy = thread.total - (thread.owners.find(([owner]) => owner === '(idle)')?.[1] ?? 0);
        others.push([`parse worker (thread ${threadOf(name)})`, fmt(thread.total), fmt(busy / thread.total * 100), thread.owners.filter(([owner]) => owner !== '(idle)').slice(0, 5).map(([owner, ms]) => `${owner} ${fmt(ms)}`).join(', ')]);
    }

    if (others.length > 0) {
        tables.push({ title: 'The worker threads during the load', columns: ['thread', 'sampled ms', 'busy %', 'top owners by self ms'], rows: others });
    }

    const cpu = cpuBetween(service.pid, ticksBefore, ticksAfter);
    tables.push(await stageTable(files, read, windowOf, acked * (1 - 2 * margin / Math.max(1, loadEnd - loadStart)), { main: cpu.main / Math.max(1, acked), parse: cpu.parse / Math.max(1, acked), other: cpu.other / Math.max(1, acked) }));

    if (smoke) {
        await Fs.rm(profileDir, { recursive: true, force: true });
    }

    return {
        tables,
        targets: [],
        notes: [
            `Profile of \`node --cpu-prof examples/standalone.js\` (SQLite, the embedded default) under the ${profileName} profile at C = ${sessions}: ${acked} messages, ${fmt(rate)} msg/s while profiling; ${fmt(summary.total)} ms sampled during the load (start-up and shutdown left out; \`(idle)\` is time the main thread waited, e.g. for fsync on the thread pool).`,
            smoke ? 'Smoke run: the profile file was removed.' : `Profile file: ${Path.relative(ROOT, file)} (open it in Chrome DevTools or speedscope for a flame graph).`
        ]
    };
}

if (require.main === module) {
    runBench('CPU profile of the standalone under SMTP load', 'cpu-profile', bench, ['load-ms', 'profile', 'c']);
}
