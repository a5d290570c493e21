import { InboxCaptureError } from '../errors';

/** Longest piece of a term repeated in a reason, characters: enough to recognise it, short enough for one line. */
const MAX_ECHO_CHARS = 40;

/**
 * A malformed search: INVALID_INPUT with the words a user needs (docs/api.md, "Search"),
 * `reason` (e.g. `unclosed quote at character 9`, `has:html is not a known has: value
 * (attachment, link, code)`) and `position`, the 1-based character (code point) where the
 * fault starts. It knows no protocol: each adapter says where it shows the reason.
 */
export class SearchSyntaxError extends InboxCaptureError {
    readonly reason: string;
    readonly position: number;

    constructor(reason: string, position: number) {
        super('INVALID_INPUT', `malformed search: ${reason}`);
        this.name = 'SearchSyntaxError';
        this.reason = reason;
        this.position = position;
    }
}

/** True when `err` is a SearchSyntaxError. */
export function isSearchSyntaxError(err: unknown): err is SearchSyntaxError {
    return err instanceof SearchSyntaxError;
}

/** `text` shortened to MAX_ECHO_CHARS code points, `...` marking a cut. */
export function echoed(text: string): string {
    const chars = Array.from(text);
    return chars.length > MAX_ECHO_CHARS ? `${chars.slice(0, MAX_ECHO_CHARS).join('')}...` : text;
}
