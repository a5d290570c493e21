import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort, retryWhilePortTaken } from '../test/helpers/net';

/** Longest wait for a reference server to listen, ms. */
const START_TIMEOUT_MS = 30_000;

/** An SMTP server the benchmark compares with (MailDev, a sink), in a child process of its own. */
export interface ReferenceServer {
    pid: number;
    smtpPort: number;
    /** Every port it was given, the SMTP port first. */
    ports: number[];
    /** Messages it has taken so far (its child answers `{ count: true }`). */
    count(): Promise<number>;
    stop(): Promise<void>;
}

/** How much of a child's stderr is kept for the error when it exits before listening. */
const STDERR_TAIL_CHARS = 4_000;

/**
 * Forks `modulePath` with `args(ports)` on `portCount` free loopback ports (the SMTP port
 * first) and waits for its `{ listening: true }`; a child that exits because a port was
 * taken meanwhile is started again on fresh ports. The handle speaks the children's IPC
 * (`{ count: true }` → `{ count }`, `{ stop: true }` exits). `afterStop` runs once the
 * child has exited (its temp dir, say).
 */
export function forkReferenceServer(label: string, modulePath: string, portCount: number, args: (ports: number[]) => string[], afterStop: () => Promise<void> = async () => undefined): Promise<ReferenceServer> {
    return retryWhilePortTaken(async () => {
        const ports: number[] = [];
        while (ports.length < portCount) {
            ports.push(await freePort());
        }

        return handleOf(await forkListening(label, modulePath, args(ports)), ports, afterStop);
    });
}

/** Forks the child and resolves once it listens; its stderr's tail names why it exited early. */
async function forkListening(label: string, modulePath: string, args: string[]): Promise<ChildProcess> {
    const child: ChildProcess = fork(modulePath, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    // Until it listens its stderr is kept for the error (a start tried again says nothing); then it passes through.
    let stderr = '';
    let listening = false;
    child.stderr!.on('data', (chunk: Buffer) => {
        if (listening) {
            process.stderr.write(chunk);
        }
        else {
            stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
        }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    try {
        await Promise.race([
            new Promise<void>((resolve) => child.on('message', (m: { listening?: boolean }) => m.listening && resolve())),
            once(child, 'exit').then(() => {
                throw new Error(`${label} exited before listening: ${stderr}`);
            })
        ]);
    }
    finally {
        clearTimeout(timer);
    }

    listening = true;
    process.stderr.write(stderr);
    return child;
}

function handleOf(child: ChildProcess, ports: number[], afterStop: () => Promise<void>): ReferenceServer {
    return {
        pid: child.pid!,
        smtpPort: ports[0],
        ports,
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
