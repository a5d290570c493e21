/**
 * What the probes of bench/hardening-probes.ts share: the shape of a probe and its
 * outcome, and the few requests every probe makes against a standalone service of a
 * given checkout (another commit's build, for a before/after).
 */

import { execFile } from 'node:child_process';
import * as Path from 'node:path';
import { promisify } from 'node:util';
import type { PostgresServer } from '../test/helpers/postgres';
import { SmtpSession } from './smtp-client';
import { CLI, ROOT, type Standalone } from './standalone';

/** How big a probe is: the sizes of the security probe, or small ones that prove the harness runs. */
export type ProbeSize = 'full' | 'smoke';

/** Where a probe runs: the checkout whose dist/ it starts, and what the run shares. */
export interface ProbeContext {
    /** A checkout root with dist/ built. */
    root: string;
    size: ProbeSize;
    /** The run's one embedded Postgres (started on first use). */
    postgres(): Promise<PostgresServer>;
}

/** What a probe sent, the answer the attacker got, and the figure the probe is about. */
export interface ProbeOutcome {
    sent: string;
    answer: string;
    figure: string;
}

/** One probe shape: its number in the hardening round and how to run it. */
export interface Probe {
    item: number;
    title: string;
    run(context: ProbeContext): Promise<ProbeOutcome>;
}

/** The sender of every probe's mail. */
export const PROBE_FROM = 'app@shop.test';

/** A small raw message. */
export function probeMessage(messageId: string, to: string, subject: string, body = 'hello'): Buffer {
    return Buffer.from([`From: ${PROBE_FROM}`, `To: ${to}`, `Subject: ${subject}`, `Message-ID: <${messageId}>`, '', body, ''].join('\r\n'));
}

/** Delivers `raw` to `to` over SMTP and throws unless it is taken (the probes attack what follows, not delivery). */
export async function deliver(smtpPort: number, raw: Buffer, to: string): Promise<void> {
    const session = await SmtpSession.open(smtpPort);
    try {
        const { code } = await session.send(PROBE_FROM, [to], [raw]);
        if (code !== 250) {
            throw new Error(`delivery to ${to} answered ${code}`);
        }
    }
    finally {
        await session.close();
    }
}

/** An HTTP answer: the status and the body as text (JSON or not). */
export interface Answer {
    status: number;
    text: string;
}

/** A request with a key; `body` goes as JSON. */
export async function request(service: Pick<Standalone, 'base'>, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
    const res = await fetch(`${service.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...body === undefined ? {} : { 'content-type': 'application/json' } },
        ...body === undefined ? {} : { body: JSON.stringify(body) }
    });
    return { status: res.status, text: await res.text() };
}

/** "400 {"error":"X"}", the body cut short (a success's body left out): what the attacker read. */
export function describeAnswer(answer: Answer, max = 80): string {
    if (answer.status >= 200 && answer.status < 300) {
        return String(answer.status);
    }

    const text = answer.text.length > max ? `${answer.text.slice(0, max)}…` : answer.text;
    return `${answer.status} ${text}`.trim();
}

/** Another key for a running service, made with that checkout's CLI (`keys create`, e.g. `--read-only`). */
export async function createKey(root: string, service: Pick<Standalone, 'env'>, name: string, flags: string[] = []): Promise<string> {
    const cli = Path.join(root, Path.relative(ROOT, CLI));
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'keys', 'create', name, ...flags], { cwd: root, env: service.env });
    return stdout.trim();
}

/** "250 × 5, 421 × 45": how often each answer came. */
export function tally(answers: Array<number | string>): string {
    const counts = new Map<string, number>();
    answers.forEach((a) => counts.set(String(a), (counts.get(String(a)) ?? 0) + 1));
    return [...counts].sort().map(([a, n]) => `${a} × ${n}`).join(', ');
}

/** Runs `make(i)` for i in 0..count-1, `width` at a time; the results in order. */
export async function inBatches<T>(count: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
    const out: T[] = [];
    for (let start = 0; start < count; start += width) {
        out.push(...await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, j) => make(start + j))));
    }

    return out;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Something a probe starts and must stop. */
export interface Part {
    close?(): Promise<void>;
    stop?(): Promise<void>;
}

/** Starts what `body` needs and stops all of it afterwards, whatever happens. */
export async function withParts<T>(body: (parts: { add<P extends Part>(part: P): P }) => Promise<T>): Promise<T> {
    const started: Part[] = [];
    try {
        return await body({
            add(part) {
                started.push(part);
                return part;
            }
        });
    }
    finally {
        for (const part of started.reverse()) {
            await (part.stop ?? part.close)!.call(part).catch(() => undefined);
        }
    }
}
