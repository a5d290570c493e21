/**
 * The authentication check of one raw message (docs/api.md, "Authentication check"):
 * mailauth's SPF, DKIM, DMARC and ARC, each asking DNS only through the lookup it is
 * given. mailauth's main entry also loads BIMI and MTA-STS, which fetch over HTTPS;
 * the parts used here make no request of their own, which is why they may sit in lib/.
 */

import { arc } from 'mailauth/lib/arc';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { dmarc } from 'mailauth/lib/dmarc';
import { spf } from 'mailauth/lib/spf';
import type { SmtpClient } from '../types';
import { AUTH_CHECK_DEADLINE_MS, type AuthCheckResult, type AuthDns, type DnsLookup } from './auth-check-types';
import { authVerdict, type DkimAnswer, type DmarcAnswer, type SpfAnswer } from './auth-verdict';

/** The name mailauth writes into its comments as the receiving host; none of them leaves the check. */
const MTA = 'inbox-capture';

/** Checks `raw` as received from `client` (absent: SPF is `none`), every lookup through `dns`, all of it within `deadlineMs`. */
export async function checkAuthentication(raw: Buffer, client: SmtpClient | undefined, dns: AuthDns, options: { deadlineMs?: number; now?: () => number } = {}): Promise<AuthCheckResult> {
    const deadline = startDeadline(dns, options.deadlineMs ?? AUTH_CHECK_DEADLINE_MS);
    try {
        const resolver = deadline.lookup;
        const dkim = await dkimVerify(raw, { resolver });
        const address = client?.address ?? null;
        const helo = client?.helo ?? null;
        const mailFrom = client?.mailFrom ?? null;
        const [spfAnswer, arcAnswer] = await Promise.all([
            address === null ? null : spf({
                ip: address,
                // As mailauth's own authenticate() does: an address literal stands in for a missing HELO name.
                helo: helo ?? `[${address}]`,
                ...(mailFrom ? { sender: mailFrom } : {}),
                mta: MTA,
                resolver
            }) as Promise<SpfAnswer>,
            dkim.arc ? arc(dkim.arc as Parameters<typeof arc>[0], { resolver }) : null
        ]);
        const dkimAnswers = dkim.results as unknown as DkimAnswer[];
        const headerFrom = dkim.headerFrom;
        const dmarcAnswer = headerFrom.length !== 1 ? false : await dmarc({
            headerFrom,
            spfDomains: spfAnswer?.status.result === 'pass' && spfAnswer.domain ? [spfAnswer.domain] : [],
            dkimDomains: dkimAnswers.filter((d) => d.status.result === 'pass' && d.signingDomain).map((d) => ({
                domain: d.signingDomain!,
                aligned: (d.status as { aligned?: string | false }).aligned,
                underSized: (d.status as { underSized?: number }).underSized
            })) as Parameters<typeof dmarc>[0]['dkimDomains'],
            ...(arcAnswer ? { arcResult: arcAnswer } : {}),
            resolver
        } as Parameters<typeof dmarc>[0]) as DmarcAnswer | false;
        return authVerdict({
            spf: spfAnswer,
            spfDomain: domainOf(mailFrom) ?? helo,
            dkim: dkimAnswers,
            dmarc: dmarcAnswer,
            arc: arcAnswer
        }, (options.now ?? Date.now)());
    }
    finally {
        deadline.stop();
    }
}

// The domain SPF would have checked without a client address: the envelope sender's.
function domainOf(address: string | null): string | null {
    const at = address?.lastIndexOf('@') ?? -1;
    return address && at >= 0 && at < address.length - 1 ? address.slice(at + 1).toLowerCase() : null;
}

/** A lookup that fails as a DNS timeout does (mailauth reads ETIMEOUT as a temporary error) once `ms` have passed since the check began. */
function startDeadline(dns: AuthDns, ms: number): { lookup: DnsLookup; stop(): void } {
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
            expired = true;
            reject(timeoutError());
            // Questions still out are dropped: their answers would come after the verdict.
            dns.cancel?.();
        }, ms);
    });
    over.catch(() => undefined);
    return {
        lookup: (name, rrtype) => (expired ? Promise.reject(timeoutError()) : Promise.race([dns.lookup(name, rrtype), over])),
        stop() {
            clearTimeout(timer);
            dns.cancel?.();
        }
    };
}

function timeoutError(): Error {
    return Object.assign(new Error('DNS: no answer within the authentication check\'s deadline'), { code: 'ETIMEOUT' });
}
