/** The authentication check's settings (docs/api.md, "Authentication check"): the plugin's `authCheck`, and the environment's INBOX_CAPTURE_DNS_SERVERS. */

import Joi from 'joi';
import { Resolver } from 'node:dns/promises';
import { AUTH_CHECK_DEADLINE_MS, type AuthDns } from '../../lib/auth-check/auth-check-types';

/** The plugin's `authCheck` option. */
export interface AuthCheckOptions {
    /** DNS servers (`address` or `address:port`, IPv6 in brackets) the check asks; default the system's. */
    dnsServers?: string[];
}

/** One DNS server as Node's resolver takes it: an IP address, with a port after a colon (IPv6 in brackets). */
export const DNS_SERVER = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])(?::\d{1,5})?$/;

/** The joi schema of the `authCheck` option. */
export const authCheckOptionsSchema = Joi.object({
    dnsServers: Joi.array().items(Joi.string().pattern(DNS_SERVER, 'an address or address:port (IPv6 in brackets)').custom((value: string, helpers) => {
        try {
            new Resolver().setServers([value]);
            return value;
        }
        catch {
            return helpers.message({ custom: `"authCheck.dnsServers": ${value} is not a DNS server address` });
        }
    })).min(1).max(8)
});

/** What the check asks DNS through, one resolver per check: its questions are cancelled when the check ends. */
export function authDnsFor(options: AuthCheckOptions | undefined): () => AuthDns {
    return () => {
        // One try of at most the whole deadline: the check's own deadline ends it sooner when it must.
        const resolver = new Resolver({ timeout: AUTH_CHECK_DEADLINE_MS, tries: 1 });
        if (options?.dnsServers) {
            resolver.setServers(options.dnsServers);
        }

        return {
            lookup: (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>,
            cancel: () => resolver.cancel()
        };
    };
}
