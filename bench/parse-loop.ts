/**
 * The parse alone, on the calling thread: parseMessage() (which takes the synchronous
 * parse of lib/mime/plain-parse.ts for a small plain message) against
 * parseWithMailparser() (mailparser's streams, what every message took before), the
 * same messages one after another, alternating in rounds. Prints µs of CPU (the
 * process's, all threads) and wall a message, and the heap allocated a message.
 *
 *   node dist-bench/bench/parse-loop.js [--profile text-1k] [--messages 5000] [--rounds 3]
 *   node --trace-gc-nvp dist-bench/bench/parse-loop.js --only fast   (one side, for its GC lines)
 */

import { parseArgs } from 'node:util';
import { parseMessage, parseWithMailparser, type ParsedMessage } from '../lib/mime/parse';
import { parsePlainMessage } from '../lib/mime/plain-parse';
import { PROFILE_NAMES, profiles, recipientOf, type ProfileName } from './profiles';
import { fmt } from './stats';

type Side = 'fast' | 'mailparser';

/** Runs `parse` over `messages` in order; µs a message of CPU (process, all threads) and wall. */
async function loop(messages: Buffer[], parse: (raw: Buffer) => Promise<ParsedMessage>): Promise<{ cpuUs: number; wallUs: number }> {
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (const raw of messages) {
        await parse(raw);
    }

    const wall = Number(process.hrtime.bigint() - start) / 1e3;
    const used = process.cpuUsage(cpu);
    return { cpuUs: (used.user + used.system) / messages.length, wallUs: wall / messages.length };
}

/**
 * Heap bytes `parse` allocates a message, roughly: the growth of heapUsed from one
 * message to the next, summed (a collection in between loses that one step). A pass of
 * its own: reading heapUsed costs more than a fast parse.
 */
async function allocated(messages: Buffer[], parse: (raw: Buffer) => Promise<ParsedMessage>): Promise<number> {
    let total = 0;
    let last = process.memoryUsage().heapUsed;
    for (const raw of messages) {
        await parse(raw);
        const now = process.memoryUsage().heapUsed;
        total += Math.max(0, now - last);
        last = now;
    }

    return total / messages.length;
}

async function main() {
    const { values } = parseArgs({ options: {
        profile: { type: 'string', default: 'text-1k' },
        messages: { type: 'string', default: '5000' },
        rounds: { type: 'string', default: '3' },
        only: { type: 'string' }
    } });
    const profileName = values.profile as ProfileName;
    if (!PROFILE_NAMES.includes(profileName)) {
        throw new Error(`--profile: one of ${PROFILE_NAMES.join(', ')}`);
    }

    const profile = profiles()[profileName];
    const messages = Array.from({ length: Number(values.messages) }, (_, i) => profile.message(i, recipientOf('parse', i), 'parse'));
    console.log(`${profileName}: ${messages.length} messages of ~${profile.approxBytes} bytes; the fast path takes ${messages.filter((m) => parsePlainMessage(m) !== undefined).length}`);
    const sides: Record<Side, (raw: Buffer) => Promise<ParsedMessage>> = { fast: parseMessage, mailparser: parseWithMailparser };
    const order = (values.only ? [values.only] : ['mailparser', 'fast']) as Side[];
    // Warm both up (JIT, libmime's tables) before anything is counted.
    for (const side of order) {
        await loop(messages.slice(0, 500), sides[side]);
    }

    for (let round = 1; round <= Number(values.rounds); round++) {
        for (const side of order) {
            const r = await loop(messages, sides[side]);
            const heap = await allocated(messages.slice(0, 1000), sides[side]);
            console.log(`round ${round} ${side.padEnd(10)} CPU ${fmt(r.cpuUs)} µs/msg  wall ${fmt(r.wallUs)} µs/msg  heap allocated ~${fmt(heap / 1024)} KB/msg`);
        }
    }
}

main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
});
