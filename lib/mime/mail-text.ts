/**
 * The text fields of an email (not its Message-ID, its identity) as ingest keeps them (docs/guarantees.md, "Mail in: what any
 * message gets"): no C0 control character but TAB, LF and CR, and no lone UTF-16
 * surrogate. JSON escapes each of those as six bytes (`\u0001`), so a body of control
 * characters made an answer 5.5 times its message; without them an email's JSON is at
 * most about twice its text. The raw download keeps every byte.
 */

// Every C0 control but TAB (09), LF (0A) and CR (0D); NUL among them.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `value` without C0 controls other than TAB, LF and CR, and with lone surrogates as U+FFFD. */
export function cleanMailText(value: string): string {
    const kept = CONTROL.test(value) ? value.replace(CONTROLS, '') : value;
    return kept.replace(LONE_SURROGATE, '\uFFFD');
}
