/** Whether a rule answers one command of a session (docs/api.md, "Faults"). */

import type { InboxFromAddress } from '../identity/recipients';
import type { FaultMatch } from './fault-rule';

/** What a command is known by: the envelope sender so far, and the recipients it concerns. */
export interface FaultFacts {
    /** MAIL FROM (`''` for the null sender); absent at connect. */
    sender?: string;
    /** `rcpt`: the one address of that RCPT TO; `data`: every recipient of the message. */
    recipients?: readonly string[];
}

function contains(value: string | undefined, needle: string): boolean {
    return value !== undefined && value.toLowerCase().includes(needle.toLowerCase());
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
        (match.inbox === undefined || inboxFromAddress(address) === match.inbox));
}
