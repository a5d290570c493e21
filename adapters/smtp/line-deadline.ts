import type { Socket } from 'node:net';

/** Line feed: the end of every SMTP line, command or message text. */
const LF = 0x0a;

/**
 * Watches the bytes a client sends and calls `onExpired` once when a line (a command
 * or a line of the message) is not complete `timeoutMs` after its first byte. The
 * idle timeout cannot catch a client that trickles one byte every few seconds (each
 * byte resets it); this deadline does, like Postfix's `smtpd_per_record_deadline`.
 * While the socket is paused (the server is not reading, e.g. the message is being
 * stored) the client cannot finish its line, so the deadline waits.
 * Returns the function that stops watching.
 */
export function watchLineDeadline(socket: Socket, timeoutMs: number, onExpired: () => void): () => void {
    let timer: NodeJS.Timeout | null = null;
    let stopped = false;

    const expire = () => {
        if (stopped) {
            return;
        }

        if (socket.isPaused()) {
            timer!.refresh();
            return;
        }

        stop();
        onExpired();
    };

    const onData = (chunk: Buffer | string) => {
        const lastLineEnd = typeof chunk === 'string' ? chunk.lastIndexOf('\n') : chunk.lastIndexOf(LF);
        if (lastLineEnd === -1) {
            // The line that is open goes on: its deadline stands (or starts now).
            timer ??= setTimeout(expire, timeoutMs).unref();
            return;
        }

        if (lastLineEnd === chunk.length - 1) {
            // Every line is complete: nothing is owed.
            if (timer) {
                clearTimeout(timer);
                timer = null;
            }

            return;
        }

        // A line ended and a new one began in this chunk: the deadline starts again.
        if (timer) {
            timer.refresh();
        }
        else {
            timer = setTimeout(expire, timeoutMs).unref();
        }
    };

    const stop = () => {
        stopped = true;
        if (timer) {
            clearTimeout(timer);
            timer = null;
        }

        socket.off('data', onData);
        socket.off('close', stop);
    };

    socket.on('data', onData);
    socket.once('close', stop);
    return stop;
}
