/** The link check's settings (docs/api.md, "Link check"): the plugin's `linkCheck`, and the environment's INBOX_CAPTURE_LINK_CHECK_ALLOW. */

import Joi from 'joi';
import { parseLinkAllowList } from '../../lib/link-check/allow-list';
import { createLinkChecker, type LinkChecker } from './link-checker';

/** Time one link may take, redirects included, ms: also the most it may be set to. */
export const DEFAULT_LINK_TIMEOUT_MS = 5000;

/** The plugin's `linkCheck` option: without it the check is off. */
export interface LinkCheckOptions {
    /** What may be asked: host names, `*.domain`, addresses and CIDRs (`:port` on an address), `public`. */
    allow: string[];
    /** Time one link may take, ms (default and most 5000). */
    timeoutMs?: number;
    /** DNS servers (`host:port`) to resolve names with (default the system's resolver). */
    dnsServers?: string[];
    /** Ports of the service besides the plugin's own HTTP port (the SMTP listener's, say): refused unless listed with the port. */
    ownPorts?: number[];
}

/** The joi schema of the `linkCheck` option, the allow-list parsed as it will be used. */
export const linkCheckOptionsSchema = Joi.object({
    allow: Joi.array().items(Joi.string().min(1).max(300)).min(1).max(1000).required().custom((value: string[], helpers) => {
        try {
            parseLinkAllowList(value);
            return value;
        }
        catch (err) {
            return helpers.message({ custom: `"linkCheck.allow": ${(err as Error).message}` });
        }
    }),
    timeoutMs: Joi.number().integer().min(1).max(DEFAULT_LINK_TIMEOUT_MS).default(DEFAULT_LINK_TIMEOUT_MS),
    dnsServers: Joi.array().items(Joi.string().pattern(/^(?:[0-9.]+|\[[0-9a-fA-F:.]+\])(?::\d{1,5})?$/)).min(1),
    ownPorts: Joi.array().items(Joi.number().integer().min(1).max(65535)).default([])
});

/** The checker a validated `linkCheck` option describes; `serverPorts` are the HTTP server's, read when a check runs. */
export function linkCheckerFor(options: LinkCheckOptions, serverPorts: () => number[]): LinkChecker {
    return createLinkChecker({
        allow: parseLinkAllowList(options.allow),
        timeoutMs: options.timeoutMs ?? DEFAULT_LINK_TIMEOUT_MS,
        ...(options.dnsServers ? { dnsServers: options.dnsServers } : {}),
        ownPorts: () => [...serverPorts(), ...(options.ownPorts ?? [])]
    });
}
