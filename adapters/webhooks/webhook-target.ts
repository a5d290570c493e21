/** Who is told of stored mail, and which inboxes' mail each URL wants (docs/api.md, "Webhooks"). */

/** One configured webhook. */
export interface WebhookTarget {
    /** An http:// or https:// URL; POSTed to as given (path and query kept). */
    url: string;
    /** Signs each body with HMAC-SHA256 (X-Inbox-Capture-Signature); none without it. */
    secret?: string;
    /** Only mail of these inboxes (default: every inbox). */
    inboxes?: string[];
}

/** The URLs of the targets that want mail of `inbox`, in configuration order. */
export function webhookUrlsFor(targets: readonly WebhookTarget[], inbox: string): string[] {
    return targets.filter((t) => t.inboxes === undefined || t.inboxes.includes(inbox)).map((t) => t.url);
}
