import type { SMTPServerSession } from 'smtp-server';
import { isValidInbox, MAX_INBOX_LENGTH, type InboxFromAddress } from '../../lib/identity/recipients';
import { tenantInbox } from '../../lib/identity/tenant-prefix';
import type { SmtpAuthGuard } from './smtp-auth';

/** The sessions of one listener logged in as users kept in the store, and their inbox prefixes (docs/tenants.md). */
export interface TenantSessions {
    /** The inbox prefix of the user `session` is logged in as, or undefined (no stored user). */
    prefixOf(session: SMTPServerSession): string | undefined;
    /**
     * Why RCPT TO `address` is refused (550) under `inboxPrefix`, or null: an inbox that fits
     * on its own but not under the prefix is refused then, rather than its copy skipped after DATA.
     */
    refusal(address: string, inboxPrefix: string | undefined): string | null;
    /** What the AUTH check is given: the store's users, and where a login as one is recorded. */
    guard: Pick<SmtpAuthGuard, 'stored' | 'onTenant' | 'onError'>;
}

/** Keeps, per session, the prefix of the stored user it logged in as. */
export function createTenantSessions(
    verifySmtpUser: SmtpAuthGuard['stored'],
    inboxFromAddress: InboxFromAddress | undefined,
    log: (message: string, error?: unknown) => void
): TenantSessions {
    // With the user it was given to: smtp-server clears `session.user` when STARTTLS starts
    // the session over, and the prefix must go with it.
    const tenants = new WeakMap<SMTPServerSession, { user: string; inboxPrefix: string }>();
    return {
        prefixOf(session) {
            const tenant = tenants.get(session);
            return tenant && session.user === tenant.user ? tenant.inboxPrefix : undefined;
        },

        refusal(address, inboxPrefix) {
            const inbox = inboxPrefix ? inboxFromAddress?.(address) : undefined;
            if (typeof inbox !== 'string' || !isValidInbox(inbox) || tenantInbox(inboxPrefix, inbox) !== null) {
                return null;
            }

            return `Error: the inbox of this address under the prefix ${inboxPrefix} would be longer than ${MAX_INBOX_LENGTH} characters`;
        },

        guard: {
            ...(verifySmtpUser ? { stored: verifySmtpUser } : {}),
            onTenant: (session, user, inboxPrefix) => tenants.set(session, { user, inboxPrefix }),
            onError: (err) => log('smtp: SMTP users could not be read, AUTH answered 454', err)
        }
    };
}
