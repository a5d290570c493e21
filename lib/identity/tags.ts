/**
 * Tags of an email (docs/api.md, "Tags"): at most MAX_TAGS strings of `a-z 0-9 . _ -`,
 * each at most MAX_TAG_CHARS, lowercase. At ingest they come from the `X-Tags` header
 * fields (comma-separated; invalid ones dropped); PUT .../tags replaces them.
 */

/** Most tags one email holds: what a test labels mail with, small enough to scan per row. */
export const MAX_TAGS = 20;

/** Longest tag, characters. */
export const MAX_TAG_CHARS = 32;

/** The characters of a tag. */
export const TAG_PATTERN = /^[a-z0-9._-]+$/;

/** Whether `tag` is a tag as stored: lowercase characters of TAG_PATTERN, at most MAX_TAG_CHARS. */
export function isValidTag(tag: string): boolean {
    return tag.length <= MAX_TAG_CHARS && TAG_PATTERN.test(tag);
}

/**
 * The tags of an email's `X-Tags` header fields: split at commas, trimmed and lowercased;
 * empty and invalid ones dropped, duplicates kept once, the first MAX_TAGS valid ones kept.
 */
export function tagsFromHeaders(values: readonly string[]): string[] {
    const tags: string[] = [];
    for (const value of values) {
        for (const part of value.split(',')) {
            const tag = part.trim().toLowerCase();
            if (tags.length < MAX_TAGS && isValidTag(tag) && !tags.includes(tag)) {
                tags.push(tag);
            }
        }
    }

    return tags;
}

/**
 * The tags a PUT .../tags body asks for, lowercased and without repeats; null when one is
 * not a tag (after lowercasing) or there are more than MAX_TAGS distinct ones.
 */
export function normaliseTags(values: readonly string[]): string[] | null {
    const tags: string[] = [];
    for (const value of values) {
        const tag = value.toLowerCase();
        if (!isValidTag(tag)) {
            return null;
        }

        if (!tags.includes(tag)) {
            tags.push(tag);
        }
    }

    return tags.length <= MAX_TAGS ? tags : null;
}
