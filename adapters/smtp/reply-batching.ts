import type { Socket } from 'node:net';

/**
 * Gathers the replies a connection writes while it handles one chunk of input into
 * one socket write. A pipelining client (RFC 2920) sends RSET, MAIL, RCPT and DATA
 * in one packet; smtp-server answers each with its own `socket.write()`, a syscall
 * apiece on both ends. Corked from the chunk's arrival until the next tick, they
 * leave as one. A lock-step client sees no difference: its one reply leaves on the
 * same tick. Returns the function that stops batching (the socket may change on
 * STARTTLS).
 */
export function batchReplies(socket: Socket): () => void {
    let corked = false;
    const uncork = () => {
        corked = false;
        socket.uncork();
    };

    // Before smtp-server's own 'data' listener (its parser), which writes the replies.
    const onData = () => {
        if (!corked) {
            corked = true;
            socket.cork();
            process.nextTick(uncork);
        }
    };

    socket.prependListener('data', onData);
    return () => {
        socket.off('data', onData);
    };
}
