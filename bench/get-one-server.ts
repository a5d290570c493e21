/**
 * The server of the GET-one benchmark, in a process of its own (the load generator
 * is the parent): Hapi with the inbox-capture plugin on the embedded stores, as
 * the standalone example runs it, plus a bare hello-world route on the same
 * server as the ceiling. argv: <data dir> [--smoke]. Sends `{ port, apiKey, messageIds }`
 * over IPC once listening, answers `'cpu'` with its CPU time so far (µs, all threads:
 * the SQLite thread pool included); exits when the parent disconnects.
 */
import * as Hapi from '@hapi/hapi';
import { plugin } from '../adapters/hapi';
import { openEmbeddedStores } from '../lib/service/embedded-stores';
import { createInboxCapture } from '../lib/service/inbox-capture';
import { GET_ONE_PROFILE, GET_ONE_STORED, GET_ONE_STORED_SMOKE, GET_ONE_TAG } from './get-one-emails';
import { profiles, recipientOf } from './profiles';


async function main(): Promise<void> {
    const capture = createInboxCapture(await openEmbeddedStores({ dataDir: process.argv[2] }));
    const server = Hapi.server({ host: '127.0.0.1', port: 0 });
    await server.register({ plugin, options: { capture } });
    server.route({ method: 'GET', path: '/hello', options: { auth: false }, handler: () => 'hello world' });
    await server.start();

    const profile = profiles()[GET_ONE_PROFILE];
    const messageIds: string[] = [];
    for (let seq = 0, stored = process.argv.includes('--smoke') ? GET_ONE_STORED_SMOKE : GET_ONE_STORED; seq < stored; seq++) {
        const [view] = await capture.ingestRawEmail(profile.message(seq, recipientOf(GET_ONE_TAG, seq), GET_ONE_TAG));
        messageIds.push(view.messageId);
    }

    const apiKey = await capture.createKey('bench');
    process.on('message', (message) => {
        if (message === 'cpu') {
            const { user, system } = process.cpuUsage();
            process.send!({ cpuUs: user + system });
        }
    });
    process.send!({ port: server.info.port, apiKey, messageIds });
    process.on('disconnect', () => {
        void server.stop({ timeout: 1000 }).then(() => capture.close()).finally(() => process.exit(0));
    });
}

main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
});
