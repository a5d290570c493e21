/**
 * What the fault rules cost one SMTP command (docs/api.md, "Faults"): the gate the listener
 * runs at each stage (armed(), then take() when armed), 20,000 commands in a row in one
 * process, with no rule and with ten rules no command matches, on SQLite and on Postgres.
 * CPU time per command back to back, the time of one read of the rules, and what the reads
 * cost a command of a busy listener; `--roots` runs built checkouts in turn (a before/after).
 *
 * node dist-bench/bench/fault-gate.js [--roots /a,/b] [--commands 20000] [--postgres off]
 */

import * as Path from 'node:path';
import { startPostgres } from '../test/helpers/postgres';
import { tempDir } from '../test/helpers/temp-dir';

interface Gate {
    armed(stage: string): boolean;
    take(stage: string, facts: unknown): Promise<unknown>;
    create(input: unknown): Promise<unknown>;
    deleteAll(): Promise<number>;
}

interface Store {
    migrate(): Promise<void>;
    close(): Promise<void>;
}

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : process.argv[at + 1]!;
}

/** CPU µs per command over `commands` gated commands at the rcpt stage, back to back. */
async function perCommand(faults: Gate, commands: number): Promise<number> {
    const facts = { sender: 'app@shop.test', recipients: ['quiet@example.test'] };
    const cpu = process.cpuUsage();
    for (let i = 0; i < commands; i++) {
        if (faults.armed('rcpt')) {
            await faults.take('rcpt', facts);
        }
    }

    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / commands;
}

/** Wall µs of one read of the rule set (what a command that finds its copy too old waits for). */
async function readCost(store: Store & { listFaultRules(): Promise<unknown[]> }, reads = 200): Promise<number> {
    const started = process.hrtime.bigint();
    for (let i = 0; i < reads; i++) {
        await store.listFaultRules();
    }

    return Number(process.hrtime.bigint() - started) / 1e3 / reads;
}

async function measure(root: string, kind: 'sqlite' | 'postgres', databaseUrl: string | undefined, commands: number): Promise<string[]> {
    // Another checkout's build, chosen at run time.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const dist = (file: string) => require(Path.join(root, 'dist', 'lib', file)) as Record<string, unknown>;
    const { createFaults } = dist('service/faults.js') as { createFaults(o: object): Gate };
    const { defaultInboxFromAddress } = dist('identity/recipients.js') as { defaultInboxFromAddress: unknown };
    const { DEFAULT_FAULT_REFRESH_MS } = dist('defaults.js') as { DEFAULT_FAULT_REFRESH_MS: number };
    let recordStore: Store;
    if (kind === 'sqlite') {
        const { openEmbeddedRecordStore } = dist('service/embedded-stores.js') as { openEmbeddedRecordStore(o: object): Promise<Store> };
        recordStore = await openEmbeddedRecordStore({ dataDir: await tempDir('fault-gate') });
    }
    else {
        const { openPostgresKnex } = dist('record-store/postgres/postgres-knex.js') as { openPostgresKnex(url: string): unknown };
        const { createKnexRecordStore } = dist('record-store/knex-record-store.js') as { createKnexRecordStore(o: object): Store };
        recordStore = createKnexRecordStore({ knex: openPostgresKnex(databaseUrl!), destroyKnexOnClose: true });
    }

    await recordStore.migrate();
    const faults = createFaults({ recordStore, inboxFromAddress: defaultInboxFromAddress, refreshMs: DEFAULT_FAULT_REFRESH_MS });
    const rows: string[] = [];
    try {
        await perCommand(faults, 1_000);
        const none = await perCommand(faults, commands);
        await Promise.all(Array.from({ length: 10 }, (_, i) => faults.create({ stage: 'rcpt', match: { inbox: `never-${i}` }, reply: { code: 451 } })));
        const ten = await perCommand(faults, commands);
        const read = await readCost(recordStore as Store & { listFaultRules(): Promise<unknown[]> });
        await faults.deleteAll();
        // A listener busy with 6,000 commands a second (1,500 small messages) re-reads every refresh.
        const amortised = (read * (1000 / DEFAULT_FAULT_REFRESH_MS)) / 6000;
        rows.push(`| ${Path.basename(root)} | ${kind} | ${DEFAULT_FAULT_REFRESH_MS} | ${none.toFixed(2)} | ${ten.toFixed(2)} | ${read.toFixed(0)} | ${amortised.toFixed(3)} |`);
    }
    finally {
        await recordStore.close();
    }

    return rows;
}

async function main(): Promise<void> {
    const roots = option('roots', Path.resolve(__dirname, '..', '..')).split(',');
    const commands = Number(option('commands', '20000'));
    const postgres = option('postgres', 'on') === 'on' ? await startPostgres({ durable: true }) : undefined;
    console.log('| checkout | store | refresh ms | CPU µs a command, no rule | with ten rules that never match | one read of the rules, µs | its share of a command at 6,000 commands/s, µs |');
    console.log('|---|---|---|---|---|---|---|');
    try {
        for (const root of roots) {
            for (const kind of ['sqlite', 'postgres'] as const) {
                if (kind === 'postgres' && !postgres) {
                    continue;
                }

                const url = kind === 'postgres' ? await postgres!.createDatabase() : undefined;
                console.log((await measure(root, kind, url, commands)).join('\n'));
            }
        }
    }
    finally {
        await postgres?.stop();
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err);
        process.exit(1);
    });
}
