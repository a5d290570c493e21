import type * as Hapi from '@hapi/hapi';

/** A followed download: status, headers and the exact body bytes. */
export interface Download {
    statusCode: number;
    headers: Record<string, string>;
    body: Buffer;
}

/**
 * Follows a download redirect: into the server for a link it serves itself (a path),
 * over HTTP for object storage (an absolute URL, which must point at loopback: the
 * tests' s3rver). No API key is sent either way.
 */
export async function followDownload(server: Hapi.Server, location: string): Promise<Download> {
    if (location.startsWith('/')) {
        const res = await server.inject({ method: 'GET', url: location });
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
            headers[name] = String(value);
        }

        return { statusCode: res.statusCode, headers, body: res.rawPayload };
    }

    const url = new URL(location);
    if (url.hostname !== '127.0.0.1' || url.protocol !== 'http:') {
        throw new Error(`Refusing to follow a download link off loopback: ${url.origin}`);
    }

    const res = await fetch(url, { redirect: 'manual' });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
        headers[name] = value;
    });
    return { statusCode: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** What a download link itself promises, whichever store made it. */
export interface LinkTerms {
    /** `server`: a path the plugin serves (fs store); `presigned`: an absolute object-storage URL. */
    kind: 'server' | 'presigned';
    /** Unix seconds after which the link stops working. */
    expiresAt: number;
    /** The lifetime the link states itself (presigned: `X-Amz-Expires`), seconds; null for server links, which state only `expires`. */
    lifetimeSeconds: number | null;
    /** The media type the download will be served as. */
    contentType: string | null;
    /** The Content-Disposition it will be served with (presigned), or null when the server builds it. */
    disposition: string | null;
    /** The file name it carries (server links), or null. */
    filename: string | null;
}

/**
 * Reads a download link's own parameters: `expires`/`type`/`filename` of a signed
 * server link, or `X-Amz-Date` + `X-Amz-Expires`, `response-content-type` and
 * `response-content-disposition` of a presigned S3 URL (SigV4 query parameters).
 */
export function linkTerms(location: string): LinkTerms {
    if (location.startsWith('/')) {
        const query = new URL(location, 'http://server.invalid').searchParams;
        return {
            kind: 'server',
            expiresAt: Number(query.get('expires')),
            lifetimeSeconds: null,
            contentType: query.get('type'),
            disposition: null,
            filename: query.get('filename')
        };
    }

    const query = new URL(location).searchParams;
    // X-Amz-Date is ISO 8601 basic format: 20261121T145509Z.
    const signedAt = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(query.get('X-Amz-Date') ?? '');
    const signedSeconds = signedAt ?
        Date.UTC(+signedAt[1], +signedAt[2] - 1, +signedAt[3], +signedAt[4], +signedAt[5], +signedAt[6]) / 1000 :
        Number.NaN;
    return {
        kind: 'presigned',
        expiresAt: signedSeconds + Number(query.get('X-Amz-Expires')),
        lifetimeSeconds: Number(query.get('X-Amz-Expires')),
        contentType: query.get('response-content-type'),
        disposition: query.get('response-content-disposition'),
        filename: null
    };
}
