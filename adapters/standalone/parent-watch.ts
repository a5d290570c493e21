/**
 * Started by npx or an npm script, the program runs under `sh -c`, which npm starts and
 * signals. A SIGTERM to npm reaches that shell, which dies without passing it on: the
 * program would keep running with no parent (docs/operations.md, "Running the service").
 * So, under npm, a parent that goes away counts as a request to stop.
 */

/** Milliseconds between two looks at the parent process. */
export const PARENT_CHECK_INTERVAL_MS = 500;

/** Whether npm started this process (npx, `npm exec`, `npm start`, `npm run`): npm names the event it runs. */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
    return env.npm_lifecycle_event !== undefined && env.npm_lifecycle_event !== '';
}

/**
 * Calls `onGone` once, when this process's parent is no longer `parent` (it ended and the
 * process was handed to init or a subreaper; at once if that happened already). Answers a
 * function that stops watching. The timer does not keep the process alive.
 */
export function watchParent(parent: number, onGone: () => void, intervalMs: number = PARENT_CHECK_INTERVAL_MS): () => void {
    const timer = setInterval(() => {
        if (process.ppid !== parent) {
            clearInterval(timer);
            onGone();
        }
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
}
