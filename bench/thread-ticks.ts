/** Each thread's CPU time of a process, from /proc (Linux only): what thread-cpu and cpu-profile read. */
import { execFileSync } from 'node:child_process';
import * as Fs from 'node:fs';

/** CPU ticks (user + system) of each thread of `pid`, and its nice value, by thread id. */
export function threadTicks(pid: number): Map<string, { ticks: number; nice: number }> {
    const threads = new Map<string, { ticks: number; nice: number }>();
    for (const tid of Fs.readdirSync(`/proc/${pid}/task`)) {
        try {
            const stat = Fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
            // Fields after the command name, which may hold spaces: state is the first (field 3).
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            threads.set(tid, { ticks: Number(fields[11]) + Number(fields[12]), nice: Number(fields[16]) });
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
export function cpuBetween(pid: number, before: ReturnType<typeof threadTicks>, after: ReturnType<typeof threadTicks>): { main: number; parse: number; other: number } {
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
