import { cpuMsOf } from './process-cpu';
import type { Table, TargetCheck } from './report';
import { smallMailChecks } from './small-mail-targets';
import { runSmtpSource, SMTP_SOURCE_INSTALL, smtpSourcePath, type SmtpSourceResult } from './smtp-source';
import { fmt, median } from './stats';

/** A server under load, as smtp-ingest.ts knows it. */
export interface SourceTarget {
    name: string;
    short: string;
    smtpPort: number;
    /** Its process, whose CPU per message the cells measure. */
    pid: number;
    /** Messages the server holds for the given inboxes, as its own API (or store) tells. */
    stored(inboxes: string[], expected: number): Promise<number>;
}

/** The message sizes: smtp-source's body length, bytes. */
const SIZES = [{ name: '1 KB', bytes: 1024 }, { name: '10 KB', bytes: 10 * 1024 }];
/** Messages per cell with `-d` (the issue's 3,000) and without it (a connection each: MailDev greets after 100 ms). */
const MESSAGES = { reuse: 3000, connectionEach: 300 };
/** A cell that takes longer is killed and counted as failed, ms. */
const CELL_TIMEOUT_MS = 120_000;

interface SourceCell {
    reuse: boolean;
    size: string;
    concurrency: number;
    server: string;
    rounds: SmtpSourceResult[];
    /** Server CPU (all its threads) per message of each round, ms. */
    cpuMsPerMsg: number[];
    sent: number;
    listed: number;
}

/** What the smtp-source cells give smtp-ingest.ts: tables, target checks and notes. */
export interface SourceFigures {
    tables: Table[];
    checks: TargetCheck[];
    notes: string[];
}

/**
 * Every target at each size, C and mode (`-d` and not), `rounds` rounds alternating the
 * servers' order; the ratios are medians of the rounds' ratios. Without smtp-source, a note
 * saying how to install it and nothing else.
 */
