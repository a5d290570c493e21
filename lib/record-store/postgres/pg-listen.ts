/** Postgres LISTEN for the store's change notifications, on a connection that is re-opened when lost. */

import type { Knex } from 'knex';
import { backoffMs } from '../../util/backoff';

/** Waits before re-opening a lost LISTEN connection, ms: from 100, doubling up to 5 s. */
const RECONNECT_BACKOFF = { firstMs: 100, maxMs: 5000 };

/** What a raw node-postgres client offers that LISTEN needs. */
interface ListenClient {
    query(sql: string): Promise<unknown>;
    escapeIdentifier(name: string): string;
    on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
    on(event: 'error' | 'end', listener: () => void): unknown;
    end(): Promise<void>;
}

/**
 * Calls `listener` with the payload of each notification on `channel`; resolves to
 * the function that stops listening. LISTEN runs on a connection of its own, outside
 * the pool (a pooled connection is handed to other queries and may be closed by the
 * pool at any time). A lost connection is re-opened with backoff; notifications sent
 * meanwhile are lost, which the long-poll's periodic check covers.
 */
export async function watchNotifications(knex: Knex, channel: string, listener: (inbox: string) => void): Promise<() => Promise<void>> {
    let current: ListenClient | null = null;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    // Failed reconnect attempts in a row: the next wait grows with them.
    let failures = 0;

    const connect = async (): Promise<void> => {
        const client = await knex.client.acquireRawConnection() as ListenClient;
        let lost = false;
        const onLost = () => {
            if (lost || stopped) {
                return;
            }

            lost = true;
            if (current === client) {
                current = null;
            }

            client.end().catch(() => undefined);
            scheduleReconnect();
        };

        client.on('notification', (message) => {
            if (message.channel !== channel || message.payload === undefined) {
                return;
            }

            try {
                listener(message.payload);
            }
            catch {
                // A listener's failure must not take the connection down.
            }
        });
        client.on('error', onLost);
        client.on('end', onLost);

        try {
            await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
        }
        catch (err) {
            lost = true;
            await client.end().catch(() => undefined);
            throw err;
        }

        if (stopped) {
            lost = true;
            await client.end().catch(() => undefined);
            return;
        }

        current = client;
        failures = 0;
    };

    const scheduleReconnect = () => {
        if (stopped || timer) {
            return;
        }

        timer = setTimeout(() => {
            timer = undefined;
            connect().catch(() => {
                failures++;
                scheduleReconnect();
            });
        }, backoffMs(failures, RECONNECT_BACKOFF));
    };

    await connect();

    return async () => {
        stopped = true;
        clearTimeout(timer);
        timer = undefined;
        const client = current;
        current = null;
        if (client) {
            // `stopped` turns the 'end' this causes into a no-op for the reconnect logic.
            await client.end().catch(() => undefined);
        }
    };
}
