import * as Fs from 'node:fs';
import { parseArgs } from 'node:util';
import { describeMachine } from './machine';

/** One table of figures. */
export interface Table {
    title: string;
    columns: string[];
    rows: string[][];
}

/** One target of the issue, as measured. */
export interface TargetCheck {
    target: string;
    measured: string;
    /** null: not measurable in this run (smoke mode, a part that could not start). */
    met: boolean | null;
}

/** What one benchmark hands back to run.ts (as JSON) and prints on its own. */
export interface BenchResult {
    name: string;
    /** The command that produced it, for the reader to repeat. */
    command: string;
    smoke: boolean;
    startedAt: string;
    seconds: number;
    tables: Table[];
    targets: TargetCheck[];
    notes: string[];
}

/** Options every benchmark script takes. */
export interface BenchArgs {
    /** A few seconds in all, tiny counts: proves the benchmark still runs (npm test). */
    smoke: boolean;
    /** Where to write the result as JSON (run.ts reads it). */
    json?: string;
    /** Benchmark-specific `--name value` options. */
    values: Record<string, string | boolean | undefined>;
}

/** Parses `--smoke`, `--json <file>`, the benchmark's own string options and its own boolean `flags`. */
export function readArgs(extra: string[] = [], flags: string[] = []): BenchArgs {
    const options: Record<string, { type: 'string' | 'boolean' }> = {
        smoke: { type: 'boolean' },
        json: { type: 'string' }
    };
    for (const name of extra) {
        options[name] = { type: 'string' };
    }

    for (const name of flags) {
        options[name] = { type: 'boolean' };
    }

    const { values } = parseArgs({ args: process.argv.slice(2), options, strict: true, allowPositionals: false });
    return { smoke: values.smoke === true, json: values.json as string | undefined, values };
}

/** A table as GitHub Markdown. */
export function markdownTable(table: Table): string {
    const head = `| ${table.columns.join(' | ')} |`;
    const rule = `|${table.columns.map(() => '---').join('|')}|`;
    const body = table.rows.map((row) => `| ${row.join(' | ')} |`);
    return [`**${table.title}**`, '', head, rule, ...body].join('\n');
}

/** One benchmark's result as Markdown: command, tables, target checks, notes. */
export function markdownResult(result: BenchResult): string {
    const parts = [`### ${result.name}${result.smoke ? ' (smoke run: tiny counts, figures meaningless)' : ''}`, '', `Command: \`${result.command}\` (${result.seconds.toFixed(0)} s)`];
    for (const table of result.tables) {
        parts.push('', markdownTable(table));
    }

    if (result.targets.length > 0) {
        parts.push('', markdownTable({
            title: 'Targets',
            columns: ['target', 'measured', 'met'],
            rows: result.targets.map((t) => [t.target, t.measured, verdict(t.met)])
        }));
    }

    for (const note of result.notes) {
        parts.push('', `- ${note}`);
    }

    return parts.join('\n');
}

/** `yes`, `NO` or `n/a`. */
export function verdict(met: boolean | null): string {
    return met === null ? 'n/a' : met ? 'yes' : 'NO';
}

/**
 * Runs a benchmark as a script: parses the options, prints the machine summary and
 * the result, writes the JSON when asked, and exits non-zero on a failure.
 */
export function runBench(name: string, script: string, bench: (args: BenchArgs) => Promise<Omit<BenchResult, 'name' | 'command' | 'smoke' | 'startedAt' | 'seconds'>>, extra: string[] = [], flags: string[] = []): void {
    const args = readArgs(extra, flags);
    const startedAt = new Date();
    const begin = process.hrtime.bigint();
    const command = `node dist-bench/bench/${script}.js ${process.argv.slice(2).filter((a, i, all) => a !== '--json' && all[i - 1] !== '--json').join(' ')}`.trim();
    console.log(`# ${name}\n${describeMachine()}\n`);
    bench(args).then((partial) => {
        const result: BenchResult = {
            name,
            command,
            smoke: args.smoke,
            startedAt: startedAt.toISOString(),
            seconds: Number(process.hrtime.bigint() - begin) / 1e9,
            ...partial
        };
        console.log(markdownResult(result));
        if (args.json) {
            Fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
        }

        // Pools and child processes are closed by each benchmark; exit anyway so a
        // stray keep-alive socket cannot hold the run.
        setTimeout(() => process.exit(0), 200).unref();
    }, (err: unknown) => {
        console.error(`${name} failed:`, err);
        process.exit(1);
    });
}
