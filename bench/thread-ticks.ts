/** Each thread's CPU time of a process, from /proc (Linux only): what thread-cpu and cpu-profile read. */
import { execFileSync } from 'node:child_process';
import * as Fs from 'node:fs';

/** One thread's reading: CPU ticks (user + system), nice value, and from schedstat the ns it waited runnable for a core and its slices on a core. */
export interface ThreadReading {
    ticks: number;
    nice: number;
    waitNs: number;
    slices: number;
}

/** CPU ticks (user + system) of each thread of `pid`, its nice value and its scheduler counters, by thread id. */
export function threadTicks(pid: number): Map<string, ThreadReading> {
    const threads = new Map<string, ThreadReading>();
    for (const tid of Fs.readdirSync(`/proc/${pid}/task`)) {
        try {
            const stat = Fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
            // Fields after the command name, which may hold spaces: state is the first (field 3).
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            // schedstat: time on a core, time runnable waiting for one (ns), slices on a core (absent without CONFIG_SCHEDSTATS).
            const sched = Fs.existsSync(`/proc/${pid}/task/${tid}/schedstat`) ? Fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(' ').map(Number) : [];
            threads.set(tid, { ticks: Number(fields[11]) + Number(fields[12]), nice: Number(fields[16]), waitNs: sched[1] ?? NaN, slices: sched[2] ?? NaN });
        }
        catch {
            // The thread ended between the listing and the read.
        }
    }

    return threads;
}

/** The kernel's clock ticks a second (the unit of /proc's CPU times). */
export function clockTicksPerSecond(): number {
    try {
        return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    }
    catch {
        return 100;
    }
}

/** CPU seconds spent between two readings of threadTicks(): the main thread (`pid`), the threads at a nice value above 0 (the parse workers), and the rest. */
export function cpuBetween(pid: number, before: Map<string, ThreadReading>, after: Map<string, ThreadReading>): { main: number; parse: number; other: number } {
    const hz = clockTicksPerSecond();
    const spent = { main: 0, parse: 0, other: 0 };
    for (const [tid, { ticks, nice }] of after) {
        const seconds = (ticks - (before.get(tid)?.ticks ?? 0)) / hz;
        if (tid === String(pid)) {
            spent.main += seconds;
        }
        else if (nice > 0) {
            spent.parse += seconds;
        }
        else {
            spent.other += seconds;
        }
    }

    return spent;
}

/** The main thread's (`pid`'s) seconds runnable but waiting for a core, and its slices on a core, between two readings (NaN without schedstat). */
export function mainWaitBetween(pid: number, before: Map<string, ThreadReading>, after: Map<string, ThreadReading>): { waitSeconds: number; slices: number } {
    const [b, a] = [before.get(String(pid)), after.get(String(pid))];
    return b && a ? { waitSeconds: (a.waitNs - b.waitNs) / 1e9, slices: a.slices - b.slices } : { waitSeconds: NaN, slices: NaN };
}
