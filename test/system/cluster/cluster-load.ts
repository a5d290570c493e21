import type { ClusterInstance } from './cluster-instances';
import { ClusterSender, clusterMessage, type ClusterMessage } from './cluster-mail';

/** What the load phase does and how hard. Durations are milliseconds. */
export interface LoadOptions {
    /** Messages delivered over SMTP by the senders. */
    messages: number;
    /** Concurrent SMTP sessions; sender s starts on instance s mod n and moves on when its instance dies. */
    senders: number;
    /** Inboxes that share the messages evenly (`cluster-0` ...). */
    inboxes: number;
    /** Every n-th message goes to `cluster-retained` instead, the inbox retention trims. */
    retainedEvery: number;
    /** Every n-th message carries an attachment (a second blob). */
    attachmentEvery: number;
    /** Fault traffic: attempts to `cluster-fault`, one session per instance at once, before any kill. */
    faultAttempts: number;
    /** A wake round starts this often while the load runs. */
    wakeEveryMs: number;
    /** Share of the messages acknowledged at which each kill -9 happens (instance 2, 0, 1, 2 ... in turn). */
    kills: number[];
    /** How long a killed instance stays down. */
    restartAfterMs: number;
    progress?: (line: string) => void;
}

/** Where a message ended: acknowledged (250), refused with a code, or in doubt (cut off by a kill). */
export interface Outcomes {
    acknowledged: Map<string, ClusterMessage>;
    inDoubt: Map<string, ClusterMessage>;
    refused: Map<string, number>;
    /** 250s per instance, by name. */
    acksByInstance: Record<string, number>;
}

/** One long-poll of a wake round. */
export interface WakePoll {
    instance: string;
    /** Answer time minus the delivering 250's, ms; NaN when the poll failed. */
    latencyMs: number;
    /** The poll's answer held the round's message. */
    holdsMessage: boolean;
    error?: string;
}

/** One wake round: a long-poll on every instance that is up, then one message to its inbox. */
export interface WakeRound {
    inbox: string;
    through: string;
    /** The delivery's 250 came back (a kill may cut it off: the round's polls then count for nothing). */
    delivered: boolean;
    polls: WakePoll[];
    /** Date.now() at its start and end, to tell a poll cut off by a kill from a failure. */
    startedAt: number;
    endedAt: number;
}

