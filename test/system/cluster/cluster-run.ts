import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { openPostgresKnex } from '../../../lib/record-store/postgres/postgres-knex';
import { runNode } from '../../helpers/child-process';
import { startPostgres, type PostgresServer } from '../../helpers/postgres';
import { startS3, type S3Fixture } from '../../helpers/s3';
import { postgresS3Env } from '../../helpers/service-env';
import { tempDir } from '../../helpers/temp-dir';
import { auditListings, auditWakeRounds, auditWebhooks, listInbox, RETAINED_INBOX, type WakeAudit, type WebhookAudit } from './cluster-audit';
import { ClusterInstance } from './cluster-instances';
import { startClusterReceiver, type ClusterReceiver } from './cluster-mail';
import { runFaultTraffic, runLoad, type KillRecord, type LoadOptions, type Outcomes } from './cluster-load';

const ROOT = Path.join(__dirname, '..', '..', '..');
const BIN = Path.join(ROOT, 'dist', 'adapters', 'cli', 'bin.js');
const FAULT_INBOX = 'cluster-fault';
/** How long the retained inbox may take to come down to its maximum after the load (passes run every second). */
const RETENTION_SETTLE_MS = 15_000;

/** The cluster and its load. Durations are milliseconds. */
export interface ClusterOptions extends LoadOptions {
    /** Instances of `examples/standalone.js` on the one Postgres and the one bucket. */
    instances: number;
    /** INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: above every load inbox's share, below the retained inbox's. */
    retentionMaxPerInbox: number;
    /** `times` of the fault rule on `cluster-fault` (a rcpt stage 450). */
    faultTimes: number;
    /** The webhook receiver answers after this, so that a kill finds deliveries in flight. */
    webhookDelayMs: number;
    /** INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: a dead instance's claims are taken over this + 5 s later. */
    webhookTimeoutMs: number;
    /** How long after the load every stored email may take to reach the receiver. */
    deliveryLimitMs: number;
}

/** The outbox after the wait: rows left, those of emails no POST reached, their most attempts and an error. */
export interface PendingDeliveries {
    rows: number;
    ofMissing: number;
    maxAttempts: number;
    lastError: string;
}

/** What a cluster run measured, and every promise it saw broken. */
export interface ClusterReport {
    failures: string[];
    acknowledged: number;
    acksByInstance: Record<string, number>;
    inDoubt: number;
    inDoubtStored: number;
    refused: Record<number, number>;
    faultCodes: Record<number, number>;
    faultRulesLeft: number[];
    rowsStoredTwice: number;
    rowsInDatabase: number;
    rowsListed: number;
    retainedCounts: number[];
    kills: KillRecord[];
    wake: WakeAudit;
    webhooks: WebhookAudit;
    pendingDeliveries: PendingDeliveries;
    exitCodes: Array<number | null>;
    durationMs: number;
    loadMs: number;
}

