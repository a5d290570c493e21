/**
 * Answers take turns, one per turn of the event loop. Readers of one email share its
 * header parse, so thirty get_email calls of a mail with a 1 MiB header section all
 * resume at the same moment; their answers (each about 1 MiB of JSON, serialised by the
 * MCP SDK) were then made in one stretch of the main thread, and `/health` waited behind
 * all of them. Taking turns lets the loop serve other requests between two answers.
 */
export type AnswerTurns = () => Promise<void>;

/** A queue of answers: each caller resumes in an event-loop turn of its own, in arrival order. */
export function createAnswerTurns(): AnswerTurns {
    const queue: Array<() => void> = [];
    let scheduled = false;
    const next = () => {
        queue.shift()?.();
        // A setImmediate() made while immediates run waits for the next loop turn, after
        // the poll phase has taken in other sockets' requests.
        if (queue.length > 0) {
            setImmediate(next);
        }
        else {
            scheduled = false;
        }
    };

    return () => new Promise<void>((resolve) => {
        queue.push(resolve);
        if (!scheduled) {
            scheduled = true;
            setImmediate(next);
        }
    });
}
