import * as Http from 'node:http';

/** What came back over the wire. */
export interface RawResponse {
    statusCode: number;
    headers: Http.IncomingHttpHeaders;
    body: Buffer;
}

/**
 * One HTTP/1.1 request to a loopback port with the path sent byte for byte as given
 * (no URL normalisation: `fetch` would resolve `..` and `%2e%2e` before sending).
 */
export function rawRequest(port: number, path: string, options: { method?: string; headers?: Http.OutgoingHttpHeaders; agent?: Http.Agent | false } = {}): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
        const req = Http.request({
            host: '127.0.0.1',
            port,
            method: options.method ?? 'GET',
            path,
            headers: options.headers,
            agent: options.agent ?? false
        }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
    });
}

/** Decodes bytes as UTF-8, throwing on any invalid sequence (Buffer#toString would repair them silently). */
export function strictUtf8(bytes: Buffer): string {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` is well-formed UTF-16 (String#isWellFormed is Node 22+). */
export function isWellFormed(text: string): boolean {
    return !LONE_SURROGATE.test(text);
}

/** Every string in a JSON value, with its path (`attachments[0].filename`). */
export function stringsOf(value: unknown, path = ''): Array<[string, string]> {
    if (typeof value === 'string') {
        return [[path, value]];
    }

    if (Array.isArray(value)) {
        return value.flatMap((item, i) => stringsOf(item, `${path}[${i}]`));
    }

    if (value && typeof value === 'object') {
        return Object.entries(value).flatMap(([key, item]) => stringsOf(item, path ? `${path}.${key}` : key));
    }

    return [];
}
