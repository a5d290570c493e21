/** The authentication check's answer (docs/api.md, "Authentication check") and what it asks DNS through. */

/** The result words of RFC 8601 the check answers with. */
export const AUTH_RESULTS = ['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror'] as const;

/** One result word. */
export type AuthResult = typeof AUTH_RESULTS[number];

/** The whole check's time, DNS included, ms: a lookup still unanswered then is a `temperror`. */
export const AUTH_CHECK_DEADLINE_MS = 5000;

/** The check's answer, kept with the email after the first request. */
export interface AuthCheckResult {
    /** SPF of the envelope sender's domain (the HELO name's when the sender is `<>`) for the client's address. */
    spf: { result: AuthResult; domain: string | null };
    /** One verdict per DKIM signature, in header order; one `none` (domain and selector null) for an unsigned email. */
    dkim: Array<{ result: AuthResult; domain: string | null; selector: string | null }>;
    /** DMARC of the `From` domain; `policy` is the record's `p` (or `sp` for a subdomain), null without a record. */
    dmarc: { result: AuthResult; domain: string | null; policy: string | null };
    /** The ARC chain's verdict: `none` without ARC headers. */
    arc: { result: AuthResult };
    /** When it was worked out, Unix ms. */
    checkedAt: number;
}

/** A DNS lookup as mailauth asks it: TXT answers as arrays of strings, others as strings; a failure rejects with a `code` (ENOTFOUND, ENODATA, ETIMEOUT ...). */
export type DnsLookup = (name: string, rrtype: string) => Promise<string[][] | string[]>;

/** The DNS the check asks: `lookup` for every question, `cancel` (when there is one) for the ones left when the check ends. */
export interface AuthDns {
    lookup: DnsLookup;
    cancel?(): void;
}
