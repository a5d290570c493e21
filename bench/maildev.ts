import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import { freePort } from './net-util';

/** Longest wait for MailDev to listen, ms. */
const START_TIMEOUT_MS = 30_000;

/** A running MailDev (npm `maildev` 2.x) to compare with. */
export interface MailDev {
    pid: number;
    smtpPort: number;
    /** Messages MailDev has parsed and put in its store so far. */
    count(): Promise<number>;
    stop(): Promise<void>;
}

/** Starts MailDev in a child process on a free loopback port, mail kept in a fresh temp dir. */
export async function startMailDev(): Promise<MailDev> {
    const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), 'ic-bench-maildev-'));
    const smtpPort = await freePort();
    const child: ChildProcess = fork(Path.join(__dirname, 'maildev-child.js'), [String(smtpPort), dir], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    await Promise.race([
        new Promise<void>((resolve) => child.on('message', (m: { listening?: boolean }) => m.listening && resolve())),
        once(child, 'exit').then(() => {
            throw new Error('MailDev exited before listening');
        })
    ]);
    clearTimeout(timer);
    return {
        pid: child.pid!,
        smtpPort,
        count() {
            return new Promise((resolve) => {
                const onMessage = (m: { count?: number }) => {
                    if (typeof m.count === 'number') {
                        child.off('message', onMessage);
                        resolve(m.count);
                    }
                };

                child.on('message', onMessage);
                child.send({ count: true });
            });
        },
        async stop() {
            if (child.exitCode === null && child.signalCode === null) {
                const exited = once(child, 'exit');
                child.send({ stop: true });
                await exited;
            }

            await Fs.rm(dir, { recursive: true, force: true });
        }
    };
}
