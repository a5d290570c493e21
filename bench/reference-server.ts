import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** Longest wait for a reference server to listen, ms. */
const START_TIMEOUT_MS = 30_000;

/** An SMTP server the benchmark compares with (MailDev, a sink), in a child process of its own. */
export interface ReferenceServer {
    pid: number;
    smtpPort: number;
    /** Messages it has taken so far (its child answers `{ count: true }`). */
    count(): Promise<number>;
    stop(): Promise<void>;
}

/**
 * Forks `modulePath` with `args` and waits for its `{ listening: true }`; the handle
 * speaks the children's IPC (`{ count: true }` → `{ count }`, `{ stop: true }` exits).
 * `afterStop` runs once the child has exited (its temp dir, say).
 */
export async function forkReferenceServer(label: string, modulePath: string, args: string[], smtpPort: number, afterStop: () => Promise<void> = async () => undefined): Promise<ReferenceServer> {
    const child: ChildProcess = fork(modulePath, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    try {
        await Promise.race([
            new Promise<void>((resolve) => child.on('message', (m: { listening?: boolean }) => m.listening && resolve())),
            once(child, 'exit').then(() => {
                throw new Error(`${label} exited before listening`);
            })
        ]);
    }
    finally {
        clearTimeout(timer);
    }

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

            await afterStop();
        }
    };
}
