/** The standalone service's link-check variable (docs/api.md, "Environment variables"). */

import { parseLinkAllowList } from '../../lib/link-check/allow-list';
import type { LinkCheckOptions } from './link-check-options';

/**
 * Reads INBOX_CAPTURE_LINK_CHECK_ALLOW (comma-separated host names, `*.domain`, addresses,
 * CIDRs, `public`): undefined when unset or blank, which leaves the check off; `fail`
 * throws the caller's ConfigError.
 */
export function readLinkCheckEnv(read: (name: string) => string | undefined, fail: (message: string) => never): LinkCheckOptions | undefined {
    const allow = (read('INBOX_CAPTURE_LINK_CHECK_ALLOW') ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
    if (allow.length === 0) {
        return undefined;
    }

    try {
        parseLinkAllowList(allow);
    }
    catch (err) {
        fail(`INBOX_CAPTURE_LINK_CHECK_ALLOW: ${(err as Error).message}`);
    }

    return { allow };
}
