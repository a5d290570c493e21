/** Whether a rule answers one command of a session (docs/api.md, "Faults"). */

import type { InboxFromAddress } from '../identity/recipients';
import { tenantInbox } from '../identity/tenant-prefix';
import type { FaultMatch } from './fault-rule';

/** What a command is known by: the envelope sender so far, and the recipients it concerns. */
export interface FaultFacts {
    /** MAIL FROM (`''` for the null sender); absent at connect. */
    sender?: string;
    /** `rcpt`: the one address of that RCPT TO; `data`: every recipient of the message. */
    recipients?: readonly string[];
    /** The session's SMTP user's inbox prefix: an `inbox` rule matches the prefixed inbox (docs/tenants.md). */
    inboxPrefix?: string;
}

function contains(value: string | undefined, needle: string): boolean {
    return value !== undefined && value.toLowerCase().includes(needle.toLowerCase());
}

/** The inbox `address`'s copy goes to: mapped, then under the session's prefix when it has one. */
function inboxOf(address: string, inboxPrefix: string | undefined, inboxFromAddress: InboxFromAddress): string | null {
    const inbox = inboxFromAddress(address);
    return inbox === null || !inboxPrefix ? inbox : tenantInbox(inboxPrefix, inbox);
}

/**
 * True when `facts` satisfy every field of `match`: the sender contains `sender`, and
 * one recipient both contains `recipient` and maps to `inbox`. An empty match answers all.
 */
export function faultMatches(match: FaultMatch, facts: FaultFacts, inboxFromAddress: InboxFromAddress): boolean {
    if (match.sender !== undefined && !contains(facts.sender, match.sender)) {
        return false;
    }

    if (match.recipient === undefined && match.inbox === undefined) {
        return true;
    }

    return (facts.recipients ?? []).some((address) =>
        (match.recipient === undefined || contains(address, match.recipient)) &&
        (match.inbox === undefined || inboxOf(address, facts.inboxPrefix, inboxFromAddress) === match.inbox));
}
