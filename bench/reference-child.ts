/**
 * The child side of reference-server.ts: a reference server (MailDev, a sink) in a
 * process of its own announces it listens, answers `{ count: true }` with what it
 * has taken so far, and exits on `{ stop: true }` or when the parent goes away.
 */

/** Tells the parent the server listens and serves its IPC from now on. */
export function serveReferenceIpc(count: () => number | Promise<number>): void {
    process.on('message', (message: { count?: boolean; stop?: boolean }) => {
        if (message.count) {
            void Promise.resolve(count()).then((n) => process.send!({ count: n }));
        }

        if (message.stop) {
            process.exit(0);
        }
    });
    process.on('disconnect', () => process.exit(0));
    process.send!({ listening: true });
}

/** Waits until `url` answers 2xx (a web server started without a callback); throws after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        try {
            const response = await fetch(url);
            await response.arrayBuffer();
            if (response.ok) {
                return;
            }
        }
        catch {
            // Not listening yet.
        }

        if (Date.now() > deadline) {
            throw new Error(`${url} did not answer within ${timeoutMs} ms`);
        }

        await new Promise((r) => setTimeout(r, 50));
    }
}

/** Exits with the error printed: a child that cannot start must not hang its parent. */
export function exitOnError(err: unknown): void {
    console.error(err);
    process.exit(1);
}
