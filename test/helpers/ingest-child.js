'use strict';

// A process that stores mail and is then killed (crash-recovery and durability tests).
// It runs the compiled package (dist/), configured like the standalone service by
// environment variables (INBOX_CAPTURE_DATA_DIR, DATABASE_URL, S3_BUCKET, ...).
//
//   node test/helpers/ingest-child.js smtp
//       The SMTP listener on 127.0.0.1, a free port; prints `listening <port>` once it
//       accepts mail, and runs until killed.
//   node test/helpers/ingest-child.js once <recipient>
//       Stores the message read from stdin, prints `stored <messageId>` and at once
//       SIGKILLs itself: nothing (no close, no checkpoint, no exit hook) runs after
//       the ingest resolved.
//
// INGEST_CHILD_BLOB_STORE=fs keeps every blob as a file under <data dir>/blobs (the plain
// fs store) instead of the embedded default's SQLite tier, for tests of the file store's
// own durability.

const Fs = require('node:fs');
const Path = require('node:path');

const DIST = Path.join(__dirname, '..', '..', 'dist');
const { createInboxCapture } = require(Path.join(DIST, 'lib', 'service', 'inbox-capture'));
const { createSmtpListener } = require(Path.join(DIST, 'adapters', 'smtp'));
const { openStoresFromConfig, readEnvConfig } = require(Path.join(DIST, 'adapters', 'standalone', 'env-config'));
const { createFsBlobStore } = require(Path.join(DIST, 'lib', 'blob-store', 'fs-blob-store'));
const { BLOBS_DIRNAME } = require(Path.join(DIST, 'lib', 'defaults'));

async function openStores() {
    const config = readEnvConfig();
    const stores = await openStoresFromConfig(config);
    if (process.env.INGEST_CHILD_BLOB_STORE !== 'fs') {
        return stores;
    }

    await stores.blobStore.close();
    const blobStore = createFsBlobStore({ root: Path.join(config.dataDir, BLOBS_DIRNAME), signingSecret: 'ingest child signing secret' });
    return { ...stores, blobStore };
}

async function main() {
    const [mode, recipient] = process.argv.slice(2);
    const capture = createInboxCapture(await openStores());
    await capture.start();

    if (mode === 'smtp') {
        const listener = createSmtpListener({ capture, host: '127.0.0.1', port: 0 });
        const { port } = await listener.listen();
        process.stdout.write(`listening ${port}\n`);
        return;
    }

    if (mode === 'once') {
        const [view] = await capture.ingestRawEmail(process.stdin, { recipients: [recipient] });
        // Synchronous write, then the kill: the line is out before the process dies.
        Fs.writeSync(1, `stored ${view.messageId}\n`);
        process.kill(process.pid, 'SIGKILL');
        return;
    }

    throw new Error(`unknown mode ${JSON.stringify(mode)}: smtp or once`);
}

main().catch((err) => {
    process.stderr.write(`ingest-child: ${err && err.stack || err}\n`);
    process.exit(1);
});
