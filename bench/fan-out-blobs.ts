/**
 * Issue 17 item 2, reproduced against examples/standalone.js: one message to 100
 * recipients, sent over SMTP, and what the delivery added to storage. Two messages:
 * 2 MiB of text as an attachment (bytes added, time to the `250`), and about 100 KB
 * with 990 attachments (blobs created, time to the `250`). On the embedded default
 * (SQLite + files) blobs are files under `blobs/` plus rows of the `blobs` tables of
 * `inbox-capture.sqlite` and `blobs.sqlite`, and bytes are the whole data dir's; on
 * Postgres + S3 (s3rver), objects in the bucket and their bytes. Not part of `run.ts`
 * (a before/after of one attack, not a throughput figure); run it by hand:
 *
 *   node dist-bench/bench/fan-out-blobs.js [--recipients 100] [--backend sqlite|postgres|both]
 *
 * Importable: the attack harness calls reproduceFanOut() against a service it started.
 */

import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { countEmbeddedBlobs } from '../test/helpers/embedded-blobs';
import { startPostgres } from '../test/helpers/postgres';
import { startS3 } from '../test/helpers/s3';
import { BENCH_POSTGRES } from './postgres-options';
import { mib } from './process-rss';
import { SmtpSession } from './smtp-client';
import { startStandalone, type StandaloneOptions } from './standalone';

/** Longest wait for the `250`, ms: the issue saw 100 s before the fix. */
const REPLY_TIMEOUT_MS = 10 * 60_000;

/** Recipients of the reproductions (SMTP's cap). */
export const FAN_OUT_RECIPIENTS = 100;

/** The two messages. */
export type FanOutCase = 'large' | 'many-parts';

/** What one delivery to many recipients cost the service. */
export interface FanOutFigures {
    /** The reply to the end of DATA (250 when stored). */
    code: number;
    /** From the last byte of DATA to the reply, ms. */
    latencyMs: number;
    /** Bytes storage grew by (embedded: every file of the data dir, WAL included; S3: the bucket's objects). */
    bytesAdded: number;
    /** Blobs the delivery added (embedded: files under `blobs/` and rows of the `blobs` tables; S3: objects). */
    blobsAdded: number;
    /** Size of the message sent, bytes. */
    messageBytes: number;
}

const CRLF = '\r\n';

/**
 * A message of about `bytes` whose body is one text attachment (base64), so it is
 * stored as the raw message and one attachment blob, both larger than the 256 KiB
 * that go into SQLite: files, as the 2 MiB reproduction wrote.
 */
export function largeFanOutMessage(bytes = 2 * 1024 * 1024, messageId = 'fan-out-large@bench.test'): Buffer {
    const content = Buffer.alloc(Math.floor(bytes * 0.74), 'attachment text 0123456789\n');
    const base64 = content.toString('base64').replace(/.{76}/g, `$&${CRLF}`);
    return Buffer.from([
        'From: a@bench.test', 'To: many@bench.test', 'Subject: fan-out large', `Message-ID: <${messageId}>`, 'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"', '',
        '--b', 'Content-Type: text/plain', '', 'see the attachment',
        '--b', 'Content-Type: text/plain; name="big.txt"', 'Content-Disposition: attachment; filename="big.txt"', 'Content-Transfer-Encoding: base64', '',
        base64,
        '--b--', ''
    ].join(CRLF));
}

/** A message of about 100 KB with `parts` small attachments, as the second reproduction. */
export function manyPartsFanOutMessage(parts = 990, messageId = 'fan-out-parts@bench.test'): Buffer {
    const lines = ['From: a@bench.test', 'To: many@bench.test', 'Subject: fan-out parts', `Message-ID: <${messageId}>`, 'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: text/plain', '', 'many parts'];
    for (let i = 0; i < parts; i++) {
        lines.push('--b', `Content-Disposition: attachment; filename="p${i}.bin"`, '', `part ${i} `.padEnd(40, 'x'));
    }

    lines.push('--b--', '');
    return Buffer.from(lines.join(CRLF));
}

