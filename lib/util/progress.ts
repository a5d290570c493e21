/** How far a long piece of work has come, for a caller that shows it (the CLI on a terminal). */
export interface Progress {
    /** Items done so far: emails deleted, blobs looked at, rows filled. */
    done: number;
    /** Items in all, when known before the work starts. */
    total?: number;
}

/** Told of progress now and then, never required: work runs the same without one. */
export type OnProgress = (progress: Progress) => void;
