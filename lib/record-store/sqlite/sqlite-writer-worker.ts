/**
 * The SQLite writer thread (sqlite-writer-thread.ts): runs the embedded store's save
 * transactions (sqlite-batch-writer.ts) on a connection of its own, in a thread whose
 * event loop does nothing else. Each statement's callback, up to the COMMIT and its fsync,
 * runs here at once instead of waiting for the service's event loop, busy with SMTP sessions.
 */

import { parentPort, workerData } from 'node:worker_threads';
import type { StagedBlob } from '../../blob-store/blob-store';
import type { SqliteConnectionOptions } from '../../sqlite/knex';
import { openSqliteBatchWriter } from './sqlite-batch-writer';
import type { WriterReply, WriterRequest } from './sqlite-writer-thread';

const { filename, connection } = workerData as { filename: string; connection: SqliteConnectionOptions };
const writer = openSqliteBatchWriter(filename, undefined, connection);
const port = parentPort!;

port.on('message', (request: WriterRequest) => {
    if (request.close) {
        void writer.close().finally(() => port.close());
        return;
    }

    void save(request);
});

async function save({ id, deliveries, blobs, targets }: Extract<WriterRequest, { id: number }>): Promise<void> {
    let reply: WriterReply;
    try {
        // Posted buffers arrive as plain Uint8Arrays: node-sqlite3 binds a Buffer as a BLOB.
        const staged: StagedBlob[] = blobs.map((b) => ({ ...b, content: Buffer.from(b.content.buffer, b.content.byteOffset, b.content.byteLength) }));
        const results = await writer.save(deliveries, staged, targets);
        reply = {
            id,
            results: results.map(({ saved, replaced, removedBlobKeys }) => ({ savedIds: saved.map((r) => r.messageId), replaced, removedBlobKeys }))
        };
    }
    catch (err) {
        const e = err as Error & { code?: unknown; errno?: unknown };
        reply = { id, error: { name: e.name, message: e.message, stack: e.stack, code: e.code, errno: e.errno } };
    }

    port.postMessage(reply);
}
