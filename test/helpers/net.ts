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
