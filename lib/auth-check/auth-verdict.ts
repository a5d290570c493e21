/**
 * mailauth's answers shaped into the check's verdicts (docs/api.md, "Authentication
 * check"): only result words of RFC 8601 leave, and only the fields the API shows.
 */

import { AUTH_RESULTS, type AuthCheckResult, type AuthResult } from './auth-check-types';

/** A word mailauth may answer that the API does not use (DKIM's `policy` for a key below 1024 bits) reads as `permerror`. */
export function resultWord(word: unknown): AuthResult {
    return (AUTH_RESULTS as readonly unknown[]).includes(word) ? word as AuthResult : 'permerror';
}

/** What the shaping reads of mailauth's SPF answer. */
export interface SpfAnswer { domain?: string; status: { result: string } }
/** What it reads of one DKIM signature's verdict: the body's hash as computed and as signed besides the word. */
export interface DkimAnswer { signingDomain?: string; selector?: string; bodyHash?: string; bodyHashExpecting?: string; status: { result: string } }
/** What it reads of the DMARC answer (mailauth answers false for a message without one `From` address). */
export interface DmarcAnswer { domain?: string; policy?: string; status: { result: string } }

/** The verdicts of one check, `checkedAt` the time it was worked out. */
export function authVerdict(answers: { spf: SpfAnswer | null; spfDomain: string | null; dkim: DkimAnswer[]; dmarc: DmarcAnswer | false; arc: { status: { result: string } } | null }, checkedAt: number): AuthCheckResult {
    const { spf, dkim, dmarc, arc } = answers;
    const signatures = dkim.filter((d) => d.signingDomain !== undefined);
    return {
        spf: spf ? { result: resultWord(spf.status.result), domain: nonEmpty(spf.domain) } : { result: 'none', domain: answers.spfDomain },
        dkim: signatures.length === 0 ?
            [{ result: 'none', domain: null, selector: null }] :
            signatures.map((d) => ({ result: dkimWord(d), domain: nonEmpty(d.signingDomain), selector: nonEmpty(d.selector) })),
        dmarc: dmarc ?
            { result: resultWord(dmarc.status.result), domain: nonEmpty(dmarc.domain), policy: nonEmpty(dmarc.policy) } :
            { result: 'none', domain: null, policy: null },
        arc: { result: arc ? resultWord(arc.status.result) : 'none' },
        checkedAt
    };
}

// mailauth answers `neutral` for a body that no longer matches its signature's hash, as
// Gmail does; RFC 6376 (3.7) makes it a failed verification, and a test that changed a
// signed body wants to read that it broke the signature.
function dkimWord(answer: DkimAnswer): AuthResult {
    const changed = answer.bodyHash !== undefined && answer.bodyHashExpecting !== undefined && answer.bodyHash !== answer.bodyHashExpecting;
    return changed ? 'fail' : resultWord(answer.status.result);
}

function nonEmpty(value: string | undefined): string | null {
    return value === undefined || value === '' || value === '-' ? null : value;
}
