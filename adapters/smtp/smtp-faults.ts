/**
 * Applies the service's fault rules to SMTP commands (docs/api.md, "Faults"): the rule's
 * wait, then its reply in place of the normal one, then the disconnect. With no rule set
 * a command costs one clock read (Faults.armed()).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultFacts } from '../../lib/faults/fault-matching';
import type { FaultStage } from '../../lib/faults/fault-rule';
import type { Faults } from '../../lib/service/faults';
import { smtpReply, type SmtpReplyError } from './smtp-replies';

/**
 * Runs one command past the rules: `proceed()` is the normal path; `answer(reply)` sends
 * the rule's reply as the command's (the hook's callback with an error); `close()` drops
 * the connection. A rule with only a wait proceeds after it. Answers what `proceed()`
 * answers on the fast path, and a promise of the whole otherwise (never rejected).
 */
export type FaultGate = (stage: FaultStage, facts: FaultFacts, sessionId: string, answer: (reply: SmtpReplyError) => void, proceed: () => void | Promise<void>) => void | Promise<void>;

/** What a gate needs from its listener. */
export interface FaultGateOptions {
    /** The service's rules; absent (a listener on a bare ingest function) applies none. */
    faults?: Faults;
    /** Closes the connection of a session (after anything written to it is sent). */
    close(sessionId: string): void;
    /** Aborted when the listener closes: waits end at once. */
    signal: AbortSignal;
    log: (message: string, error?: unknown) => void;
}

/** The gate every hook of one listener runs its command through. */
export function createFaultGate(options: FaultGateOptions): FaultGate {
    const { faults, close, signal, log } = options;
    return (stage, facts, sessionId, answer, proceed) => {
        if (!faults?.armed(stage)) {
            return proceed();
        }

        return (async () => {
            let action;
            try {
                action = await faults.take(stage, facts);
            }
            catch (err) {
                // The rules could not be read: the mail goes through as if there were none.
                log(`smtp: fault rules could not be read at ${stage}; none applied`, err);
                action = null;
            }

            if (action && action.delayMs > 0 && !signal.aborted) {
                await sleep(action.delayMs, undefined, { signal }).catch(() => undefined);
            }

            if (!action || (!action.reply && !action.disconnect)) {
                await proceed();
                return;
            }

            if (action.reply) {
                answer(smtpReply(action.reply.code, action.reply.message));
            }

            if (action.disconnect) {
                close(sessionId);
            }
        })();
    };
}
