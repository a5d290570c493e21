import { Readable } from 'node:stream';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit, ResponseValue } from '@hapi/hapi';

// hapi serialises a plain object only when it transmits the response, after every
// onPreResponse: a failure there is answered by hapi itself (its own body, none of our
// headers). The plugin's JSON is therefore serialised before it leaves our hands, and
// hapi is given the bytes.

// Responses whose body is serialised already: shapePluginResponse() leaves them as they are.
const serialised = new WeakSet<ResponseObject>();

// What each request holds until its response is sent (or its client is gone): the emails' JSON.
const held = new WeakMap<Request, Array<() => void>>();

/**
 * A JSON response from bytes serialised already, sent chunk by chunk (no single string
 * of the whole body is built); `source` stays what `server.inject()` shows as `result`.
 * `release` is called once the response is sent, or the request ends without it
 * (releaseAfterResponse(), the plugin's onPostResponse).
 */
export function serialisedJson(request: Request, source: object, chunks: Buffer[], release?: () => void): ResponseObject {
    if (release) {
        const list = held.get(request) ?? [];
        list.push(release);
        held.set(request, list);
    }

    const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const marshal = async (): Promise<ResponseValue> => {
        const stream = Readable.from(chunks, { objectMode: false });
        // hapi sends a payload's size() as Content-Length (and drops it when it compresses).
        return Object.assign(stream, { size: () => size }) as unknown as ResponseValue;
    };

    const response = request.generateResponse(source, { variety: 'plain', marshal });
    serialised.add(response);
    return response;
}

/**
 * The response itself when hapi would not JSON-serialise it (or it is serialised
 * already), else the same answer with its JSON serialised now; throws what
 * JSON.stringify throws, while the caller can still answer with an error of ours.
 */
export function serialiseJsonNow(request: Request, response: ResponseObject): ResponseObject {
    const source: unknown = response.source;
    if (serialised.has(response) || response.variety !== 'plain' || typeof source !== 'object' || source === null || Buffer.isBuffer(source)) {
        return response;
    }

    const out = serialisedJson(request, source, [Buffer.from(JSON.stringify(source))]).code(response.statusCode ?? 200);
    for (const [name, value] of Object.entries(response.headers)) {
        out.header(name, String(value));
    }

    return out;
}

/** The plugin's onPostResponse: what the request's answer held (its emails' JSON) is given back once hapi is done with it. */
export function releaseAfterResponse(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
    const list = held.get(request);
    if (list) {
        held.delete(request);
        list.forEach((release) => release());
    }

    return h.continue;
}
