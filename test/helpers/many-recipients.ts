/**
 * A message without an envelope whose To header names `count` addresses of distinct
 * inboxes (`0@x`, `1@x`, ...), folded 60 to a line; with 2,000 addresses about 16 KB.
 * Past 100 inboxes it must be refused whole (docs/guarantees.md, "Limits", copies of
 * one message); it used to become one copy per inbox.
 */
export function manyRecipientsMessage(count: number, messageId = 'many-recipients@x.test'): Buffer {
    const addresses = Array.from({ length: count }, (_, i) => `${i}@x`);
    const lines: string[] = [];
    for (let i = 0; i < addresses.length; i += 60) {
        lines.push(addresses.slice(i, i + 60).join(', '));
    }

    const to = lines.join(',\r\n ');
    return Buffer.from(`From: a@x.test\r\nTo: ${to}\r\nSubject: many\r\nMessage-ID: <${messageId}>\r\n\r\nbody\r\n`);
}
