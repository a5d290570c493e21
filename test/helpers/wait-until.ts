import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `condition` every `everyMs` until it holds; throws after `limitMs` (a hang, not a
 * speed claim), saying what was awaited.
 */
export async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, options: { everyMs?: number; limitMs?: number } = {}): Promise<void> {
    const deadline = Date.now() + (options.limitMs ?? 30_000);
    while (!await condition()) {
        if (Date.now() > deadline) {
            throw new Error(`gave up waiting until ${what}`);
        }

        await sleep(options.everyMs ?? 10);
    }
}
