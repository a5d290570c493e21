/**
 * The embedded store's save transaction in a thread of its own (docs/design.md, "SQLite
 * connections"). On the service's event loop each statement of a save (BEGIN, the lookup,
 * the inserts, COMMIT) waited for its callback behind whatever that loop was doing, parsing
 * and SMTP sessions; in the writer thread (sqlite-writer-worker.ts) the transaction runs
 * from BEGIN to its fsync'd COMMIT without the main thread, which posts the batch and gets
 * its result back. Same interface, same guarantees as the in-thread batch writer: the
 * promise resolves once the commit is durable; writers still take turns (the caller's line).
 */

import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { StagedBlob } from '../../blob-store/blob-store';
import type { SqliteConnectionOptions } from '../../sqlite/knex';
import type { EmailDraft, EmailRecord } from '../../types';
import { startWorkerScript } from '../../util/worker-script';
import type { DeliveryTarget, SaveResult } from '../record-store';
import type { BatchWriterObserver, SqliteBatchWriter } from './sqlite-batch-writer';
import { recordOfDraft } from '../sql/save-plan';

/** What the main thread posts to the writer thread: a batch to save, or the close. */
export type WriterRequest =
    | { id: number; close?: undefined; deliveries: EmailDraft[][]; blobs: Array<Omit<StagedBlob, 'content'> & { content: Uint8Array }>; targets: (DeliveryTarget[][] | undefined)[] }
    | { close: true };

/** One delivery's result as posted back: the ids its drafts were saved under (the records are the drafts with them). */
export interface PostedResult {
    savedIds: string[];
    replaced: EmailRecord[];
    removedBlobKeys?: string[];
}

/** What the writer thread posts back: a batch's results, or its error as plain data. */
export type WriterReply =
    | { id: number; results: PostedResult[]; error?: undefined }
    | { id: number; error: { name: string; message: string; stack?: string; code?: unknown; errno?: unknown } };

interface Pending {
    deliveries: EmailDraft[][];
    resolve(results: SaveResult[]): void;
    reject(err: Error): void;
}

/** A batch writer on the migrated SQLite file `filename`, in a worker thread started on first use. */
export function openSqliteWriterThread(filename: string, observer?: BatchWriterObserver, script = join(__dirname, 'sqlite-writer-worker'), connection: SqliteConnectionOptions = {}): SqliteBatchWriter {
    let worker: Worker | undefined;
    const pending = new Map<number, Pending>();
    let nextId = 1;

    const failAll = (err: Error) => {
        for (const job of pending.values()) {
            job.reject(err);
        }

        pending.clear();
    };

    const start = (): Worker => {
        const started = startWorkerScript(script, { workerData: { filename, connection } });
        started.on('message', (reply: WriterReply) => {
            const job = pending.get(reply.id);
            pending.delete(reply.id);
            if (pending.size === 0) {
                started.unref();
            }

            if (!job) {
                return;
            }

            if (reply.error) {
                const err = Object.assign(new Error(reply.error.message), { code: reply.error.code, errno: reply.error.errno });
                err.name = reply.error.name;
                err.stack = reply.error.stack;
                observer?.error?.(err);
                job.reject(err);
                return;
            }

            observer?.commit?.(job.deliveries.length);
            job.resolve(reply.results.map(({ savedIds, replaced, removedBlobKeys }, i) => ({
                saved: savedIds.map((messageId, j) => recordOfDraft(job.deliveries[i]![j]!, messageId).record),
                replaced,
                ...(removedBlobKeys ? { removedBlobKeys } : {})
            })));
        });
        // A thread that dies fails what it held (nothing of it acknowledged); the next save starts another.
        const lost = (err: Error) => {
            if (worker === started) {
                worker = undefined;
            }

            failAll(err);
        };
        started.on('error', lost);
        started.on('exit', (code) => lost(new Error(`the SQLite writer thread exited (code ${code})`)));
        started.unref();
        return started;
    };

    return {
        save(deliveries, blobs, targets = []) {
            worker ??= start();
            const id = nextId++;
            const request: WriterRequest = { id, deliveries, blobs, targets };
            return new Promise<SaveResult[]>((resolve, reject) => {
                pending.set(id, { deliveries, resolve, reject });
                worker!.ref();
                worker!.postMessage(request);
            });
        },

        async close() {
            const current = worker;
            worker = undefined;
            if (!current) {
                return;
            }

            // The thread finishes the batch in flight (the caller awaited it first), closes its connection, and ends.
            const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
            current.ref();
            current.postMessage({ close: true } satisfies WriterRequest);
            await exited;
        }
    };
}
