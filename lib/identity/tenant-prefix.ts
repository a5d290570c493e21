import { isValidInbox } from './recipients';

// The inbox prefix of an SMTP user (docs/tenants.md, "Prefixes"): the part of every inbox
// name that says which team the mail belongs to.

/** Longest tenant prefix, characters: room is left for the inbox name after it. */
export const MAX_TENANT_PREFIX_LENGTH = 32;

/** Inbox characters, ending in `-`, `.` or `_`, so `team-a-` never also starts `team-ab...`. */
export const TENANT_PREFIX_PATTERN = /^[a-z0-9._-]*[-._]$/;

/** True when `prefix` may be an SMTP user's inbox prefix: 1–32 inbox characters ending in `-`, `.` or `_`. */
export function isTenantPrefix(prefix: unknown): prefix is string {
    return typeof prefix === 'string' && prefix.length <= MAX_TENANT_PREFIX_LENGTH && TENANT_PREFIX_PATTERN.test(prefix);
}

/**
 * The inbox a tenant's copy goes to: `prefix + inbox`, or `inbox` itself when it already
 * starts with the prefix (a tenant addressing its own inbox by its full name); null when
 * the result is longer than an inbox may be. Without a prefix, `inbox` as it is.
 */
export function tenantInbox(prefix: string | undefined, inbox: string): string | null {
    const routed = !prefix || inbox.startsWith(prefix) ? inbox : prefix + inbox;
    return isValidInbox(routed) ? routed : null;
}
