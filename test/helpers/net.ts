import * as Net from 'node:net';

/** A loopback TCP port nobody listens on right now: bound by the OS on port 0, then released. */
export function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = Net.createServer();
        server.unref();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address() as Net.AddressInfo;
            server.close(() => resolve(port));
        });
    });
}

/** How many times a start is tried on fresh ports when the ports it was given were taken meanwhile. */
export const PORT_ATTEMPTS = 3;

/**
 * Runs `start` (which takes fresh ports from freePort() each time) again while it fails
 * with a port in use: freePort() names a port that was free a moment ago, and another
 * process, or another test's outgoing connection, may bind it before the child does.
 */
export async function retryWhilePortTaken<T>(start: () => Promise<T>, attempts = PORT_ATTEMPTS): Promise<T> {
    for (let attempt = 1; ; attempt++) {
        try {
            return await start();
        }
        catch (err) {
            if (attempt >= attempts || !/EADDRINUSE|is already in use/.test(String((err as Error).message))) {
                throw err;
            }
        }
    }
}

/** An open loopback TCP connection and what the server sent on it before it closed (null: nothing). */
export interface OpenConnection {
    socket: Net.Socket;
    closed: Promise<string | null>;
}

/** Connects to `port` on loopback; resolves once connected (the server may still close it at once). */
export function openConnection(port: number): Promise<OpenConnection> {
    return new Promise((resolve, reject) => {
        const socket = Net.connect(port, '127.0.0.1');
        let data = '';
        socket.setEncoding('latin1').on('data', (chunk: string) => {
            data += chunk;
        });
        // A refused connection may be reset while we write: what it answered tells the story.
        socket.on('error', () => undefined);
        const closed = new Promise<string | null>((done) => socket.once('close', () => done(data === '' ? null : data)));
        socket.once('connect', () => resolve({ socket, closed }));
        socket.once('error', reject);
    });
}
