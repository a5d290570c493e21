import * as Http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the proxy forwarded: what the link's host would have seen. */
export interface RecordedRequest {
    method: string;
    url: string;
    headers: Http.IncomingHttpHeaders;
}

/** A loopback HTTP proxy in front of another server (s3rver), recording every request. */
export interface RecordingProxy {
    /** `http://127.0.0.1:<port>`: give it as the S3 endpoint, so presigned links point here. */
    url: string;
    requests: RecordedRequest[];
    /** Stops listening (connections included). */
    close(): Promise<void>;
}

/**
 * Forwards each request to `target` as it came (Host header included, so an S3
 * signature made for the proxy's address still verifies) and records it. Answers
 * carry `Access-Control-Allow-Origin: *`, as a bucket's CORS rule would, so that a
 * page on another origin may read a download.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
    const upstream = new URL(target);
    const requests: RecordedRequest[] = [];
    const server = Http.createServer((req, res) => {
        requests.push({ method: req.method!, url: req.url!, headers: { ...req.headers } });
        if (req.method === 'OPTIONS') {
            // A preflight would mean the browser meant to send a non-simple header: recorded, refused.
            res.writeHead(403, { 'access-control-allow-origin': '*' }).end();
            return;
        }

        const forward = Http.request({
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: req.headers
        }, (answer) => {
            res.writeHead(answer.statusCode!, { ...answer.headers, 'access-control-allow-origin': '*' });
            answer.pipe(res);
        });
        forward.on('error', () => res.destroy());
        req.pipe(forward);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () => new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        })
    };
}
