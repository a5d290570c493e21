/**
 * Runs MailDev 3.0.0 (npm alias `maildev3`) in a process of its own at its defaults:
 * in-memory storage (each message's .eml still written under os.tmpdir()/maildev),
 * web UI and API on, no relay. Only the ports and the loopback address are set.
 * argv: <smtp port> <web port> <tmpdir>; speaks reference-child.ts's IPC, its count
 * being the messages in MailDev's storage.
 */
import { exitOnError, serveReferenceIpc, waitForHttp } from './reference-child';

interface MailDev3 {
    start(): Promise<{ storage: { count(): Promise<number> } }>;
}

const [smtpPort, webPort, tmpDir] = process.argv.slice(2);
// The default mail directory is os.tmpdir()/maildev: a fresh tmpdir keeps the default and is removed afterwards.
process.env.TMPDIR = tmpDir;

// MailDev 3 is an ES module only; this file compiles to CommonJS, where TypeScript
// would turn import() into require().
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<{ MailDev: new (config: Record<string, unknown>) => MailDev3 }>;

async function main(): Promise<void> {
    const { MailDev } = await importModule('maildev3');
    const maildev = new MailDev({ smtp: Number(smtpPort), web: Number(webPort), ip: '127.0.0.1', webIp: '127.0.0.1', silent: true });
    const { storage } = await maildev.start();
    await waitForHttp(`http://127.0.0.1:${webPort}/api/healthz`);
    serveReferenceIpc(() => storage.count());
}

main().catch(exitOnError);