/** A kill -9 and its restart. */
export interface KillRecord {
    instance: string;
    killedAt: number;
    afterAcks: number;
    downMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Long-polls wait this long at most (seconds): far beyond any wake-up, short enough to end a hung run. */
const WAKE_POLL_TIMEOUT_S = 10;
/** Pause between starting a round's long-polls and its delivery, so that they are waiting. */
const WAKE_SETTLE_MS = 300;

/** Records one message's fate. */
function record(outcomes: Outcomes, message: ClusterMessage, result: { code: number } | Error, instance: string): void {
    if (result instanceof Error) {
        outcomes.inDoubt.set(message.messageId, message);
    }
    else if (result.code === 250) {
        outcomes.acknowledged.set(message.messageId, message);
        outcomes.acksByInstance[instance] = (outcomes.acksByInstance[instance] ?? 0) + 1;
    }
    else {
        outcomes.refused.set(message.messageId, result.code);
    }
}

/** The next instance after `from` that is up (or `from` itself when none is). */
function nextUp(instances: ClusterInstance[], from: number): number {
    for (let step = 1; step <= instances.length; step++) {
        const index = (from + step) % instances.length;
        if (instances[index]!.up) {
            return index;
        }
    }

    return from;
}

/** Sends `messages` one after another on a session to `instances[start]`, following the instances that are up. */
async function sendAll(instances: ClusterInstance[], start: number, messages: () => ClusterMessage | undefined, outcomes: Outcomes): Promise<void> {
    let index = start;
    const sender = new ClusterSender(instances[index]!.smtpPort);
    try {
        for (let message = messages(); message; message = messages()) {
            if (!instances[index]!.up) {
                index = nextUp(instances, index);
                sender.moveTo(instances[index]!.smtpPort);
            }

            const result = await sender.send(message);
            record(outcomes, message, result, instances[index]!.name);
            if (result instanceof Error) {
                // The instance died under the session: try the next one that is up, after a breath.
                index = nextUp(instances, index);
                sender.moveTo(instances[index]!.smtpPort);
                await sleep(50);
            }
        }
    }
    finally {
        await sender.close();
    }
}

/** One wake round through `through`: every instance that is up waits on a fresh inbox, then one message arrives. */
export async function wakeRound(instances: ClusterInstance[], through: number, round: number, auth: Record<string, string>, outcomes: Outcomes): Promise<WakeRound> {
    const startedAt = Date.now();
    const inbox = `cluster-wake-${round}`;
    const message = clusterMessage(`wake-${round}`, inbox, false);
    let ackedAt = NaN;
    const abort = new AbortController();
    const polls = instances.filter((instance) => instance.up).map(async (instance): Promise<WakePoll> => {
        try {
            const res = await fetch(`${instance.base}/v1/emails?inbox=${inbox}&wait=true&timeout=${WAKE_POLL_TIMEOUT_S}`, { headers: auth, signal: abort.signal });
            const page = await res.json() as { emails: { messageId: string }[] };
            // Measured from the 250 once it is known: an answer may come back before the client has read the 250.
            const answeredAt = performance.now();
            await delivery;
            return { instance: instance.name, latencyMs: answeredAt - ackedAt, holdsMessage: page.emails.some((e) => e.messageId === message.messageId) };
        }
        catch (err) {
            return { instance: instance.name, latencyMs: NaN, holdsMessage: false, error: (err as Error).message };
        }
    });
    const delivering = instances[through]!.up ? through : nextUp(instances, through);
    const delivery = (async () => {
        await sleep(WAKE_SETTLE_MS);
        const sender = new ClusterSender(instances[delivering]!.smtpPort);
        const sent = await sender.send(message);
        ackedAt = performance.now();
        await sender.close();
        return sent;
    })();
    const result = await delivery;
    record(outcomes, message, result, instances[delivering]!.name);
    const delivered = !(result instanceof Error) && result.code === 250;
    if (!delivered) {
        abort.abort();
    }

    return { inbox, through: instances[delivering]!.name, delivered, polls: await Promise.all(polls), startedAt, endedAt: Date.now() };
}

/** Runs the senders, the wake rounds and the kills until every message was tried and every killed instance is back. */
export async function runLoad(instances: ClusterInstance[], options: LoadOptions, auth: Record<string, string>, outcomes: Outcomes): Promise<{ rounds: WakeRound[]; kills: KillRecord[] }> {
    let next = 0;
    const messages = (): ClusterMessage | undefined => {
        if (next >= options.messages) {
            return undefined;
        }

        const i = next++;
        const inbox = (i + 1) % options.retainedEvery === 0 ? 'cluster-retained' : `cluster-${i % options.inboxes}`;
        return clusterMessage(`load-${i}`, inbox, i % options.attachmentEvery === 0);
    };

    const senders = Array.from({ length: options.senders }, (_, s) => sendAll(instances, s % instances.length, messages, outcomes));
    const rounds: WakeRound[] = [];
    const kills: KillRecord[] = [];
    let loadDone = false;
    const all = Promise.all(senders).finally(() => {
        loadDone = true;
    });

    const waking = (async () => {
        for (let round = 0; !loadDone; round++) {
            const began = Date.now();
            rounds.push(await wakeRound(instances, round % instances.length, round, auth, outcomes));
            await sleep(Math.max(0, options.wakeEveryMs - (Date.now() - began)));
        }
    })();

    const killing = (async () => {
        for (const [k, share] of options.kills.entries()) {
            while (outcomes.acknowledged.size < share * options.messages && !loadDone) {
                await sleep(20);
            }

            const victim = instances[(k + 2) % instances.length]!;
            const afterAcks = outcomes.acknowledged.size;
            const killedAt = Date.now();
            await victim.kill();
            options.progress?.(`cluster: killed ${victim.name} (kill -9) after ${afterAcks} acknowledged`);
            await sleep(options.restartAfterMs);
            await victim.start();
            kills.push({ instance: victim.name, killedAt, afterAcks, downMs: Date.now() - killedAt });
            options.progress?.(`cluster: ${victim.name} back after ${Date.now() - killedAt} ms`);
        }
    })();

    const progress = setInterval(() => options.progress?.(`cluster: ${outcomes.acknowledged.size} acknowledged, ${outcomes.inDoubt.size} in doubt, ${rounds.length} wake rounds`), 10_000);
    try {
        await Promise.all([all, waking, killing]);
    }
    finally {
        clearInterval(progress);
    }

    // Once everything is up again: a round through each instance, the restarted ones' waiters included.
    for (let i = 0; i < instances.length; i++) {
        rounds.push(await wakeRound(instances, i, rounds.length, auth, outcomes));
    }

    return { rounds, kills };
}

/** Fault traffic: `attempts` messages to `cluster-fault`, split over one session per instance, all at once. */
export async function runFaultTraffic(instances: ClusterInstance[], attempts: number, outcomes: Outcomes): Promise<Record<number, number>> {
    let next = 0;
    const codes: Record<number, number> = {};
    await Promise.all(instances.map(async (instance) => {
        const sender = new ClusterSender(instance.smtpPort);
        try {
            for (let i = next++; i < attempts; i = next++) {
                const message = clusterMessage(`fault-${i}`, 'cluster-fault', false);
                const result = await sender.send(message);
                record(outcomes, message, result, instance.name);
                const code = result instanceof Error ? 0 : result.code;
                codes[code] = (codes[code] ?? 0) + 1;
            }
        }
        finally {
            await sender.close();
        }
    }));
    return codes;
}
