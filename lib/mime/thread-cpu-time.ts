/**
 * The CPU time one thread of this process has used, where the system tells it per thread
 * (Linux's /proc). The parse deadline counts a worker's CPU, not the wall clock: the workers
 * run at the lowest priority, so on a busy machine a parse can wait for a core far longer
 * than it runs (docs/operations.md, "The parse worker").
 */
import { readFileSync, readlinkSync } from 'node:fs';

// /proc/<pid>/task/<tid>/stat counts in clock ticks, 100 a second on every Linux (USER_HZ).
const MS_PER_TICK = 10;

/** The calling thread's id as /proc names it; undefined where there is no /proc (not Linux). */
export function currentThreadId(): number | undefined {
    try {
        // "<pid>/task/<tid>"
        const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
        return Number.isInteger(tid) && tid > 0 ? tid : undefined;
    }
    catch {
        return undefined;
    }
}

/** CPU time used so far by thread `tid` of this process, ms; undefined when it cannot be read (or the thread has ended). */
export function threadCpuMs(tid: number): number | undefined {
    try {
        // The first field: time on a CPU, ns (kernels with scheduler statistics).
        const runtime = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
        if (Number.isFinite(runtime)) {
            return runtime / 1e6;
        }
    }
    catch {
        // No schedstat: the tick counts below.
    }

    try {
        // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ticks = Number(fields[11]) + Number(fields[12]);
        return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined;
    }
    catch {
        return undefined;
    }
}
