/** The standalone service's DNS variable (docs/api.md, "Environment variables"). */

import type { AuthCheckOptions } from './auth-check-options';
import { authCheckOptionsSchema } from './auth-check-options';

/**
 * Reads INBOX_CAPTURE_DNS_SERVERS (comma-separated `address[:port]`): undefined when unset
 * or blank, which leaves the system's resolver; `fail` throws the caller's ConfigError.
 */
export function readAuthCheckEnv(read: (name: string) => string | undefined, fail: (message: string) => never): AuthCheckOptions | undefined {
    const servers = (read('INBOX_CAPTURE_DNS_SERVERS') ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
    if (servers.length === 0) {
        return undefined;
    }

    const { error } = authCheckOptionsSchema.validate({ dnsServers: servers });
    if (error) {
        fail(`INBOX_CAPTURE_DNS_SERVERS must be comma-separated DNS servers such as 127.0.0.1:5353 or [::1]:53: ${error.message}`);
    }

    return { dnsServers: servers };
}