/** Runs one cluster: setup, fault traffic, load with kills, audit, graceful stop; everything it started is stopped. */
export async function runCluster(options: ClusterOptions): Promise<ClusterReport> {
    // Retention must trim the retained inbox only: every other inbox stays under its maximum.
    if (Math.ceil(options.messages / options.inboxes) >= options.retentionMaxPerInbox || options.faultAttempts - options.faultTimes > options.retentionMaxPerInbox) {
        throw new Error('cluster options: a load inbox or the fault inbox would pass retentionMaxPerInbox');
    }

    const began = Date.now();
    const dirs: string[] = [];
    const instances: ClusterInstance[] = [];
    let postgres: PostgresServer | undefined;
    let s3: S3Fixture | undefined;
    let receiver: ClusterReceiver | undefined;
    try {
        [postgres, s3, receiver] = await Promise.all([startPostgres(), startS3(), startClusterReceiver(options.webhookDelayMs)]);
        const shared = postgresS3Env(postgres.connectionString, s3, {
            INBOX_CAPTURE_RETENTION_MAX_PER_INBOX: String(options.retentionMaxPerInbox),
            INBOX_CAPTURE_RETENTION_INTERVAL: '1s',
            INBOX_CAPTURE_WEBHOOK_URL: receiver.url,
            INBOX_CAPTURE_WEBHOOK_TIMEOUT_MS: String(options.webhookTimeoutMs),
            INBOX_CAPTURE_WEBHOOK_FIRST_RETRY_MS: '1000'
        });
        const migrated = await runNode([BIN, 'migrate'], { cwd: ROOT, env: shared });
        const created = await runNode([BIN, 'keys', 'create', 'cluster'], { cwd: ROOT, env: shared });
        if (migrated.code !== 0 || created.code !== 0) {
            throw new Error(`migrate or keys create failed: ${migrated.stderr}${created.stderr}`);
        }

        const auth = { authorization: `Bearer ${created.stdout.trim()}` };
        for (let i = 0; i < options.instances; i++) {
            const dataDir = await tempDir(`cluster-${i}`);
            dirs.push(dataDir);
            instances.push(ClusterInstance.create(String.fromCharCode(65 + i), { ...shared, INBOX_CAPTURE_DATA_DIR: dataDir }));
        }

        // Each on fresh ports, started again on others if one was taken meanwhile.
        await Promise.all(instances.map((instance) => instance.start()));
        const outcomes: Outcomes = { acknowledged: new Map(), inDoubt: new Map(), refused: new Map(), acksByInstance: {} };

        // A rule made through A, used up by commands to every instance at once.
        const rule = await fetch(`${instances[0]!.base}/v1/faults`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ stage: 'rcpt', match: { inbox: FAULT_INBOX }, reply: { code: 450 }, times: options.faultTimes })
        });
        if (rule.status !== 201) {
            throw new Error(`POST /v1/faults: ${rule.status}`);
        }

        const faultCodes = await runFaultTraffic(instances, options.faultAttempts, outcomes);
        const loadBegan = Date.now();
        const { rounds, kills } = await runLoad(instances, options, auth, outcomes);
        const loadMs = Date.now() - loadBegan;

        const settleBegan = Date.now();
        while ((await listInbox(instances[0]!, RETAINED_INBOX, auth)).length > options.retentionMaxPerInbox && Date.now() - settleBegan < RETENTION_SETTLE_MS) {
            await new Promise((resolve) => setTimeout(resolve, 250));
        }

        const listings = await auditListings(instances, outcomes, options.retentionMaxPerInbox, auth);
        const webhooks = await auditWebhooks(receiver, listings.stored, options.deliveryLimitMs);
        const wake = auditWakeRounds(rounds, kills);
        const faultRulesLeft = await Promise.all(instances.map(async (instance) => {
            const res = await fetch(`${instance.base}/v1/faults`, { headers: auth });
            return (await res.json() as { faults: unknown[] }).faults.length;
        }));

        const knex = openPostgresKnex(postgres.connectionString);
        let rowsStoredTwice: number;
        let rowsInDatabase: number;
        let pendingDeliveries: PendingDeliveries;
        try {
            const twice = await knex.raw('SELECT count(*)::int AS n FROM (SELECT 1 FROM emails GROUP BY inbox, source_id HAVING count(*) > 1) AS d') as { rows: { n: number }[] };
            const rows = await knex.raw('SELECT count(*)::int AS n FROM emails') as { rows: { n: number }[] };
            rowsStoredTwice = twice.rows[0]!.n;
            rowsInDatabase = rows.rows[0]!.n;
            // A missing POST with its row still in the outbox is late; one without a row is lost.
            const pending = await knex('webhook_deliveries').select('message_id', 'attempts', 'last_error') as Array<{ message_id: string; attempts: number; last_error: string | null }>;
            const missing = new Set(webhooks.missing);
            const ofMissing = pending.filter((row) => missing.has(row.message_id));
            pendingDeliveries = { rows: pending.length, ofMissing: ofMissing.length, maxAttempts: Math.max(0, ...pending.map((row) => Number(row.attempts))), lastError: ofMissing.find((row) => row.last_error)?.last_error ?? '' };
        }
        finally {
            await knex.destroy();
        }

        const exitCodes = await Promise.all(instances.map((instance) => instance.stop()));
        const rowsListed = [...listings.stored.values()].reduce((n, ids) => n + ids.length, 0);
        const failures = [...listings.failures, ...wake.failures];
        const expectCount = (what: string, got: number, want: number) => got !== want && failures.push(`${what}: ${got}, expected ${want}`);
        expectCount('450s of the fault rule', faultCodes[450] ?? 0, options.faultTimes);
        expectCount('250s to the fault inbox', faultCodes[250] ?? 0, options.faultAttempts - options.faultTimes);
        faultRulesLeft.forEach((left, i) => expectCount(`rules ${instances[i]!.name} lists after its times were used up`, left, 0));
        expectCount('emails stored twice', rowsStoredTwice, 0);
        expectCount('rows in the emails table (against the emails listed)', rowsInDatabase, rowsListed);
        expectCount('stored emails without a webhook POST and without a pending delivery (lost)', webhooks.missing.length - pendingDeliveries.ofMissing, 0);
        expectCount(`stored emails whose delivery is still pending after ${options.deliveryLimitMs} ms (late)`, pendingDeliveries.ofMissing, 0);
        expectCount('emails POSTed under two delivery ids', webhooks.splitIds, 0);
        const otherRefusals = [...outcomes.refused].filter(([id]) => !outcomes.acknowledged.has(id) && !id.startsWith('fault-'));
        expectCount('messages refused outside the fault rule', otherRefusals.length, 0);
        exitCodes.forEach((code, i) => expectCount(`exit code of ${instances[i]!.name} after SIGTERM`, code ?? -1, 0));
        if (failures.length > 0) {
            failures.push(...instances.map((instance) => instance.allOutput().slice(-4000)));
        }

        return {
            failures,
            acknowledged: outcomes.acknowledged.size,
            acksByInstance: outcomes.acksByInstance,
            inDoubt: outcomes.inDoubt.size,
            inDoubtStored: listings.inDoubtStored,
            refused: [...outcomes.refused.values()].reduce<Record<number, number>>((all, code) => ({ ...all, [code]: (all[code] ?? 0) + 1 }), {}),
            faultCodes,
            faultRulesLeft,
            rowsStoredTwice,
            rowsInDatabase,
            rowsListed,
            retainedCounts: listings.retainedCounts,
            kills,
            wake,
            webhooks,
            pendingDeliveries,
            exitCodes,
            durationMs: Date.now() - began,
            loadMs
        };
    }
    finally {
        await Promise.all(instances.map((instance) => instance.kill()));
        await receiver?.close();
        await s3?.stop();
        await postgres?.stop();
        await Promise.all(dirs.map((dir) => Fs.rm(dir, { recursive: true, force: true })));
    }
}

