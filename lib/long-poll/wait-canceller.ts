/**
 * Ends a wait early, as an AbortController would, for a fraction of its memory: an
 * AbortSignal with one listener costs about 1 KB (an EventTarget), and a server may
 * hold ten thousand waits. `abort` is bound, so it can be an event listener as is.
 */
export class WaitCanceller {
    private target: { cancel(): void } | undefined = undefined;
    private done = false;

    /** True once abort() was called. */
    get aborted(): boolean {
        return this.done;
    }

    /** Ends the wait it was given to with an empty page; later calls do nothing. */
    readonly abort = (): void => {
        if (this.done) {
            return;
        }

        this.done = true;
        const target = this.target;
        this.target = undefined;
        target?.cancel();
    };

    /** For the long-poller: what abort() ends (undefined once the wait is over). */
    attach(target: { cancel(): void } | undefined): void {
        this.target = target;
    }
}
