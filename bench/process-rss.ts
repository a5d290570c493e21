import * as Fs from 'node:fs';

/** Resident set size of a process, bytes (Linux /proc); NaN when it cannot be read. */
export function rssOf(pid: number): number {
    try {
        const status = Fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
        return match ? Number(match[1]) * 1024 : NaN;
    }
    catch {
        return NaN;
    }
}

/** Samples a process' RSS every `everyMs` until stopped; reports the peak seen, bytes. */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
    let peak = NaN;
    const sample = () => {
        const rss = rssOf(pid);
        if (Number.isFinite(rss) && !(rss <= peak)) {
            peak = rss;
        }
    };

    sample();
    const timer = setInterval(sample, everyMs);
    timer.unref();
    return {
        stop() {
            clearInterval(timer);
            sample();
            return peak;
        }
    };
}

/** Bytes → MiB with one decimal. */
export function mib(bytes: number): string {
    return Number.isFinite(bytes) ? (bytes / 2 ** 20).toFixed(1) : '-';
}

/** Peak resident set size of a process over its life so far, bytes (VmHWM); NaN when it cannot be read. */
export function peakRssOf(pid: number): number {
    try {
        const match = /^VmHWM:\s+(\d+) kB/m.exec(Fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
        return match ? Number(match[1]) * 1024 : NaN;
    }
    catch {
        return NaN;
    }
}
