/**
 * The service's fault rules (docs/api.md, "Faults"): kept in the record store, so every
 * instance sharing it applies the same rules and a rule's `times` is counted once across
 * all of them. The SMTP listener asks `armed()` on every command (a clock read when no
 * rule is set) and `take()` only when it answers true.
 */

import { nextFaultId } from '../faults/fault-id';
import { InboxCaptureError } from '../errors';
import type { InboxFromAddress } from '../identity/recipients';
import type { RecordStore } from '../record-store/record-store';
import { faultInScope, type InboxScope } from '../identity/key-scope';
import { faultMatches, type FaultFacts } from '../faults/fault-matching';
import { checkFaultRuleInput, MAX_FAULT_RULES, MAX_FAULT_RULES_PER_PREFIX, toFaultRule, type FaultRule, type FaultRuleInput, type FaultStage } from '../faults/fault-rule';

/** What one command gets instead of (or before) its normal reply. */
export interface FaultAction {
    ruleId: string;
    /** The reply that replaces the normal one. */
    reply?: { code: number; message: string };
    /** Wait first, ms (0: none). */
    delayMs: number;
    /** Close the connection after the reply (or without one). */
    disconnect: boolean;
}

/** The fault rules of one service. */
export interface Faults {
    /**
     * Stores a rule made with a key of `scope` (default: full access); answers it with its id.
     * INVALID_INPUT when malformed; LIMIT_REACHED when MAX_FAULT_RULES are kept, or
     * MAX_FAULT_RULES_PER_PREFIX for the inboxes of the scope's prefix.
     */
    create(input: FaultRuleInput, scope?: InboxScope): Promise<FaultRule>;
    /** Every rule `scope` reaches (default: all; docs/api.md, "Keys with a scope"), oldest first. */
    list(scope?: InboxScope): Promise<FaultRule[]>;
    /** Deletes one rule; false when none has that id or `scope` does not reach it. */
    delete(id: string, scope?: InboxScope): Promise<boolean>;
    /** Deletes every rule `scope` reaches (default: all); answers how many were there. */
    deleteAll(scope?: InboxScope): Promise<number>;
    /** False only when no rule of `stage` exists as of a read at most `refreshMs` old: the caller skips take(). */
    armed(stage: FaultStage): boolean;
    /**
     * The fault the command described by `facts` gets, or null: the oldest matching rule
     * whose probability comes up and, with `times`, whose use is claimed in the store.
     */
    take(stage: FaultStage, facts: FaultFacts): Promise<FaultAction | null>;
}

/** What the rules are kept and matched with. */
export interface FaultsOptions {
    recordStore: RecordStore;
    inboxFromAddress: InboxFromAddress;
    /** How old the cached rule set may be before a command reads it again, and how long a change waits before it resolves, ms. */
    refreshMs: number;
    /** [0, 1) for `probability` (default Math.random). */
    random?: () => number;
}

/** The text of a reply a rule gives without a message of its own. */
export const DEFAULT_FAULT_MESSAGE = 'Fault injected by inbox-capture';

type FaultStore = Required<Pick<RecordStore, 'saveFaultRule' | 'listFaultRules' | 'deleteFaultRules' | 'claimFaultRule'>>;

function storeOf(recordStore: RecordStore): FaultStore | null {
    const { saveFaultRule, listFaultRules, deleteFaultRules, claimFaultRule } = recordStore;
    if (!saveFaultRule || !listFaultRules || !deleteFaultRules || !claimFaultRule) {
        return null;
    }

    return {
        saveFaultRule: saveFaultRule.bind(recordStore),
        listFaultRules: listFaultRules.bind(recordStore),
        deleteFaultRules: deleteFaultRules.bind(recordStore),
        claimFaultRule: claimFaultRule.bind(recordStore)
    };
}

/** Throws LIMIT_REACHED when one more rule would pass the limit in all, or that of the scope's prefix. */
function checkFaultLimits(kept: readonly FaultRule[], scope: InboxScope | undefined): void {
    if (kept.length >= MAX_FAULT_RULES) {
        throw new InboxCaptureError('LIMIT_REACHED', `faults: at most ${MAX_FAULT_RULES} rules are kept; delete some first`);
    }

    const prefix = scope?.inboxPrefix;
    if (prefix && kept.filter((r) => faultInScope(scope, r.match)).length >= MAX_FAULT_RULES_PER_PREFIX) {
        throw new InboxCaptureError('LIMIT_REACHED', `faults: at most ${MAX_FAULT_RULES_PER_PREFIX} rules are kept for the inboxes of the prefix "${prefix}"; delete some first`);
    }
}

