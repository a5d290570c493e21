/**
 * The link check (docs/api.md, "Link check"): each link asked with HEAD, its redirects
 * followed by hand, every hop's resolved address judged by the allow-list before a
 * connection is made to that same address.
 */

import { promises as Dns } from 'node:dns';
import { isIP } from 'node:net';
import type { LinkAllowList } from '../../lib/link-check/allow-list';
import { createConcurrencyLimit } from '../../lib/util/concurrency-limit';
import { headRequest, LinkHopError, type LinkError } from './head-request';

/** Redirects a link may take; a sixth ends it in TOO_MANY_REDIRECTS. */
export const MAX_LINK_REDIRECTS = 5;
/** Links asked at once, by all the checks of a service together. */
export const LINK_CHECK_CONCURRENCY = 5;

/** One link's outcome: `ok` when its last answer is below 400. */
export interface LinkResult {
    url: string;
    ok: boolean;
    status?: number;
    error?: LinkError;
    redirects: string[];
}

/** What a checker needs: validated settings and the service's ports at the time of asking. */
export interface LinkCheckerSettings {
    allow: LinkAllowList;
    /** Time a link may take in all, its redirects and name lookups included. */
    timeoutMs: number;
    /** DNS servers (`host:port`) names are resolved with; default the system's resolver. */
    dnsServers?: string[];
    /** The service's own listening ports (HTTP, SMTP). */
    ownPorts(): number[];
}

/** Checks the links of one email at a time, sharing one bound on requests in flight. */
export interface LinkChecker {
    /** The outcome of every URL, in their order. */
    check(urls: readonly string[]): Promise<LinkResult[]>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

// The abort of `signal` as a rejection, so that a lookup is bounded by the link's time too.
function raced<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(new LinkHopError('TIMEOUT', 'no answer in time'));
        if (signal.aborted) {
            onAbort();
            return;
        }

        signal.addEventListener('abort', onAbort, { once: true });
        work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
}

/** A checker for `settings`; nothing is asked until check() is called. */
export function createLinkChecker(settings: LinkCheckerSettings): LinkChecker {
    const limit = createConcurrencyLimit(LINK_CHECK_CONCURRENCY);
    let resolver: Dns.Resolver | undefined;
    if (settings.dnsServers && settings.dnsServers.length > 0) {
        resolver = new Dns.Resolver({ timeout: settings.timeoutMs, tries: 1 });
        resolver.setServers(settings.dnsServers);
    }

    const lookup = async (host: string): Promise<string[]> => {
        if (isIP(host) !== 0) {
            return [host];
        }

        try {
            if (resolver) {
                const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
                const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
                if (addresses.length > 0) {
                    return addresses;
                }

                throw answers.map((a) => (a.status === 'rejected' ? a.reason : undefined)).find(Boolean) ?? new Error('no address');
            }

            return (await Dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
        }
        catch (err) {
            const code = String((err as { code?: unknown }).code ?? '');
            // A resolver that never answers is a timeout; every other failure means no address.
            throw new LinkHopError(code === 'ETIMEOUT' ? 'TIMEOUT' : 'DNS', `${host}: ${(err as Error).message}`);
        }
    };

    const checkOne = async (raw: string): Promise<LinkResult> => {
        const redirects: string[] = [];
        const signal = AbortSignal.timeout(settings.timeoutMs);
        const failed = (error: LinkError, status?: number): LinkResult => ({ url: raw, ok: false, ...(status === undefined ? {} : { status }), error, redirects });
        let url: URL;
        try {
            url = new URL(raw);
        }
        catch {
            return failed('NOT_ALLOWED');
        }

        try {
            for (;;) {
                if (url.protocol !== 'http:' && url.protocol !== 'https:') {
                    return failed('NOT_ALLOWED');
                }

                // Node's URL parser has already turned 2130706433, 0177.0.0.1, 0x7f.1 and 127.1
                // into 127.0.0.1, and IPv6 into its short form: what is judged is what is dialled.
                const host = url.hostname.replace(/^\[|\]$/g, '');
                const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
                const addresses = await raced(lookup(host), signal);
                const ownPorts = settings.ownPorts();
                if (addresses.some((address) => settings.allow.verdict(host, address, port, ownPorts) !== undefined)) {
                    return failed('NOT_ALLOWED');
                }

                const answer = await raced(headRequest(url, addresses[0], signal), signal);
                if (!REDIRECTS.has(answer.status) || answer.location === undefined) {
                    return { url: raw, ok: answer.status < 400, status: answer.status, redirects };
                }

                if (redirects.length === MAX_LINK_REDIRECTS) {
                    return failed('TOO_MANY_REDIRECTS', answer.status);
                }

                try {
                    url = new URL(answer.location, url);
                }
                catch {
                    return failed('NOT_ALLOWED', answer.status);
                }

                redirects.push(url.href);
            }
        }
        catch (err) {
            if (err instanceof LinkHopError) {
                return failed(err.code);
            }

            throw err;
        }
    };

    return {
        check(urls) {
            // The same URL twice in one email is asked once: a one-time link is not spent by its own copy.
            const asked = new Map<string, Promise<LinkResult>>();
            return Promise.all(urls.map((url) => {
                let result = asked.get(url);
                if (!result) {
                    result = limit.run(() => checkOne(url));
                    asked.set(url, result);
                }

                return result;
            }));
        }
    };
}
