/** Decodes bytes as UTF-8, throwing on any invalid sequence (Buffer#toString would repair them silently). */
export function strictUtf8(bytes: Buffer): string {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` is well-formed UTF-16 (String#isWellFormed is Node 22+). */
export function isWellFormed(text: string): boolean {
    return !LONE_SURROGATE.test(text);
}

/** Every string in a JSON value, with its path (`attachments[0].filename`). */
export function stringsOf(value: unknown, path = ''): Array<[string, string]> {
    if (typeof value === 'string') {
        return [[path, value]];
    }

    if (Array.isArray(value)) {
        return value.flatMap((item, i) => stringsOf(item, `${path}[${i}]`));
    }

    if (value && typeof value === 'object') {
        return Object.entries(value).flatMap(([key, item]) => stringsOf(item, path ? `${path}.${key}` : key));
    }

    return [];
}
