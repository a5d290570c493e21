import { execFileSync } from 'node:child_process';
import * as Fs from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (100 on every usual Linux). */
const CLOCK_TICKS = (() => {
    try {
        return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    }
    catch {
        return 100;
    }
})();

/** CPU time a process has used so far, all its threads (user + system), ms; NaN when it cannot be read. */
export function cpuMsOf(pid: number): number {
    try {
        const stat = Fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        // Fields after the command name (which may hold spaces) start at field 3: utime is 14, stime 15.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS * 1000;
    }
    catch {
        return NaN;
    }
}
