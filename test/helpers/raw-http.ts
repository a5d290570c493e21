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
