/**
 * The floor over SMTP: smtp-server with our listener's options in front of floor-store.ts
 * (parse on this thread, group commit, the `250` after the batch's COMMIT), in a child
 * process of its own as ours and the other references run. Run as a script, this file is
 * that child: argv `<port> <sqlite file> <index|no-index|obligations>`; it speaks reference-child.ts's IPC.
 */
import type { Readable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import { tempDir } from '../test/helpers/temp-dir';
import { openFloorStore } from './floor-store';
import { exitOnError, serveReferenceIpc } from './reference-child';
import { forkReferenceServer, type ReferenceServer } from './reference-server';
import { listenerDefaults } from './smtp-sink';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';

/** How the floor stores: indexed, without the index, or indexed with our storage obligations (floor-store.ts). */
export type FloorKind = 'index' | 'no-index' | 'obligations';

/** Starts the floor in a child process on a free loopback port, in a fresh temp dir (`dir`, its SQLite file in it) removed after it stops. */
export async function startFloorServer(kind: FloorKind = 'index'): Promise<ReferenceServer & { dir: string }> {
    const dir = await tempDir('bench-floor');
    const server = await forkReferenceServer('floor', __filename, 1, ([smtpPort]) => [String(smtpPort), Path.join(dir, `floor-${smtpPort}.sqlite`), kind],
        () => Fs.rm(dir, { recursive: true, force: true }));
    return { ...server, dir };
}

function readAll(stream: Readable): Promise<Buffer> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.once('end', () => resolve(Buffer.concat(chunks)));
        stream.once('error', reject);
    });
}

async function serve(port: number, filename: string, kind: string): Promise<void> {
    const store = await openFloorStore(filename, { index: kind !== 'no-index', obligations: kind === 'obligations' });
    const server = new SMTPServer({
        ...listenerDefaults(),
        onData(stream, session, callback) {
            readAll(stream)
                .then((raw) => Promise.all(session.envelope.rcptTo.map((rcpt) => store.save(raw, rcpt.address))))
                .then(() => callback(null, 'OK: stored'), (err: Error) => callback(err));
        }
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    serveReferenceIpc(() => store.count);
}

if (require.main === module) {
    const [port, filename, kind] = process.argv.slice(2);
    serve(Number(port), filename, kind).catch(exitOnError);
}