/** Bytes of every file under `dir`. */
async function bytesUnder(dir: string): Promise<number> {
    let total = 0;
    for (const entry of await Fs.readdir(dir, { withFileTypes: true, recursive: true })) {
        if (entry.isFile()) {
            total += (await Fs.stat(Path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
        }
    }

    return total;
}

/** Where a service keeps its blobs, as the reproduction measures it. */
export interface BlobStorage {
    /** Bytes held and blobs stored now. */
    measure(): Promise<{ bytes: number; blobs: number }>;
}

/** The embedded default's data dir: every file's bytes; files under `blobs/` and rows of both `blobs` tables. */
export function embeddedStorage(dataDir: string): BlobStorage {
    return {
        async measure() {
            const count = await countEmbeddedBlobs(dataDir);
            return { bytes: await bytesUnder(dataDir), blobs: count.files + count.withRecords + count.separate };
        }
    };
}

/** An S3 bucket: its objects and their bytes. */
export function s3Storage(client: S3Client, bucket: string): BlobStorage {
    return {
        async measure() {
            let bytes = 0;
            let blobs = 0;
            let token: string | undefined;
            do {
                const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
                for (const object of page.Contents ?? []) {
                    bytes += object.Size ?? 0;
                    blobs++;
                }

                token = page.IsTruncated ? page.NextContinuationToken : undefined;
            } while (token !== undefined);
            return { bytes, blobs };
        }
    };
}

/**
 * Sends the case's message once over SMTP to `recipients` distinct inboxes of a running
 * service (its SMTP port), and measures what the delivery added to `storage`.
 */
export async function reproduceFanOut(smtpPort: number, storage: BlobStorage, which: FanOutCase, recipients = FAN_OUT_RECIPIENTS): Promise<FanOutFigures> {
    const message = which === 'large' ? largeFanOutMessage() : manyPartsFanOutMessage();
    const before = await storage.measure();
    const session = await SmtpSession.open(smtpPort, '127.0.0.1', false, REPLY_TIMEOUT_MS);
    try {
        const to = Array.from({ length: recipients }, (_, i) => `fan${i}-${which}@bench.test`);
        const { code, latencyMs } = await session.send('a@bench.test', to, [message]);
        const after = await storage.measure();
        return { code, latencyMs, bytesAdded: after.bytes - before.bytes, blobsAdded: after.blobs - before.blobs, messageBytes: message.length };
    }
    finally {
        await session.close();
    }
}

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

/** Both cases against one configuration, a fresh service (and bucket) per case. */
async function runCases(backend: string, recipients: number, start: () => Promise<{ smtpPort: number; storage: BlobStorage; stop(): Promise<void> }>): Promise<void> {
    for (const which of ['large', 'many-parts'] as const) {
        const service = await start();
        try {
            const f = await reproduceFanOut(service.smtpPort, service.storage, which, recipients);
            console.log(`${backend}, ${which}: message ${(f.messageBytes / 1024).toFixed(0)} KiB to ${recipients} recipients: ${f.code} after ${f.latencyMs.toFixed(0)} ms; ` +
                `storage +${mib(f.bytesAdded)} MiB, +${f.blobsAdded} blobs`);
        }
        finally {
            await service.stop();
        }
    }
}

async function main(): Promise<void> {
    const recipients = Number(option('recipients', String(FAN_OUT_RECIPIENTS)));
    const backend = option('backend', 'both');
    if (backend !== 'postgres') {
        await runCases('SQLite + files', recipients, async () => {
            const service = await startStandalone();
            return { smtpPort: service.smtpPort, storage: embeddedStorage(service.dataDir), stop: () => service.stop() };
        });
    }

    if (backend !== 'sqlite') {
        const pg = await startPostgres(BENCH_POSTGRES);
        const s3 = await startS3();
        const client = s3.createClient();
        try {
            await runCases('Postgres + S3', recipients, async () => {
                const options: StandaloneOptions = { databaseUrl: await pg.createDatabase(), s3: { endpoint: s3.endpoint, bucket: await s3.createBucket() } };
                const service = await startStandalone(options);
                return { smtpPort: service.smtpPort, storage: s3Storage(client, options.s3!.bucket), stop: () => service.stop() };
            });
        }
        finally {
            await s3.stop();
            await pg.stop();
        }
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err);
        process.exit(1);
    });
}