export async function runSmtpSourceCells(targets: SourceTarget[], options: { concurrencies: number[]; rounds: number; smoke: boolean; tag: string; oursName: string; maildev3: string; maildev2: string; sinkName?: string; floorName?: string; obligationsName?: string }): Promise<SourceFigures> {
    const program = smtpSourcePath();
    if (!program) {
        console.error(SMTP_SOURCE_INSTALL);
        return { tables: [], checks: [], notes: [`${SMTP_SOURCE_INSTALL}. Its cells were skipped; everything else ran.`] };
    }

    const sizes = options.smoke ? SIZES.slice(0, 1) : SIZES;
    const cells: SourceCell[] = [];
    for (const reuse of [true, false]) {
        for (const size of sizes) {
            for (const concurrency of options.concurrencies) {
                const messages = options.smoke ? 8 : reuse ? MESSAGES.reuse : MESSAGES.connectionEach;
                const perTarget = new Map<SourceTarget, SourceCell>(targets.map((t) => [t, { reuse, size: size.name, concurrency, server: t.name, rounds: [], cpuMsPerMsg: [], sent: 0, listed: 0 }]));
                for (let round = 0; round < options.rounds; round++) {
                    const order = round % 2 === 0 ? targets : [...targets].reverse();
                    for (const target of order) {
                        const inbox = `${target.short}-ss${reuse ? 'd' : 'n'}-${size.bytes}-c${concurrency}-${options.tag}r${round}`.toLowerCase();
                        const cpuBefore = cpuMsOf(target.pid);
                        const result = await runSmtpSource({ program, port: target.smtpPort, sessions: concurrency, messages, bodyBytes: size.bytes, reuse, to: `${inbox}@bench.test`, timeoutMs: CELL_TIMEOUT_MS });
                        const cell = perTarget.get(target)!;
                        cell.rounds.push(result);
                        cell.cpuMsPerMsg.push((cpuMsOf(target.pid) - cpuBefore) / messages);
                        cell.sent += result.ok ? messages : 0;
                        cell.listed += await target.stored([inbox], result.ok ? messages : 0);
                        console.error(`smtp-source ${reuse ? '-d' : 'no -d'} | ${size.name} | C=${concurrency} | ${target.name} | ${fmt(result.msgPerSec)} msg/s${result.error ? ` | ${result.error}` : ''}`);
                    }
                }

                cells.push(...perTarget.values());
            }
        }
    }

    const find = (reuse: boolean, size: string, c: number, server: string) => cells.find((x) => x.reuse === reuse && x.size === size && x.concurrency === c && x.server === server);
    const ratio = (reuse: boolean, size: string, c: number, a: string, b: string) => {
        const [x, y] = [find(reuse, size, c, a), find(reuse, size, c, b)];
        return x && y ? median(x.rounds.map((r, i) => r.msgPerSec / (y.rounds[i]?.msgPerSec ?? NaN))) : NaN;
    };
    const mode = (reuse: boolean) => (reuse ? '-d (one connection per session)' : 'a connection per message');
    const checks: TargetCheck[] = [];
    const ratioRows: string[][] = [];
    for (const reuse of [true, false]) {
        for (const size of sizes) {
            for (const c of options.concurrencies) {
                const vs3 = ratio(reuse, size.name, c, options.oursName, options.maildev3);
                const vs2 = ratio(reuse, size.name, c, options.oursName, options.maildev2);
                ratioRows.push([mode(reuse), size.name, String(c), fmt(vs3), fmt(vs2), ...(options.sinkName ? [fmt(ratio(reuse, size.name, c, options.sinkName, options.oursName))] : []),
                    ...(options.floorName ? [fmt(ratio(reuse, size.name, c, options.oursName, options.floorName))] : []),
                    ...(options.obligationsName ? [fmt(ratio(reuse, size.name, c, options.oursName, options.obligationsName))] : [])]);
                if (reuse) {
                    const rate = (server: string | undefined) => fmt(median(find(reuse, size.name, c, server ?? '')?.rounds.map((r) => r.msgPerSec) ?? [NaN]));
                    const cpu = (server: string | undefined) => median(find(reuse, size.name, c, server ?? '')?.cpuMsPerMsg ?? [NaN]);
                    checks.push(...smallMailChecks({
                        where: `smtp-source -d, ${size.name} C=${c}`, concurrency: c,
                        vsFloor: options.floorName ? ratio(reuse, size.name, c, options.oursName, options.floorName) : NaN, vsMaildev3: vs3,
                        oursCpuMs: cpu(options.oursName), floorCpuMs: cpu(options.floorName),
                        rates: `(${rate(options.oursName)} vs the floor's ${rate(options.floorName)}, MailDev 3.0.0's ${rate(options.maildev3)} msg/s)`,
                        obligations: options.floorName && options.obligationsName ? {
                            vsFloor: ratio(reuse, size.name, c, options.obligationsName, options.floorName),
                            oursVs: ratio(reuse, size.name, c, options.oursName, options.obligationsName),
                            cpuMs: cpu(options.obligationsName)
                        } : undefined
                    }, options.smoke));
                }
            }
        }
    }

    const ours = cells.filter((c) => c.server === options.oursName);
    const mismatched = ours.filter((c) => c.listed !== c.sent || c.rounds.some((r) => !r.ok));
    checks.push({
        target: 'smtp-source: every message of ours answered 250 and listed by the API afterwards',
        measured: mismatched.length === 0 ? `all ${ours.length} cells: ${ours.reduce((n, c) => n + c.sent, 0)} sent, as many listed` :
            mismatched.map((c) => `${c.reuse ? '-d' : 'no -d'} ${c.size} C=${c.concurrency}: ${c.sent} sent, ${c.listed} listed${c.rounds.find((r) => r.error)?.error ? `, ${c.rounds.find((r) => r.error)!.error}` : ''}`).join('; '),
        met: mismatched.length === 0
    });

    return {
        tables: [
            {
                title: `SMTP ingest with Postfix's smtp-source: msg/s (medians of ${options.rounds} round${options.rounds === 1 ? '' : 's'}), -d and a connection per message`,
                columns: ['mode', 'size', 'C', 'server', 'msg/s', 'rounds msg/s', 'server CPU ms/msg', 'sent', 'listed after'],
                rows: cells.map((c) => [mode(c.reuse), c.size, String(c.concurrency), c.server, fmt(median(c.rounds.map((r) => r.msgPerSec))), c.rounds.map((r) => fmt(r.msgPerSec)).join(' / '), fmt(median(c.cpuMsPerMsg)), String(c.sent), String(c.listed)])
            },
            {
                title: 'Ratios with smtp-source: msg/s of ours ÷ each MailDev (median of the rounds\' ratios)',
                columns: ['mode', 'size', 'C', 'ours / MailDev 3.0.0', 'ours / MailDev 2.2.1', ...(options.sinkName ? [`${options.sinkName} / ours`] : []), ...(options.floorName ? [`ours / ${options.floorName}`] : []), ...(options.obligationsName ? [`ours / ${options.obligationsName}`] : [])],
                rows: ratioRows
            }
        ],
        checks,
        notes: [
            `smtp-source (${program}) sends its own message: From, To, Date, a unique Message-Id and a body of 1,024 or 10,240 bytes in lines of X; HELO, lock-step. Each cell sends ${options.smoke ? 8 : `${MESSAGES.reuse} messages with -d, ${MESSAGES.connectionEach} without`} to one inbox; msg/s is messages ÷ the wall time of the smtp-source process, and a run that met any refusal counts as failed.`
        ]
    };
}
