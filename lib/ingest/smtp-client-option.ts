/** The SMTP session's parts an ingest is told (docs/api.md, "Authentication check"), checked at the ingest's edge. */

import { InboxCaptureError } from '../errors';
import { ipBytes } from '../link-check/ip-address';
import type { SmtpClient } from '../types';

/** Longest envelope sender kept, characters: an SMTP line's length. */
export const MAX_MAIL_FROM_CHARS = 998;

// A HELO name is one word of printable ASCII (a domain or an address literal): RFC 5321's line holds nothing else.
const HELO = /^[\x21-\x7e]{1,255}$/;
const LINE_BREAK_OR_NUL = /[\r\n\u0000]/;

/** Whether `value` is a client address an ingest keeps: an IPv4 or IPv6 address. */
export function isClientAddress(value: unknown): value is string {
    return typeof value === 'string' && value.length <= 45 && ipBytes(value) !== undefined;
}

/** Whether `value` is a HELO name an ingest keeps. */
export function isHeloName(value: unknown): value is string {
    return typeof value === 'string' && HELO.test(value);
}

/** Whether `value` is an envelope sender an ingest keeps (`''`, the null sender, is one). */
export function isMailFrom(value: unknown): value is string {
    return typeof value === 'string' && value.length <= MAX_MAIL_FROM_CHARS && !LINE_BREAK_OR_NUL.test(value);
}

/** The copy's SmtpClient from the options, or undefined when none of the three is given; INVALID_INPUT for one that is not what it says. */
export function smtpClientOption(options: { clientAddress?: string; clientHelo?: string; mailFrom?: string }): SmtpClient | undefined {
    const { clientAddress, clientHelo, mailFrom } = options;
    if (clientAddress === undefined && clientHelo === undefined && mailFrom === undefined) {
        return undefined;
    }

    if (clientAddress !== undefined && !isClientAddress(clientAddress)) {
        throw new InboxCaptureError('INVALID_INPUT', 'clientAddress must be an IPv4 or IPv6 address');
    }

    if (clientHelo !== undefined && !isHeloName(clientHelo)) {
        throw new InboxCaptureError('INVALID_INPUT', 'clientHelo must be a HELO name: 1 to 255 printable ASCII characters, no space');
    }

    if (mailFrom !== undefined && !isMailFrom(mailFrom)) {
        throw new InboxCaptureError('INVALID_INPUT', `mailFrom must be an address of at most ${MAX_MAIL_FROM_CHARS} characters without line breaks`);
    }

    return { address: clientAddress ?? null, helo: clientHelo ?? null, mailFrom: mailFrom ?? null };
}
