/** Which links of an email the link check asks (docs/api.md, "Link check"). */

import type { Link } from '../types';

/** Links one check asks, at most: an email keeps no more than this many anyway. */
export const MAX_CHECKED_LINKS = 100;

/** The `http:` and `https:` hrefs of `links`, in their order, at most MAX_CHECKED_LINKS. */
export function linkTargets(links: readonly Link[]): string[] {
    const targets: string[] = [];
    for (const link of links) {
        if (targets.length === MAX_CHECKED_LINKS) {
            break;
        }

        if (/^https?:/i.test(link.href.trim())) {
            targets.push(link.href.trim());
        }
    }

    return targets;
}
