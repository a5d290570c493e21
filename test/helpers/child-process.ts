import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The exit code of a finished process and everything it printed. */
export interface RunResult {
    code: number | null;
    stdout: string;
    stderr: string;
}

/** A RunResult that also says which signal, if any, ended the process. */
export interface RunExit extends RunResult {
    signal: NodeJS.Signals | null;
}

export interface RunOptions {
    cwd: string;
    env: NodeJS.ProcessEnv;
    /** Written to stdin, which is then closed; without it stdin is not connected. */
    input?: string | Buffer;
    /** Run as this user and group (we must be root). */
    uid?: number;
    gid?: number;
}

/** A long-running process whose output is collected as it comes. */
export interface Spawned {
    child: ChildProcess;
    stdout: () => string;
    stderr: () => string;
    /** Settles with the exit code (null when killed by a signal). */
    exited: Promise<number | null>;
    /** Sends `signal` to the process and, when it runs under a prefix, to everything the prefix started. */
    kill(signal?: NodeJS.Signals): void;
}

/** Runs `command args` to the end, collecting its output as text; rejects only if it cannot start. */
export function run(command: string, args: string[], options: RunOptions): Promise<RunExit> {
    return new Promise((resolve, reject) => {
        const child = spawn(command, args, {
            cwd: options.cwd,
            env: options.env,
            stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
            ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid })
        });
        let stdout = '';
        let stderr = '';
        child.stdout!.setEncoding('utf8').on('data', (d: string) => {
            stdout += d;
        });
        child.stderr!.setEncoding('utf8').on('data', (d: string) => {
            stderr += d;
        });
        child.once('error', reject);
        child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
        if (child.stdin) {
            // A process that exits without reading its input must not fail the run with EPIPE.
            child.stdin.on('error', () => undefined);
            child.stdin.end(options.input);
        }
    });
}

/** Runs `node args` to the end with this test's Node binary. */
export async function runNode(args: string[], options: RunOptions): Promise<RunResult> {
    // Exactly these three fields: tests compare the whole result with `equal`.
    const { code, stdout, stderr } = await run(process.execPath, args, options);
    return { code, stdout, stderr };
}

/** Starts `node args` (under `prefix`, e.g. strace and its options) with stdin closed, collecting stdout and stderr as text. */
export function spawnNode(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; prefix?: string[] }): Spawned {
    const [command, ...commandArgs] = [...options.prefix ?? [], process.execPath, ...args];
    // Under a prefix, a process group of its own: killing strace alone leaves its tracee running.
    return spawnCommand(command!, commandArgs, { cwd: options.cwd, env: options.env, group: options.prefix !== undefined });
}

/**
 * Starts `command args` with stdin closed, collecting stdout and stderr as text. With
 * `group`, in a process group of its own, which kill() signals whole (a launcher such as
 * npx and the processes it started); `child.kill()` still signals the command alone.
 */
export function spawnCommand(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; group?: boolean }): Spawned {
    const group = options.group ?? false;
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const kill = (signal: NodeJS.Signals = 'SIGKILL') => {
        if (!group || child.pid === undefined) {
            child.kill(signal);
            return;
        }

        try {
            process.kill(-child.pid, signal);
        }
        catch (err) {
            // The whole group is gone already.
            if ((err as NodeJS.ErrnoException).code !== 'ESRCH') {
                throw err;
            }
        }
    };
    return { child, stdout: () => stdout, stderr: () => stderr, exited, kill };
}

/** SIGTERM (unless it has ended already), then its exit code; SIGKILL after `limitMs`: a hang, not a speed claim. */
export async function stopGracefully(spawned: Spawned, limitMs: number): Promise<number | null> {
    if (spawned.child.exitCode === null && spawned.child.signalCode === null) {
        spawned.child.kill('SIGTERM');
    }

    const limit = setTimeout(() => spawned.child.kill('SIGKILL'), limitMs);
    try {
        return await spawned.exited;
    }
    finally {
        clearTimeout(limit);
    }
}

/** Whether process `pid` is alive (not gone, not a zombie waiting to be reaped); Linux. */
export function isRunning(pid: number): boolean {
    try {
        // The state follows the command name, which is in parentheses and may hold spaces.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
    }
    catch {
        return false;
    }
}

/** The processes `pid` started that still run; Linux. */
export function childPids(pid: number): number[] {
    try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    }
    catch {
        return [];
    }
}

/**
 * Resolves once the collected `stream` output matches `pattern` (a RegExp, or a
 * string it must contain), checked on every chunk; rejects when the process exits
 * first, or after `timeoutMs` if given. Resolves with the match of a RegExp.
 */
export function waitForOutput(spawned: Spawned, pattern: RegExp | string, options: { stream?: 'stdout' | 'stderr'; timeoutMs?: number } = {}): Promise<RegExpExecArray | null> {
    const stream = options.stream ?? 'stdout';
    const text = stream === 'stdout' ? spawned.stdout : spawned.stderr;
    const output = () => `stdout: ${spawned.stdout()} stderr: ${spawned.stderr()}`;
    return new Promise((resolve, reject) => {
        let settled = false;
        const timer = options.timeoutMs === undefined ? undefined :
            setTimeout(() => done(new Error(`no output matching ${String(pattern)} within ${options.timeoutMs} ms: ${output()}`)), options.timeoutMs);
        const check = () => {
            if (typeof pattern === 'string') {
                if (text().includes(pattern)) {
                    done(undefined, null);
                }

                return;
            }

            const match = pattern.exec(text());
            if (match) {
                done(undefined, match);
            }
        };

        const done = (err?: Error, match: RegExpExecArray | null = null) => {
            if (settled) {
                return;
            }

            settled = true;
            clearTimeout(timer);
            spawned.child[stream]!.off('data', check);
            if (err) {
                reject(err);
            }
            else {
                resolve(match);
            }
        };

        // Added after the collector's listener, so the text already holds the chunk.
        spawned.child[stream]!.on('data', check);
        void spawned.exited.then((code) => done(new Error(`process exited with ${code} before printing ${String(pattern)}: ${output()}`)));
        check();
    });
}
