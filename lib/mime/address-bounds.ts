/**
 * Bounds on what mailparser does with address header fields (From, To, Cc, ...), so that
 * no shape of them costs more than milliseconds (docs/guarantees.md, "Mail in"):
 * - a field's value is cut at MAX_ADDRESS_FIELD_CHARS characters and MAX_ADDRESSES_PER_FIELD
 *   addresses, and at the start of a group nested in a group (RFC 5322 allows none;
 *   mailparser's address parser parses a group's members again at every level, 50 deep:
 *   786 KB of nested groups took 2.3 s);
 * - a domain with a label longer than 63 characters (RFC 1035's limit) is left as
 *   written, not punycode-decoded: punycode.js's toUnicode() is quadratic in a label's
 *   length, and one `xn--` label of a million characters held a parse for 25 s.
 * A field cut short keeps the addresses before the cut. The raw message is not touched:
 * these bounds apply to what the parser reads, and the download keeps every byte.
 */

import { createRequire } from 'node:module';
import { MailParser } from 'mailparser';

/** Characters of one address field's value read, at most: 64 Ki, about 1,000 addresses of 60 characters. */
export const MAX_ADDRESS_FIELD_CHARS = 64 * 1024;
/** Addresses of one field read, at most: ten times the recipients a message is stored for. */
export const MAX_ADDRESSES_PER_FIELD = 1000;
/** Longest DNS label (RFC 1035, section 2.3.4): a longer `xn--` label is not decoded. */
export const MAX_LABEL_CHARS = 63;

/** The fields mailparser turns into address lists (mail-parser.js, processHeaders()). */
const ADDRESS_FIELDS = new Set(['from', 'to', 'cc', 'bcc', 'sender', 'reply-to', 'delivered-to', 'return-path', 'disposition-notification-to']);

/** One header line as mailparser's processHeaders() receives it. */
interface HeaderLine {
    key: string;
    line: string;
}

/** The parts of MailParser this file adapts (mailparser 3.9.x, pinned in package.json). */
interface MailParserInternals {
    processHeaders(lines: HeaderLine[]): Map<string, unknown>;
    decodeAddresses(addresses: unknown[]): void;
}

interface Punycode {
    toUnicode(domain: string): string;
}

const internals = MailParser.prototype as unknown as Partial<MailParserInternals>;
if (typeof internals.processHeaders !== 'function' || typeof internals.decodeAddresses !== 'function') {
    // Loudly, at load: a mailparser without these would parse hostile addresses unbounded.
    throw new Error('address-bounds: mailparser no longer has processHeaders()/decodeAddresses(); update lib/mime/address-bounds.ts');
}

// The punycode.js instance mailparser itself calls (resolved from mailparser's directory).
const punycode = createRequire(require.resolve('mailparser'))('punycode.js') as Punycode;

/** `line` (`Name: value`) with its value cut at the bounds above; the line itself when within them. */
export function boundAddressLine(line: string): string {
    const colon = line.indexOf(':');
    const cut = addressValueEnd(line, colon + 1);
    return cut === line.length ? line : line.slice(0, cut);
}

/**
 * Where the value starting at `from` ends once bounded: the end of the line, or the
 * last separator (`,` or `;` outside quotes, comments and angle brackets) before the
 * first bound it meets. One pass, no regular expression.
 */
function addressValueEnd(line: string, from: number): number {
    const limit = Math.min(line.length, from + MAX_ADDRESS_FIELD_CHARS);
    let quoted = false;
    let comment = 0;
    let angle = false;
    let group = false;
    let addresses = 1;
    let lastSeparator = from;
    for (let i = from; i < limit; i++) {
        const c = line.charCodeAt(i);
        if (c === 0x5c) { // backslash: the next character is literal
            i++;
        }
        else if (quoted) {
            quoted = c !== 0x22;
        }
        else if (comment > 0) {
            comment += c === 0x28 ? 1 : c === 0x29 ? -1 : 0;
        }
        else if (c === 0x22) {
            quoted = true;
        }
        else if (c === 0x28) {
            comment = 1;
        }
        else if (angle) {
            angle = c !== 0x3e;
        }
        else if (c === 0x3c) {
            angle = true;
        }
        else if (c === 0x3a) { // a group opens; one inside another is cut off
            if (group) {
                return lastSeparator;
            }

            group = true;
        }
        else if (c === 0x2c || c === 0x3b) {
            if (c === 0x3b) {
                group = false;
            }

            if (++addresses > MAX_ADDRESSES_PER_FIELD) {
                return i;
            }

            lastSeparator = i;
        }
    }

    return limit === line.length ? limit : lastSeparator;
}

/** Whether some label of `domain` is longer than MAX_LABEL_CHARS. */
export function hasOverlongLabel(domain: string): boolean {
    let start = 0;
    for (;;) {
        const dot = domain.indexOf('.', start);
        const end = dot === -1 ? domain.length : dot;
        if (end - start > MAX_LABEL_CHARS) {
            return true;
        }

        if (dot === -1) {
            return false;
        }

        start = dot + 1;
    }
}

// Only for the call of decodeAddresses() below: mailparser decodes every `@xn--` domain.
function boundedToUnicode(this: void, toUnicode: Punycode['toUnicode'], domain: string): string {
    return hasOverlongLabel(domain) ? domain : toUnicode(domain);
}

/**
 * MailParser with the bounds above: address fields are cut before mailparser parses
 * them, and its punycode decoding skips over-long labels. Otherwise MailParser itself.
 */
export class BoundedMailParser extends MailParser {
    /** mailparser's processHeaders() on the lines with their address fields bounded. */
    processHeaders(lines: HeaderLine[]): Map<string, unknown> {
        const bounded = (lines ?? []).map((l) => (ADDRESS_FIELDS.has(l.key) ? { ...l, line: boundAddressLine(l.line) } : l));
        return (internals as MailParserInternals).processHeaders.call(this, bounded);
    }

    /** mailparser's decodeAddresses(), its punycode decoding bounded. */
    decodeAddresses(addresses: unknown[]): void {
        const toUnicode = punycode.toUnicode;
        // Synchronous: nothing else runs on this thread while the bound is in place.
        punycode.toUnicode = (domain) => boundedToUnicode(toUnicode, domain);
        try {
            (internals as MailParserInternals).decodeAddresses.call(this, addresses);
        }
        finally {
            punycode.toUnicode = toUnicode;
        }
    }
}
