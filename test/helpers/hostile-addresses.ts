/**
 * The address header shapes that stalled a parse for seconds, as messages:
 * shared by the unit tests of the bounds (test/lib/mime/address-bounds.ts) and the
 * end-to-end test over SMTP (test/system/hostile-addresses.ts).
 */

/** A punycode label of `chars` characters: basic code points, then deltas, the quadratic case of toUnicode(). */
export function hostileLabel(chars: number): string {
    const half = Math.floor((chars - 5) / 2);
    return `xn--${'b'.repeat(half)}-${'a'.repeat(chars - 5 - half)}`;
}

/** `To: r@<label of about a million characters>`: 25 s of punycode.toUnicode() unbounded. */
export function punycodeMessage(labelChars = 1_000_000, inbox = 'r'): Buffer {
    return Buffer.from(`From: hostile@x.test\r\nTo: ${inbox}@${hostileLabel(labelChars)}\r\nSubject: punycode\r\nMessage-ID: <punycode-${labelChars}@x.test>\r\n\r\nbody\r\n`);
}

/** `To:` 50 groups deep around `addresses` addresses: 786 KB took 2.3 s unbounded. */
export function nestedGroupsMessage(addresses = 60_000, inbox = 'n'): Buffer {
    const list = Array.from({ length: addresses }, (_, i) => `${inbox}${i === 0 ? '' : i}@x.test`).join(',');
    return Buffer.from(`From: hostile@x.test\r\nTo: ${'g:'.repeat(50)}${list}${';'.repeat(50)}\r\nSubject: nested\r\nMessage-ID: <nested-${addresses}@x.test>\r\n\r\nbody\r\n`);
}