/** The fault rules over `options.recordStore` (none, and create() refused, when it keeps no rules). */
export function createFaults(options: FaultsOptions): Faults {
    const { inboxFromAddress, refreshMs } = options;
    const random = options.random ?? Math.random;
    const store = storeOf(options.recordStore);
    // The rule set as last read, by stage, and when that read began (a monotonic clock, ms;
    // -Infinity: read it again first). A command uses only a set whose read began at most
    // `refreshMs` before it, and a change waits `refreshMs` before it answers: so every
    // command on any instance that comes after the answer sees the change (docs/api.md, "Faults").
    let rules: FaultRule[] = [];
    let stages = new Set<FaultStage>();
    let readStartedAt = -Infinity;
    let reading: { startedAt: number; done: Promise<void> } | null = null;
    // Bumped by every change made here: a read that began before one must not count as fresh.
    let changes = 0;

    const stale = (now: number) => now - readStartedAt >= refreshMs;
    const invalidate = () => {
        changes++;
        readStartedAt = -Infinity;
    };

    // A read that began at `notBefore` or later: the one under way when it did, or a new one.
    const refresh = (notBefore: number): Promise<void> => {
        if (reading && reading.startedAt >= notBefore) {
            return reading.done;
        }

        const startedAt = performance.now();
        const changesBefore = changes;
        const entry: { startedAt: number; done: Promise<void> } = { startedAt, done: Promise.resolve() };
        entry.done = (async () => {
            try {
                const read = await store!.listFaultRules();
                // An older read that ends after a newer one does not replace what that found.
                if (startedAt > readStartedAt) {
                    rules = read;
                    stages = new Set(read.map((r) => r.stage));
                    readStartedAt = changes === changesBefore ? startedAt : -Infinity;
                }
            }
            finally {
                if (reading === entry) {
                    reading = null;
                }
            }
        })();
        reading = entry;
        return entry.done;
    };

    // A change is answered only once every instance's next command reads the rules anew.
    const settle = () => new Promise<void>((resolve) => setTimeout(resolve, refreshMs));

    const forget = (id: string) => {
        rules = rules.filter((r) => r.id !== id);
        stages = new Set(rules.map((r) => r.stage));
    };

    // The rules a key's scope reaches: all of them without a prefix.
    const reachable = async (scope: InboxScope | undefined): Promise<FaultRule[]> => {
        const all = store ? await store.listFaultRules() : [];
        return scope?.inboxPrefix ? all.filter((r) => faultInScope(scope, r.match)) : all;
    };

    const required = (): FaultStore => {
        if (!store) {
            throw new InboxCaptureError('INVALID_INPUT', 'this record store keeps no fault rules');
        }

        return store;
    };

    return {
        async create(input, scope) {
            checkFaultRuleInput(input);
            const faultStore = required();
            const { id, createdAt } = nextFaultId();
            const rule = toFaultRule(input, id, createdAt);
            // Counted in the insert's own write: concurrent creates cannot all slip under a limit.
            await faultStore.saveFaultRule(rule, (kept) => checkFaultLimits(kept, scope));
            invalidate();
            await settle();
            return rule;
        },

        list(scope) {
            return reachable(scope);
        },

        async delete(id, scope) {
            // A rule outside the scope is answered as one that does not exist.
            if (!store || (scope?.inboxPrefix && !(await reachable(scope)).some((r) => r.id === id))) {
                return false;
            }

            const deleted = await store.deleteFaultRules([id]);
            invalidate();
            if (deleted > 0) {
                await settle();
            }

            return deleted > 0;
        },

        async deleteAll(scope) {
            const ids = scope?.inboxPrefix ? (await reachable(scope)).map((r) => r.id) : undefined;
            if (!store || ids?.length === 0) {
                return 0;
            }

            const deleted = await store.deleteFaultRules(ids);
            invalidate();
            if (deleted > 0) {
                await settle();
            }

            return deleted;
        },

        armed(stage) {
            return store !== null && (stale(performance.now()) || stages.has(stage));
        },

        async take(stage, facts) {
            if (!store) {
                return null;
            }

            const now = performance.now();
            if (stale(now)) {
                await refresh(now - refreshMs);
            }

            for (const rule of rules) {
                if (rule.stage !== stage || !faultMatches(rule.match, facts, inboxFromAddress)) {
                    continue;
                }

                if (rule.probability < 1 && !(random() < rule.probability)) {
                    continue;
                }

                if (rule.remaining !== null) {
                    // The store counts the uses: across instances, exactly `times` commands win one.
                    const remaining = await store.claimFaultRule(rule.id);
                    if (remaining === null || remaining === 0) {
                        forget(rule.id);
                    }

                    if (remaining === null) {
                        continue;
                    }
                }

                return {
                    ruleId: rule.id,
                    ...(rule.reply ? { reply: { code: rule.reply.code, message: rule.reply.message ?? DEFAULT_FAULT_MESSAGE } } : {}),
                    delayMs: rule.delayMs ?? 0,
                    disconnect: rule.disconnect === true
                };
            }

            return null;
        }
    };
}
