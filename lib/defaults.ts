/**
 * The service's defaults, each written once: where the embedded stores keep their files,
 * the size caps, the memory budget, timeouts and lifetimes. createInboxCapture() applies
 * them (service-options.ts); the plugin, the SMTP listener, the CLI and the standalone
 * program read them from here or take the settled values from the service.
 */

import { availableParallelism } from 'node:os';

/** Directory of the embedded stores, relative to the working directory (docs/design.md). */
export const DEFAULT_DATA_DIR = './data';
/** File name of the SQLite database (records, keys, small blobs) inside the data dir. */
export const SQLITE_FILENAME = 'inbox-capture.sqlite';
/** Directory of the filesystem blobs (the large ones) inside the data dir. */
export const BLOBS_DIRNAME = 'blobs';
/**
 * SQLite file of the small blobs that are put() rather than committed with records
 * (records in Postgres, a direct put): its own writer, its own commits. Ingests with
 * the embedded record store commit small blobs in the records' file instead.
 */
export const BLOBS_SQLITE_FILENAME = 'blobs.sqlite';

/** Largest accepted message, bytes: 25 MiB, the common provider limit; the raw message is held in memory once. */
export const DEFAULT_MAX_MESSAGE_BYTES = 25 * 1024 * 1024;
/**
 * Raw message bytes in flight, by default: 128 MiB, five messages at the 25 MiB cap.
 * Parsing costs a few times a message's raw size (bench/README.md), so this keeps a
 * process near 600 MiB above its idle size, well inside a small container, while five
 * senders still go at once.
 */
export const DEFAULT_MESSAGE_BUDGET_BYTES = 128 * 1024 * 1024;
/**
 * Longest wait for one blob store call of an ingest (a write, or a delete that
 * cleans up), ms: 30 s. A store that never answers (a hung NFS mount, an S3
 * endpoint that accepts the connection and then goes silent) must not hold the
 * SMTP session until the client gives up; 30 s is far above a healthy write of a
 * 25 MiB blob to a local disk or a nearby bucket.
 */
export const DEFAULT_BLOB_STORE_TIMEOUT_MS = 30_000;
/** Download links live 15 minutes (docs/design.md), seconds. */
export const DEFAULT_DOWNLOAD_TTL_SECONDS = 900;
/** Default pause between two retention passes, ms: `60s` (docs/operations.md, "Retention"). */
export const DEFAULT_RETENTION_INTERVAL_MS = 60_000;
/** Blobs younger than this may belong to an ingest still in flight: the sweep leaves them, ms. */
export const ORPHAN_GRACE_MS = 10 * 60_000;
/** The standalone service sweeps orphan blobs hourly: a crash leaves few, and listing every blob costs. */
export const DEFAULT_ORPHAN_SWEEP_INTERVAL_MS = 60 * 60_000;
/**
 * Parse worker threads of a service, at most: one per core, up to 4. Every message is
 * parsed off the event loop (docs/operations.md, "The parse worker"); more workers than
 * cores would only take turns, and past 4 the SMTP sessions of one event loop feed no more.
 */
export const DEFAULT_PARSE_WORKERS = Math.max(1, Math.min(availableParallelism(), 4));
/**
 * A parse that has used this much CPU is abandoned, ms: 10 s (three times it in wall time at
 * most, docs/operations.md "The parse worker"). Its worker is replaced
 * and the message stored with what the envelope gives (docs/guarantees.md). Far above
 * any real message (a 25 MiB one parses in about a second here), short enough that a
 * sender's SMTP client is still waiting.
 */
export const DEFAULT_PARSE_TIMEOUT_MS = 10_000;
/**
 * How old an instance's copy of the SMTP fault rules may be before a command reads them
 * again, ms, and so how long a change of the rules waits before it answers (then every
 * instance's next command sees it): a busy listener with no rule reads the store ten times
 * a second, not once a command, and creating a rule takes a tenth of a second.
 */
export const DEFAULT_FAULT_REFRESH_MS = 100;