/** The report in a few lines, for the note and a failing test's output. */
export function describeCluster(report: ClusterReport): string {
    const q = (p: number) => report.wake.latenciesMs[Math.min(report.wake.latenciesMs.length - 1, Math.floor(p * report.wake.latenciesMs.length))]?.toFixed(1) ?? '-';
    return [
        `acknowledged ${report.acknowledged} (${Object.entries(report.acksByInstance).map(([n, c]) => `${n} ${c}`).join(', ')}); cut off by kills ${report.inDoubt}, of which stored ${report.inDoubtStored}; refused ${JSON.stringify(report.refused)}`,
        `kills: ${report.kills.map((k) => `${k.instance} after ${k.afterAcks} acks, down ${k.downMs} ms`).join('; ')}`,
        `rows: ${report.rowsInDatabase} in the database, ${report.rowsListed} listed, ${report.rowsStoredTwice} stored twice; retained inbox per instance ${report.retainedCounts.join(', ')}`,
        `fault rule: ${JSON.stringify(report.faultCodes)}; rules left per instance ${report.faultRulesLeft.join(', ')}`,
        `wake-ups: ${report.wake.rounds} rounds, ${report.wake.polls} polls, ${report.wake.cutByKill} cut by a kill; from the 250 to the answer p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`,
        `webhooks: ${report.webhooks.posts} POSTs, ${report.webhooks.cutOff} cut off by a kill, ${report.webhooks.repeated} deliveries sent twice, ${report.webhooks.missing.length} emails without one (waited ${report.webhooks.waitedMs} ms), ${report.pendingDeliveries.rows} deliveries pending (${report.pendingDeliveries.ofMissing} of those emails, up to ${report.pendingDeliveries.maxAttempts} attempts${report.pendingDeliveries.lastError ? `, e.g. ${report.pendingDeliveries.lastError}` : ''})`,
        `exit codes ${report.exitCodes.join(', ')}; load ${(report.loadMs / 1000).toFixed(1)} s, whole run ${(report.durationMs / 1000).toFixed(1)} s`,
        ...report.failures.map((failure) => `FAILURE: ${failure}`)
    ].join('\n');
}
