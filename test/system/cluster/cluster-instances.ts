import * as Path from 'node:path';
import { spawnNode, stopGracefully, waitForOutput, type Spawned } from '../../helpers/child-process';
import { freePort } from '../../helpers/net';

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

    private constructor(readonly name: string, readonly port: number, readonly smtpPort: number, private readonly env: NodeJS.ProcessEnv) {}

    /** Picks free ports; start() starts the process. */
    static async create(name: string, env: NodeJS.ProcessEnv): Promise<ClusterInstance> {
        return new ClusterInstance(name, await freePort(), await freePort(), env);
    }

    /** `http://127.0.0.1:<port>` */
    get base(): string {
        return `http://127.0.0.1:${this.port}`;
    }

    /** True while a process listens (started, not killed, not stopped). */
    get up(): boolean {
        return this.ready && this.process !== undefined && this.process.child.exitCode === null && this.process.child.signalCode === null;
    }

    /** Starts the process; resolves once it listens on both ports. */
    async start(): Promise<void> {
        const spawned = spawnNode([STANDALONE], {
            cwd: ROOT,
            env: { ...this.env, HOST: '127.0.0.1', PORT: String(this.port), SMTP_PORT: String(this.smtpPort) }
        });
        this.process = spawned;
        this.starts++;
        try {
            await waitForOutput(spawned, /^create an API key: /m, { timeoutMs: PROCESS_LIMIT_MS });
            this.ready = true;
        }
        catch (err) {
            spawned.child.kill('SIGKILL');
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
