import * as Path from 'node:path';
import { spawnNode, stopGracefully, waitForOutput, type Spawned } from '../../helpers/child-process';
import { freePort, retryWhilePortTaken } from '../../helpers/net';

const ROOT = Path.join(__dirname, '..', '..', '..');
const STANDALONE = Path.join(ROOT, 'examples', 'standalone.js');

/** Longest wait for an instance to start or stop, ms: a hang, not a speed claim. */
const PROCESS_LIMIT_MS = 30_000;

/**
 * One `examples/standalone.js` of the cluster. Its ports stay the same across a kill and
 * a restart, so the clients that knew it find it again, as behind a fixed address.
 */
export class ClusterInstance {
    /** The running process; undefined between a kill and the restart. */
    private process: Spawned | undefined;
    /** Set once the process listens; cleared by a kill. */
    private ready = false;
    /** How many times this instance was started. */
    starts = 0;
    /** Everything the earlier processes printed (a killed one's output is kept for a failure's report). */
    private earlierOutput = '';

    /** Its HTTP and SMTP ports: those of the first start that listened (0 before), kept by every restart. */
    private ports = { port: 0, smtpPort: 0 };

    private constructor(readonly name: string, private readonly env: NodeJS.ProcessEnv) {}

    /** An instance not started yet: its first start() picks its ports. */
    static create(name: string, env: NodeJS.ProcessEnv): ClusterInstance {
        return new ClusterInstance(name, env);
    }

    get port(): number {
        return this.ports.port;
    }

    get smtpPort(): number {
        return this.ports.smtpPort;
    }

    /** `http://127.0.0.1:<port>` */
    get base(): string {
        return `http://127.0.0.1:${this.port}`;
    }

    /** True while a process listens (started, not killed, not stopped). */
    get up(): boolean {
        return this.ready && this.process !== undefined && this.process.child.exitCode === null && this.process.child.signalCode === null;
    }

    /**
     * Starts the process; resolves once it listens on both ports. The first start takes fresh
     * ports, and fresh ones again while a port was taken meanwhile; a restart keeps them.
     */
    async start(): Promise<void> {
        if (this.port !== 0) {
            return this.startOn(this.ports);
        }

        await retryWhilePortTaken(async () => this.startOn({ port: await freePort(), smtpPort: await freePort() }));
    }

    /** Starts the process on `ports`, its own from then on; resolves once it listens on both, or kills it and throws (with what it printed). */
    private async startOn(ports: { port: number; smtpPort: number }): Promise<void> {
        const spawned = spawnNode([STANDALONE], {
            cwd: ROOT,
            env: { ...this.env, HOST: '127.0.0.1', PORT: String(ports.port), SMTP_PORT: String(ports.smtpPort) }
        });
        this.process = spawned;
        this.starts++;
        try {
            await waitForOutput(spawned, /^create an API key: /m, { timeoutMs: PROCESS_LIMIT_MS });
            this.ports = ports;
            this.ready = true;
        }
        catch (err) {
            spawned.child.kill('SIGKILL');
            await spawned.exited;
            throw err;
        }
    }

    /** kill -9: no stop of its own, connections cut, claims left behind. */
    async kill(): Promise<void> {
        const spawned = this.process;
        this.ready = false;
        if (!spawned || spawned.child.exitCode !== null || spawned.child.signalCode !== null) {
            return;
        }

        spawned.child.kill('SIGKILL');
        await spawned.exited;
        this.earlierOutput += this.output();
        this.process = undefined;
    }

    /** SIGTERM; the exit code (a kill after the limit: a hang). */
    async stop(): Promise<number | null> {
        const spawned = this.process;
        if (!spawned) {
            return null;
        }

        this.ready = false;
        return stopGracefully(spawned, PROCESS_LIMIT_MS);
    }

    /** What this instance's processes printed so far, for a failure's report. */
    allOutput(): string {
        return this.earlierOutput + this.output();
    }

    private output(): string {
        return this.process ? `--- ${this.name} (start ${this.starts}) stdout:\n${this.process.stdout()}\n--- stderr:\n${this.process.stderr()}\n` : '';
    }
}
