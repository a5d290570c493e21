import type { Server, Socket } from 'node:net';

/**
 * Resets (TCP RST) every connection of `server` that ends without having sent a single
 * byte, instead of Node's graceful close (a FIN, a shutdown() and its callback, then the
 * close). Such a client asked nothing and is owed nothing; the reset frees the socket in
 * one step. When thousands of idle connections end at once (issue 17, attack 6), that
 * work is what holds up `/health` (bench/README.md). A connection that sent anything,
 * even a partial request, is left to the HTTP server.
 */
export function resetSilentConnections(server: Server): void {
    server.on('connection', (socket: Socket) => {
        // Before the HTTP server's own 'end' listener, which would start the graceful close.
        socket.prependOnceListener('end', () => {
            if (socket.bytesRead === 0 && !socket.destroyed) {
                socket.resetAndDestroy();
            }
        });
    });
}
