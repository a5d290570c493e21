/** One HEAD request of the link check, to an address already checked (docs/api.md, "Link check"). */

import * as Http from 'node:http';
import * as Https from 'node:https';
import { isIP } from 'node:net';

/** The errors a link may end in; TOO_MANY_REDIRECTS is a redirect past the fifth. */
export type LinkError = 'TIMEOUT' | 'REFUSED' | 'DNS' | 'TLS' | 'NOT_ALLOWED' | 'TOO_MANY_REDIRECTS';

/** A failure of a hop, with the code the answer shows. */
export class LinkHopError extends Error {
    constructor(readonly code: LinkError, message: string) {
        super(message);
    }
}

/** What a HEAD answered: its status and, for a redirect, where to. */
export interface HeadAnswer {
    status: number;
    location?: string;
}

const TLS_CODE = /CERT|SSL|TLS|EPROTO|SELF_SIGNED|UNABLE_TO_|HOSTNAME|ALTNAME/;

/** The code an error of a socket or TLS handshake stands for. */
export function hopErrorCode(err: unknown): LinkError {
    const code = String((err as { code?: unknown })?.code ?? '');
    return TLS_CODE.test(code) ? 'TLS' : 'REFUSED';
}

/**
 * Sends `HEAD` for `url` to `address` (never resolving the name again, so the address
 * checked is the one reached): the URL's host goes in the Host header and, for https, in
 * the TLS server name the certificate is verified against. Rejects with a LinkHopError.
 */
export function headRequest(url: URL, address: string, signal: AbortSignal): Promise<HeadAnswer> {
    const https = url.protocol === 'https:';
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const options: Https.RequestOptions = {
        method: 'HEAD',
        host: address,
        port: url.port === '' ? (https ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { host: url.host, 'user-agent': 'inbox-capture link check', accept: '*/*' },
        agent: false,
        signal,
        // An address is not a server name (SNI): the certificate is then checked against the address.
        ...(https && isIP(hostname) === 0 ? { servername: hostname } : {})
    };

    return new Promise<HeadAnswer>((resolve, reject) => {
        const request = (https ? Https : Http).request(options, (response) => {
            const location = response.headers.location;
            resolve({ status: response.statusCode ?? 0, ...(typeof location === 'string' ? { location } : {}) });
            response.resume();
            request.destroy();
        });
        request.on('error', (err) => {
            reject(signal.aborted ? new LinkHopError('TIMEOUT', 'no answer in time') : new LinkHopError(hopErrorCode(err), (err as Error).message));
        });
        request.end();
    });
}
