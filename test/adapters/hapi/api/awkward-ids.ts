/**
 * Message-IDs that must survive the trip through a URL path segment (docs/design.md,
 * "Identity and inboxes"):
 * each of `/ + % # ? &`, spaces, non-ASCII, and look-alikes of percent-encoding.
 */
export const AWKWARD_IDS: string[] = [
    'slash/in/id@x',
    'plus+sign@x',
    'percent%sign@x',
    'hash#sign@x',
    'question?mark@x',
    'amp&ersand@x',
    'space in id@x',
    'ünïcødé@exämple.de',
    '日本語@例え.jp',
    'emoji-😀@x',
    'encoded%2Flooking%20id@x',
    'semi;colon=eq@x',
    'back\\slash@x',
    'quote"and\'apostrophe@x',
    'all/+%#?& ü@x'
];
