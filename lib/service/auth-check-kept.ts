/**
 * The authentication check as the service answers it (docs/api.md, "Authentication
 * check"): worked out on the first request and kept with the email, so every later
 * request answers the same verdicts and asks DNS nothing (unless DNS failed for the
 * while: an answer with a `temperror` is not kept).
 */

import { checkAuthentication } from '../auth-check/auth-checker';
import type { AuthCheckResult, AuthDns } from '../auth-check/auth-check-types';
import { InboxCaptureError } from '../errors';
import type { InboxScope } from '../identity/key-scope';
import { budgetSpent } from '../util/message-budget';
import { readBounded } from '../util/read-bounded';
import type { InboxCapture } from './inbox-capture';

/** What the check needs of the service. */
export type AuthCheckService = Pick<InboxCapture, 'getEmail' | 'recordStore' | 'blobStore' | 'messageBudget'>;

// Requests for one email at once share one check, per record store (so per service).
const inFlight = new WeakMap<object, Map<string, Promise<AuthCheckResult>>>();

/**
 * The email's authentication check, or null when it does not exist or lies outside `scope`.
 * `dns` is made when a check must run (`dns()` is not called for a kept one).
 */
export async function keptAuthCheck(service: AuthCheckService, messageId: string, scope: InboxScope | undefined, dns: () => AuthDns, options: { deadlineMs?: number } = {}): Promise<AuthCheckResult | null> {
    const record = await service.getEmail(messageId, scope);
    if (!record) {
        return null;
    }

    const { recordStore } = service;
    const kept = await recordStore.keptAuthCheck?.(record.messageId);
    if (kept) {
        return JSON.parse(kept) as AuthCheckResult;
    }

    let running = inFlight.get(recordStore);
    if (!running) {
        running = new Map();
        inFlight.set(recordStore, running);
    }

    let shared = running.get(record.messageId);
    if (!shared) {
        const map = running;
        shared = runAndKeep(service, record.messageId, record.rawKey, record.rawSize, record.smtpClient, dns, options)
            .finally(() => map.delete(record.messageId));
        running.set(record.messageId, shared);
    }

    return shared;
}

async function runAndKeep(
    service: AuthCheckService,
    messageId: string,
    rawKey: string,
    rawSize: number,
    client: Parameters<typeof checkAuthentication>[1],
    dns: () => AuthDns,
    options: { deadlineMs?: number }
): Promise<AuthCheckResult> {
    // The whole message is read (DKIM hashes the body): its bytes count against the service's budget while held.
    const reservation = service.messageBudget.reserve(rawSize);
    if (!reservation) {
        throw budgetSpent();
    }

    try {
        const stream = await service.blobStore.get(rawKey);
        if (!stream) {
            // Blobs are written before their record and deleted after it: this is a bug or a lost disk.
            throw new InboxCaptureError('BLOB_STORE_FAILED', `the raw message of ${messageId} is missing`);
        }

        const raw = await readBounded(stream, rawSize, 'raw message');
        const result = await checkAuthentication(raw, client, dns(), options);
        // A temporary error is DNS's, not the mail's: it is answered but not kept, so the next request asks again.
        if (isTemporary(result)) {
            return result;
        }

        const kept = await service.recordStore.keepAuthCheck?.(messageId, JSON.stringify(result));
        // Another process may have kept its answer first: every reader then sees that one.
        return kept ? JSON.parse(kept) as AuthCheckResult : result;
    }
    finally {
        reservation.release();
    }
}

/** Whether any verdict of `result` is `temperror`. */
export function isTemporary(result: AuthCheckResult): boolean {
    return [result.spf, ...result.dkim, result.dmarc, result.arc].some((verdict) => verdict.result === 'temperror');
}
