import type { ClusterInstance } from './cluster-instances';
import type { ClusterReceiver } from './cluster-mail';
import type { KillRecord, Outcomes, WakeRound } from './cluster-load';

/** The inbox retention trims to its newest `maxPerInbox`. */
export const RETAINED_INBOX = 'cluster-retained';
/** How long a wake-up may take at most, ms: from the 250 of the delivery to the long-poll's answer. */
export const WAKE_LIMIT_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every messageId an instance lists for `inbox`, page by page. */
export async function listInbox(instance: ClusterInstance, inbox: string, auth: Record<string, string>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
        const res = await fetch(`${instance.base}/v1/emails?inbox=${inbox}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: auth });
        if (res.status !== 200) {
            throw new Error(`${instance.name} GET ${inbox}: ${res.status}`);
        }

        const page = await res.json() as { emails: { messageId: string }[]; hasMore: boolean; nextCursor?: string };
        ids.push(...page.emails.map((email) => email.messageId));
        cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor);
    return ids;
}

/** What the listings showed: every stored id by inbox (instance 0's view), and the failures seen. */
export interface ListingAudit {
    stored: Map<string, string[]>;
    inDoubtStored: number;
    retainedCounts: number[];
    failures: string[];
}

/**
 * Lists every inbox of the run on every instance: each acknowledged message is listed
 * exactly once everywhere (the retained inbox: exactly its newest `maxPerInbox`), and
 * nothing else is, but messages whose delivery a kill cut off.
 */
export async function auditListings(instances: ClusterInstance[], outcomes: Outcomes, maxPerInbox: number, auth: Record<string, string>): Promise<ListingAudit> {
    const failures: string[] = [];
    const inboxes = new Set([...outcomes.acknowledged.values(), ...outcomes.inDoubt.values()].map((m) => m.inbox));
    const stored = new Map<string, string[]>();
    const retainedCounts: number[] = [];
    let inDoubtStored = 0;
    for (const inbox of [...inboxes].sort()) {
        const expected = [...outcomes.acknowledged.values()].filter((m) => m.inbox === inbox).map((m) => m.messageId);
        const views = await Promise.all(instances.map((instance) => listInbox(instance, inbox, auth)));
        for (const [i, ids] of views.entries()) {
            const name = instances[i]!.name;
            const seen = new Set(ids);
            if (seen.size !== ids.length) {
                failures.push(`${name} lists an email of ${inbox} twice`);
            }

            if (inbox === RETAINED_INBOX && expected.length >= maxPerInbox) {
                // Retention keeps exactly the newest maxPerInbox: never more once a pass ran, never fewer.
                retainedCounts.push(ids.length);
                if (ids.length !== maxPerInbox) {
                    failures.push(`${name} lists ${ids.length} emails in ${inbox}, retention keeps ${maxPerInbox} of ${expected.length} acknowledged`);
                }
            }
            else {
                const missing = expected.filter((id) => !seen.has(id));
                if (missing.length > 0) {
                    failures.push(`${name} does not list ${missing.length} acknowledged emails of ${inbox}, e.g. ${missing[0]}`);
                }
            }

            const unknown = ids.filter((id) => !outcomes.acknowledged.has(id) && !outcomes.inDoubt.has(id));
            if (unknown.length > 0) {
                failures.push(`${name} lists ${unknown.length} emails in ${inbox} that no 250 and no cut-off delivery explains, e.g. ${unknown[0]}`);
            }

            if (i > 0 && [...seen].sort().join() !== [...views[0]!].sort().join()) {
                failures.push(`${name} and ${instances[0]!.name} list different emails in ${inbox}`);
            }
        }

        stored.set(inbox, views[0]!);
        inDoubtStored += views[0]!.filter((id) => outcomes.inDoubt.has(id)).length;
    }

    return { stored, inDoubtStored, retainedCounts, failures };
}

/** Webhook figures: POSTs, those cut off by a kill, repeats of one delivery, and the emails without one. */
export interface WebhookAudit {
    posts: number;
    cutOff: number;
    repeated: number;
    missing: string[];
    /** Deliveries of one email under different webhook-ids (an email stored twice would cause them). */
    splitIds: number;
    waitedMs: number;
}

/** Waits until every stored email (outside the retained inbox) has an answered POST, up to `limitMs`. */
export async function auditWebhooks(receiver: ClusterReceiver, stored: Map<string, string[]>, limitMs: number): Promise<WebhookAudit> {
    const expected = [...stored].filter(([inbox]) => inbox !== RETAINED_INBOX).flatMap(([, ids]) => ids);
    const began = Date.now();
    const missingNow = () => {
        const answered = new Set(receiver.received.filter((w) => w.answered).map((w) => w.messageId));
        return expected.filter((id) => !answered.has(id));
    };

    while (missingNow().length > 0 && Date.now() - began < limitMs) {
        await sleep(200);
    }

    const byMessage = new Map<string, Set<string>>();
    const byDelivery = new Map<string, number>();
    for (const post of receiver.received.filter((w) => w.answered)) {
        byMessage.set(post.messageId, (byMessage.get(post.messageId) ?? new Set()).add(post.webhookId));
        byDelivery.set(post.webhookId, (byDelivery.get(post.webhookId) ?? 0) + 1);
    }

    return {
        posts: receiver.received.length,
        cutOff: receiver.received.filter((w) => !w.answered).length,
        repeated: [...byDelivery.values()].filter((n) => n > 1).length,
        missing: missingNow(),
        splitIds: [...byMessage.values()].filter((ids) => ids.size > 1).length,
        waitedMs: Date.now() - began
    };
}

/** Wake-up figures: answered polls' latencies, and the failures (late, empty, or failed without a kill). */
export interface WakeAudit {
    rounds: number;
    polls: number;
    latenciesMs: number[];
    cutByKill: number;
    failures: string[];
}

/** Every poll of a delivered round answered with the message within WAKE_LIMIT_MS of its 250, but those a kill cut off. */
export function auditWakeRounds(rounds: WakeRound[], kills: KillRecord[]): WakeAudit {
    const failures: string[] = [];
    const latenciesMs: number[] = [];
    let cutByKill = 0;
    let polls = 0;
    for (const round of rounds.filter((r) => r.delivered)) {
        for (const poll of round.polls) {
            polls++;
            if (poll.error !== undefined) {
                const killed = kills.some((k) => k.instance === poll.instance && k.killedAt >= round.startedAt && k.killedAt <= round.endedAt);
                if (killed) {
                    cutByKill++;
                }
                else {
                    failures.push(`${round.inbox}: the long-poll on ${poll.instance} failed without a kill: ${poll.error}`);
                }
            }
            else if (!poll.holdsMessage || !(poll.latencyMs <= WAKE_LIMIT_MS)) {
                failures.push(`${round.inbox}: the long-poll on ${poll.instance} answered ${poll.holdsMessage ? 'with' : 'without'} the message ${poll.latencyMs.toFixed(0)} ms after the 250 through ${round.through}`);
            }
            else {
                latenciesMs.push(poll.latencyMs);
            }
        }
    }

    if (rounds.filter((r) => r.delivered).length === 0) {
        failures.push('no wake round was delivered');
    }

    return { rounds: rounds.length, polls, latenciesMs: latenciesMs.sort((a, b) => a - b), cutByKill, failures };
}
