/**
 * SMTP faults on purpose (docs/api.md, "Faults"): a rule makes the listener misbehave at
 * one stage of a session, so a test can check how the application copes. The core keeps
 * the rules and counts their uses; the SMTP adapter applies them.
 */

import { InboxCaptureError } from '../errors';

/** The stage of a session a rule acts at: the greeting, MAIL FROM, one RCPT TO, or the end of DATA. */
export type FaultStage = 'connect' | 'mail' | 'rcpt' | 'data';

/** Every stage, in session order. */
export const FAULT_STAGES: readonly FaultStage[] = ['connect', 'mail', 'rcpt', 'data'];

/** Which commands a rule answers: `inbox` exact, `recipient` and `sender` case-insensitive substrings. */
export interface FaultMatch {
    inbox?: string;
    recipient?: string;
    sender?: string;
}

/** A rule as it is asked for. */
export interface FaultRuleInput {
    stage: FaultStage;
    /** None for `connect`; no `inbox` or `recipient` for `mail` (there are no recipients yet). */
    match?: FaultMatch;
    /** The reply that replaces the normal one: code 400–599. */
    reply?: { code: number; message?: string };
    /** Wait before the reply, the disconnect or the normal reply, ms (0–60000). */
    delayMs?: number;
    /** Close the connection (after the reply, when there is one). */
    disconnect?: boolean;
    /** Only the next `times` matching commands get the fault; then the rule is gone. */
    times?: number;
    /** The chance a matching command gets it (default 1). */
    probability?: number;
}

/** A stored rule: its id, and how many more commands get it (`null`: until it is deleted). */
export interface FaultRule {
    id: string;
    stage: FaultStage;
    match: FaultMatch;
    reply?: { code: number; message?: string };
    delayMs?: number;
    disconnect?: true;
    times?: number;
    probability: number;
    remaining: number | null;
    createdAt: number;
}

/** Longest wait a rule may ask for, ms: a minute, under every SMTP client's command timeout. */
export const MAX_FAULT_DELAY_MS = 60_000;
/** Longest text of a match field or a reply, characters. */
export const MAX_FAULT_TEXT = 512;
/** Rules kept at once: every command of every session looks at them. */
export const MAX_FAULT_RULES = 1_000;
/** Rules kept at once for the inboxes of one key prefix, so one team's key cannot use up the rest. */
export const MAX_FAULT_RULES_PER_PREFIX = 100;

function invalid(message: string): never {
    throw new InboxCaptureError('INVALID_INPUT', `fault rule: ${message}`);
}

function checkText(name: string, value: unknown): void {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > MAX_FAULT_TEXT)) {
        invalid(`${name} must be a string of 1..${MAX_FAULT_TEXT} characters`);
    }
}

/**
 * Checks a rule as the core takes it (the HTTP edge validates first, with its own
 * messages); throws INVALID_INPUT naming what is wrong.
 */
export function checkFaultRuleInput(input: FaultRuleInput): void {
    if (!FAULT_STAGES.includes(input.stage)) {
        invalid(`stage must be one of ${FAULT_STAGES.join(', ')}`);
    }

    const match = input.match ?? {};
    for (const field of ['inbox', 'recipient', 'sender'] as const) {
        checkText(`match.${field}`, match[field]);
    }

    if (input.stage === 'connect' && Object.values(match).some((v) => v !== undefined)) {
        invalid('a connect rule takes no match');
    }

    if (input.stage === 'mail' && (match.inbox !== undefined || match.recipient !== undefined)) {
        invalid('a mail rule matches on the sender only');
    }

    const { reply, delayMs, disconnect, times, probability } = input;
    if (reply === undefined && delayMs === undefined && disconnect !== true) {
        invalid('needs at least one of reply, delayMs, disconnect');
    }

    if (reply !== undefined && !(Number.isInteger(reply.code) && reply.code >= 400 && reply.code <= 599)) {
        invalid('reply.code must be 400..599');
    }

    checkText('reply.message', reply?.message);
    if (delayMs !== undefined && !(Number.isInteger(delayMs) && delayMs >= 0 && delayMs <= MAX_FAULT_DELAY_MS)) {
        invalid(`delayMs must be a whole number 0..${MAX_FAULT_DELAY_MS}`);
    }

    if (times !== undefined && !(Number.isSafeInteger(times) && times >= 1)) {
        invalid('times must be a whole number of at least 1');
    }

    if (probability !== undefined && !(typeof probability === 'number' && probability >= 0 && probability <= 1)) {
        invalid('probability must be 0..1');
    }
}

/** The stored form of a checked input: defaults applied, absent fields left out. */
export function toFaultRule(input: FaultRuleInput, id: string, createdAt: number): FaultRule {
    const match: FaultMatch = {};
    for (const field of ['inbox', 'recipient', 'sender'] as const) {
        if (input.match?.[field] !== undefined) {
            match[field] = input.match[field];
        }
    }

    return {
        id,
        stage: input.stage,
        match,
        ...(input.reply ? { reply: input.reply.message === undefined ? { code: input.reply.code } : { code: input.reply.code, message: input.reply.message } } : {}),
        ...(input.delayMs !== undefined ? { delayMs: input.delayMs } : {}),
        ...(input.disconnect === true ? { disconnect: true } : {}),
        ...(input.times !== undefined ? { times: input.times } : {}),
        probability: input.probability ?? 1,
        remaining: input.times ?? null,
        createdAt
    };
}
