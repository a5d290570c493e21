/**
 * What each of our storage obligations costs the floor (bench/README.md, "The floor with our
 * storage obligations"): the in-process floor (floor-store.ts, 16 saves in flight, each store
 * fresh) as it is, with every obligation, and with every obligation but one, rounds
 * alternating; msg/s and the whole process's CPU per message (every thread), medians. What an
 * obligation costs is the CPU "all" takes beyond "all but it". Not in run.ts: a diagnosis.
 *
 *   node dist-bench/bench/floor-obligations.js [--profiles text-1k,alt-10k] [--rounds 4] [--loop-ms 2000]
 */
import * as Fs from 'node:fs/promises';
import { OBLIGATIONS, openFloorStore, type Obligation } from './floor-store';
import { PROFILE_NAMES, profiles, recipientOf, type ProfileName } from './profiles';
import { runBench, type BenchArgs, type Table } from './report';
import { fmt, median } from './stats';
import { tempDir } from '../test/helpers/temp-dir';

/** Saves in flight: as many as the busiest SMTP cell has sessions. */
const IN_FLIGHT = 16;
/** How long each loop runs, ms, and its messages at most. */
const LOOP_MS = 2000;
const LOOP_MAX_MESSAGES = 50_000;
/** Pause before each loop, ms. */
const SETTLE_MS = 500;
/** Rounds, in alternating order: an even number balances the order. */
const ROUNDS = 4;

/** One configuration of the floor: a name and the obligations it keeps (false: the floor itself). */
interface Variant {
    name: string;
    obligations: false | readonly Obligation[];
}

const VARIANTS: Variant[] = [
    { name: 'floor', obligations: false },
    { name: 'all obligations', obligations: OBLIGATIONS },
    ...OBLIGATIONS.map((left) => ({ name: `all but ${left}`, obligations: OBLIGATIONS.filter((o) => o !== left) }))
];

/** msg/s and CPU ms a message of one loop on a fresh store. */
async function loop(dir: string, variant: Variant, profile: ProfileName, ms: number, max: number, tag: string): Promise<{ rate: number; cpuMs: number }> {
    // Each loop starts from a collected heap and a settled disk (run with --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const store = await openFloorStore(`${dir}/${tag}.sqlite`, { obligations: variant.obligations });
    const message = (seq: number) => profiles()[profile].message(seq, recipientOf(`fo-${profile}`, seq), `fo-${tag}`);
    try {
        let next = 0;
        let done = 0;
        const deadline = Date.now() + ms;
        const cpu0 = process.cpuUsage();
        const start = process.hrtime.bigint();
        await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
            while (next < max && Date.now() < deadline) {
                const seq = next++;
                await store.save(message(seq), recipientOf(`fo-${profile}`, seq));
                done++;
            }
        }));
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        const cpu = process.cpuUsage(cpu0);
        return { rate: done / seconds, cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(done, 1) };
    }
    finally {
        await store.close();
        await Fs.rm(`${dir}/${tag}.sqlite`, { force: true });
        await Fs.rm(`${dir}/${tag}.sqlite-wal`, { force: true });
        await Fs.rm(`${dir}/${tag}.sqlite-shm`, { force: true });
    }
}

async function bench(args: BenchArgs) {
    const smoke = args.smoke;
    const ms = smoke ? 100 : Number(args.values['loop-ms'] ?? LOOP_MS);
    const max = smoke ? 20 : LOOP_MAX_MESSAGES;
    const rounds = smoke ? 1 : Number(args.values.rounds ?? ROUNDS);
    const names = (args.values.profiles as string | undefined)?.split(',') ?? ['text-1k', 'alt-10k'];
    const chosen = PROFILE_NAMES.filter((p) => names.includes(p));
    const dir = await tempDir('bench-floor-obligations');
    const tables: Table[] = [];
    try {
        for (const profile of chosen) {
            // Warm-up, not measured: one pass of every variant (the parse's and the store's code
            // compiled; without it the first variants of a round measured up to a fifth slower).
            for (const [i, variant] of VARIANTS.entries()) {
                await loop(dir, variant, profile, smoke ? 50 : ms, max, `${profile}-warm-${i}`);
            }

            const figures = new Map<Variant, Array<{ rate: number; cpuMs: number }>>(VARIANTS.map((v) => [v, []]));
            for (let round = 0; round < rounds; round++) {
                const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
                for (const [i, variant] of order.entries()) {
                    figures.get(variant)!.push(await loop(dir, variant, profile, ms, max, `${profile}-r${round}-${i}`));
                }
            }

            const mid = (variant: Variant) => ({
                rate: median(figures.get(variant)!.map((f) => f.rate)),
                cpuMs: median(figures.get(variant)!.map((f) => f.cpuMs))
            });
            const floor = mid(VARIANTS[0]!);
            const all = mid(VARIANTS[1]!);
            tables.push({
                title: `${profile}: the in-process floor, ${IN_FLIGHT} saves in flight, with our storage obligations (medians of ${rounds} round${rounds === 1 ? '' : 's'})`,
                columns: ['variant', 'msg/s', '÷ the floor', 'CPU µs a message', '÷ the floor\'s', 'the left-out obligation costs, µs a message (all − this)'],
                rows: VARIANTS.map((variant, i) => {
                    const m = mid(variant);
                    return [variant.name, fmt(m.rate), fmt(m.rate / floor.rate), fmt(m.cpuMs * 1000), fmt(m.cpuMs / floor.cpuMs), i >= 2 ? fmt((all.cpuMs - m.cpuMs) * 1000) : '-'];
                })
            });
        }
    }
    finally {
        await Fs.rm(dir, { recursive: true, force: true });
    }

    return {
        tables,
        targets: [],
        notes: [
            'The floor: simpleParser on this thread, group commit of one multi-row INSERT per table into SQLite (WAL, synchronous=FULL), the raw bytes by rowid, a contentless trigram FTS5 document of the body (floor-store.ts).',
            `Obligations (floor-store.ts): message-id = the Message-ID's digest, unique; order = (inbox, receivedAt, id) in place of the floor's (inbox, seq); received-at = an index on receivedAt; summary = the inbox summary, its recency index and its trigger; autoincrement = seqs never reused; blob = the raw message as a blob row under a key with its link row and the link's key index, in place of a row by rowid; search-text = the folded text body and HTML's text beside the body and a document of every searched field, in place of the body's.`,
            `Each loop runs ${ms} ms or ${max} messages on a fresh store; message i goes to one of 100 inboxes; rounds alternate the variants' order. CPU is process.cpuUsage(): every thread of this process.`
        ]
    };
}

if (require.main === module) {
    runBench('What each storage obligation costs the floor', 'floor-obligations', bench, ['profiles', 'rounds', 'loop-ms']);
}
