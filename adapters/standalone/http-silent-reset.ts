import type { Server, Socket } from 'node:net';

/**
 * Connections reset in one turn of the event loop when many end at once: between two
 * turns the loop serves everything else (e.g. `/health`).
 */
export const RESETS_PER_TURN = 500;

/**
 * Resets (TCP RST) every connection of `server` that ends without having sent a single
 * byte, instead of Node's graceful close (a FIN, a shutdown() and its callback, then the
 * close), and does so at most RESETS_PER_TURN a turn. Such a client asked nothing and is
 * owed nothing. When thousands of idle connections end at once, their closes all
 * come in one poll phase of the event loop and would hold `/health` up (bench/README.md). A connection that sent anything, even a partial request, is left to
 * the HTTP server.
 */
export function resetSilentConnections(server: Server): void {
    const pending: Socket[] = [];
    let scheduled = false;
    const resetSome = () => {
        scheduled = false;
        for (const socket of pending.splice(0, RESETS_PER_TURN)) {
            if (!socket.destroyed) {
                socket.resetAndDestroy();
            }
        }

        if (pending.length > 0) {
            scheduled = true;
            setImmediate(resetSome);
        }
    };

    server.on('connection', (socket: Socket) => {
        // Before the HTTP server's own 'end' listener, which would start the graceful close.
        socket.prependOnceListener('end', () => {
            if (socket.bytesRead !== 0 || socket.destroyed) {
                return;
            }

            // The HTTP server's listener runs next and calls end(): here the reset ends it, a turn later.
            socket.end = (() => socket) as Socket['end'];
            pending.push(socket);
            if (!scheduled) {
                scheduled = true;
                setImmediate(resetSome);
            }
        });
    });
}
