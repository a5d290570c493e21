/** Longest safe name, UTF-8 bytes (docs/design.md): fits every file system's 255-byte limit with the index prefix. */
export const MAX_ATTACHMENT_NAME_BYTES = 200;

/** Characters of a hostile name we look at, UTF-16 units: far above 200 bytes, and it bounds the work. */
const MAX_INPUT_LENGTH = 1024;

/** Longest extension kept when a long name is cut, characters including the dot. */
const MAX_KEPT_EXTENSION_LENGTH = 16;

/** Stem of a name made up for a part that has none (or none left after cleaning). */
const FALLBACK_STEM = 'attachment';

// Path separators (a name must never name a directory), C0/C1 controls and DEL
// (NUL, CR, LF break headers and paths), line/paragraph separators, and the
// bidirectional controls (`invoice\u202Efdp.exe` displays as `invoiceexe.pdf`).
// Each becomes `_` so the reader sees that something was there.
const UNSAFE_CHARACTERS = /[/\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

// A surrogate without its partner cannot be encoded as UTF-8.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// Dots first would make a hidden file or `..`; leading whitespace hides them.
const LEADING_DOTS_AND_SPACE = /^[\s.]+/;
const TRAILING_SPACE = /\s+$/;
const EXTENSION = /\.[A-Za-z0-9]{1,15}$/;

/** Extensions for parts without a usable file name, by media type; anything else is `.bin`. */
const EXTENSION_BY_TYPE: Record<string, string> = {
    'application/pdf': 'pdf',
    'image/png': 'png',
    'image/jpeg': 'jpg',
    'image/jpg': 'jpg',
    'image/pjpeg': 'jpg',
    'image/gif': 'gif',
    'text/plain': 'txt',
    'text/html': 'html',
    'text/csv': 'csv',
    'application/json': 'json',
    'application/zip': 'zip',
    'application/x-zip-compressed': 'zip',
    'text/calendar': 'ics',
    'message/rfc822': 'eml'
};

/** The API file name of an attachment: `<index>-<safe name>`, unique within its email by the index. */
export function attachmentFilename(index: number, filename: string | undefined, contentType: string): string {
    return `${index}-${safeAttachmentName(filename, contentType)}`;
}

/**
 * A part's file name made safe (no path separators, control or bidi characters,
 * no leading dots, at most 200 UTF-8 bytes without splitting a character), or
 * `attachment.<ext>` with the extension taken from the media type.
 */
export function safeAttachmentName(filename: string | undefined, contentType: string): string {
    const raw = typeof filename === 'string' ? filename : '';
    // The extension is read from the end before the input is cut, so a very long
    // name keeps its type.
    const extension = EXTENSION.exec(raw.slice(-MAX_KEPT_EXTENSION_LENGTH))?.[0] ?? '';
    const name = clean(raw.length > MAX_INPUT_LENGTH ? raw.slice(0, MAX_INPUT_LENGTH - extension.length) + extension : raw);
    if (name.length === 0) {
        return `${FALLBACK_STEM}.${extensionFor(contentType)}`;
    }

    if (Buffer.byteLength(name, 'utf8') <= MAX_ATTACHMENT_NAME_BYTES) {
        return name;
    }

    // Too long: keep the extension and cut the stem, so the file still opens with the right program.
    const kept = name.endsWith(extension) ? extension : '';
    const stem = cutToBytes(name.slice(0, name.length - kept.length), MAX_ATTACHMENT_NAME_BYTES - Buffer.byteLength(kept, 'utf8'));
    const cut = clean(stem + kept);
    return cut.length > 0 ? cut : `${FALLBACK_STEM}.${extensionFor(contentType)}`;
}

/** The extension our fallback name uses for a media type (`bin` when unknown). */
export function extensionFor(contentType: string): string {
    const type = String(contentType ?? '').split(';')[0].trim().toLowerCase();
    // Own properties only: a media type named `constructor` must not find Object.prototype's.
    return Object.hasOwn(EXTENSION_BY_TYPE, type) ? EXTENSION_BY_TYPE[type] : 'bin';
}

function clean(name: string): string {
    return name
        .replace(LONE_SURROGATE, '_')
        .replace(UNSAFE_CHARACTERS, '_')
        .replace(LEADING_DOTS_AND_SPACE, '')
        .replace(TRAILING_SPACE, '');
}

/** The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes, cut between code points. */
function cutToBytes(text: string, maxBytes: number): string {
    let bytes = 0;
    let end = 0;
    for (const ch of text) {
        const size = Buffer.byteLength(ch, 'utf8');
        if (bytes + size > maxBytes) {
            break;
        }

        bytes += size;
        end += ch.length;
    }

    return text.slice(0, end);
}
