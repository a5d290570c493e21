/** A background job that runs now and then again at a fixed pause: the retention and orphan sweeps. */

/** A running periodic task. */
export interface PeriodicTask {
    /** Stops scheduling and aborts the signal of a pass under way; resolves once that pass has ended. */
    stop(): Promise<void>;
}

/** How a periodic task runs. */
export interface PeriodicTaskOptions {
    /** One pass; `signal` aborts when stop() is called, so a long pass can end early. Its failure goes to `onError`, never into the process. */
    run: (signal: AbortSignal) => Promise<unknown>;
    /** Pause between the end of one pass and the start of the next, ms. */
    intervalMs: number;
    /** Wait before the first pass, ms (default 0: at once). */
    firstDelayMs?: number;
    /** Told of a failed pass; the next one runs as planned. */
    onError: (err: unknown) => void;
}

/**
 * Starts `run` after `firstDelayMs`, then `intervalMs` after each pass ends: one pass at
 * a time however long one takes. Its timer never keeps the process alive.
 */
export function startPeriodicTask(options: PeriodicTaskOptions): PeriodicTask {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    let stopped = false;
    const controller = new AbortController();

    const pass = async () => {
        try {
            await options.run(controller.signal);
        }
        catch (err) {
            try {
                options.onError(err);
            }
            catch {
                // A failing logger must not take the process down either.
            }
        }
    };

    const schedule = (delayMs: number) => {
        timer = setTimeout(() => {
            timer = undefined;
            running = pass().then(() => {
                running = undefined;
                if (!stopped) {
                    schedule(options.intervalMs);
                }
            });
        }, delayMs);
        timer.unref();
    };

    schedule(options.firstDelayMs ?? 0);
    return {
        async stop() {
            stopped = true;
            clearTimeout(timer);
            controller.abort();
            await running;
        }
    };
}
