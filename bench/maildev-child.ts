/**
 * Runs MailDev 2.2.1 (npm `maildev`) in a process of its own (as our service runs in
 * its own) at its defaults: web UI and API on, mail in memory and in its default
 * directory under the tmpdir, no relay. Only the ports and the loopback address are
 * set. argv: <smtp port> <web port> <tmpdir>; speaks reference-child.ts's IPC, its
 * count being the messages MailDev has parsed and stored.
 */
import { createRequire } from 'node:module';
import { exitOnError, serveReferenceIpc, waitForHttp } from './reference-child';

interface MailDevServer {
    listen(): Promise<void>;
    store: unknown[];
}

const [smtpPort, webPort, tmpDir] = process.argv.slice(2);
// MailDev 2 picks its default mail directory (os.tmpdir()/maildev-<pid>) when loaded:
// a fresh tmpdir keeps that default while the bench removes it afterwards.
process.env.TMPDIR = tmpDir;
// maildev ships no types; it is a dev dependency of the bench only.
const createMailDev = createRequire(__filename)('maildev') as (config: Record<string, unknown>) => MailDevServer;

const maildev = createMailDev({ smtp: Number(smtpPort), web: Number(webPort), ip: '127.0.0.1', silent: true });
maildev.listen()
    // Its web server starts without telling when it listens.
    .then(() => waitForHttp(`http://127.0.0.1:${webPort}/email`))
    .then(() => serveReferenceIpc(() => maildev.store.length), exitOnError);
