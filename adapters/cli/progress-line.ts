import type { Writable } from 'node:stream';
import type { OnProgress, Progress } from '../../lib/util/progress';

/** Least time between two redraws of the line, ms: fast enough to look alive, slow enough to cost nothing. */
export const REDRAW_MS = 200;

/** A progress line on a terminal: told progress as work goes, finished once at the end. */
export interface ProgressLine {
    /** For the work's `onProgress`; undefined where nothing is shown (not a terminal). */
    onProgress: OnProgress | undefined;
    /** Leaves the last state on its own line, if anything was shown. */
    finish(): void;
}

const COUNT = new Intl.NumberFormat('en-US');

/** `12,300 of 1,000,000 emails (1%)` or `35,000 emails`. */
export function describeProgress(progress: Progress, unit: string): string {
    const done = COUNT.format(progress.done);
    if (progress.total === undefined || progress.total <= 0) {
        return `${done} ${unit}`;
    }

    const percent = Math.min(100, Math.floor((progress.done / progress.total) * 100));
    return `${done} of ${COUNT.format(progress.total)} ${unit} (${percent}%)`;
}

/**
 * Progress of long work on `stream`, one line redrawn in place, only when it is a
 * terminal: in a pipe or a log file (cron, a deploy step) it says nothing, and stdout
 * never carries it. `label` leads the line (`prune: deleted`), `unit` follows the count.
 */
export function progressLine(stream: Writable, label: string, unit: string, now: () => number = Date.now): ProgressLine {
    if ((stream as Writable & { isTTY?: boolean }).isTTY !== true) {
        return { onProgress: undefined, finish: () => undefined };
    }

    let last: Progress | undefined;
    let drawnAt = -Infinity;
    let shown = false;
    const draw = () => {
        // \r back to the line's start, \x1b[K clears what a longer earlier line left.
        stream.write(`\rinbox-capture: ${label} ${describeProgress(last!, unit)}\x1b[K`);
        shown = true;
    };

    return {
        onProgress(progress) {
            last = progress;
            // Nothing done yet is nothing to show: work that finds nothing stays silent.
            if (progress.done > 0 && now() - drawnAt >= REDRAW_MS) {
                drawnAt = now();
                draw();
            }
        },
        finish() {
            if (last !== undefined && (shown || last.done > 0)) {
                draw();
                stream.write('\n');
            }
        }
    };
}
