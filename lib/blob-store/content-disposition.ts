/** Longest file name we put in a header, UTF-16 units: ours are at most 200 bytes, and this bounds the work. */
const MAX_FILENAME_LENGTH = 1024;

/** Used when nothing of the name is left, so the browser never invents one from the URL. */
const DEFAULT_FILENAME = 'download';

// Characters that change how a name is read or displayed: C0/C1 controls and DEL
// (header injection) and the bidirectional controls (`invoice\u202Efdp.exe` shows as
// `invoiceexe.pdf`). They become `_` in both forms of the name.
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

// A surrogate without its partner cannot be UTF-8 encoded (encodeURIComponent throws).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// The quoted fallback keeps printable ASCII minus what could end the quoted string
// (`"`, `\`), name a path (`/`) or be percent-decoded by some browsers (`%`).
const NOT_FALLBACK_SAFE = /[^\x20-\x7e]|["\\/%]/gu;

// RFC 5987 attr-char leaves these to percent-encoding; encodeURIComponent does not.
const NOT_ATTR_CHAR = /['()*]/g;

/**
 * A `Content-Disposition: attachment` value with an ASCII `filename` fallback and
 * the exact name as RFC 5987 `filename*`; nothing in the name can break out of either.
 */
export function attachmentDisposition(filename: string): string {
    const clean = String(filename)
        .slice(0, MAX_FILENAME_LENGTH)
        .replace(LONE_SURROGATE, '_')
        .replace(UNSAFE_CHARACTERS, '_')
        .trim();
    const name = clean.length > 0 ? clean : DEFAULT_FILENAME;
    const fallback = name.replace(NOT_FALLBACK_SAFE, '_');
    const encoded = encodeURIComponent(name)
        .replace(NOT_ATTR_CHAR, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

    return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
