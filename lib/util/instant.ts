/** Instants as the API and the search language write them: Unix milliseconds or ISO 8601. */

/** Latest instant a JavaScript Date holds, Unix ms: a larger number is no timestamp. */
export const MAX_TIME_MS = 8.64e15;

// ISO 8601 extended format: a date, or a date-time to minutes, seconds or fractions,
// with an optional `Z` or `±hh:mm`/`±hhmm` offset (none means UTC, like a bare date).
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Unix ms of an instant written as Unix milliseconds (up to 16 digits) or as an ISO 8601
 * date or date-time (a date alone is midnight UTC; no offset means UTC), or null for
 * anything else (docs/api.md, "HTTP API").
 */
export function parseInstant(value: string): number | null {
    if (/^\d{1,16}$/.test(value)) {
        const ms = Number(value);
        return ms <= MAX_TIME_MS ? ms : null;
    }

    const match = ISO_DATE_TIME.exec(value);
    if (!match) {
        return null;
    }

    const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = match;
    const year = Number(y);
    const month = Number(mo);
    const day = Number(d);
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) ||
        Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
        return null;
    }

    let offsetMinutes = 0;
    if (zone.toUpperCase() !== 'Z') {
        const sign = zone[0] === '-' ? -1 : 1;
        const digits = zone.slice(1).replace(':', '');
        const offsetHours = Number(digits.slice(0, 2));
        const offsetMins = Number(digits.slice(2));
        if (offsetHours > 23 || offsetMins > 59) {
            return null;
        }

        offsetMinutes = sign * (offsetHours * 60 + offsetMins);
    }

    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    date.setUTCHours(Number(h), Number(mi), Number(s), Number(fraction.padEnd(3, '0').slice(0, 3)));
    return date.getTime() - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
    const date = new Date(0);
    date.setUTCFullYear(year, month, 0);
    return date.getUTCDate();
}
