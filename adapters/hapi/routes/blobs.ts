import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { DEFAULT_LINK_PATH, type FsBlobStore } from '../../../lib/blob-store/fs-blob-store';
import type { BlobStore } from '../../../lib/blob-store/blob-store';
import { attachmentDisposition } from '../../../lib/content-disposition';
import { errorResponses, SERVER_ERRORS } from '../api-schemas';
import { apiError } from '../error-mapping';
import { API_TAG, GROUP_DOWNLOADS } from '../route-context';

/**
 * What a served download may do in a browser, should one ever render it despite
 * `Content-Disposition: attachment`: nothing (no scripts, no requests, no framing).
 */
export const DOWNLOAD_CSP = 'default-src \'none\'; sandbox; frame-ancestors \'none\'';

/** True for a blob store whose links the plugin must serve and check itself. */
export function servesOwnLinks(store: BlobStore): store is FsBlobStore {
    return typeof (store as Partial<FsBlobStore>).verifyDownload === 'function';
}

// The signature fields of a link; anything else in the query is ignored, repeated fields are refused.
function linkQuery(query: Request['query']): Record<string, string | undefined> {
    const out: Record<string, string | undefined> = {};
    for (const name of ['expires', 'filename', 'type', 'sig']) {
        const value: unknown = query[name];
        out[name] = typeof value === 'string' ? value : undefined;
    }

    return out;
}

/**
 * The route serving the filesystem store's signed links (DECISIONS): no API key, the
 * HMAC and expiry in the query are the credential; a bad or expired one is 403 FORBIDDEN.
 */
export function blobRoutes(blobStore: FsBlobStore): ServerRoute[] {
    const serve = async (request: Request, h: ResponseToolkit) => {
        const key = request.params.key as string;
        const verified = blobStore.verifyDownload(key, linkQuery(request.query));
        if (!verified) {
            throw apiError(403, 'FORBIDDEN');
        }

        // Deleted after the link was made: the link is genuine, the blob is gone.
        const stream = await blobStore.get(key);
        if (!stream) {
            throw apiError(404, 'NOT_FOUND');
        }

        const response = h.response(stream)
            .type(verified.contentType)
            .header('Content-Disposition', attachmentDisposition(verified.filename))
            .header('Content-Security-Policy', DOWNLOAD_CSP)
            .header('Cache-Control', 'private, no-store');
        // The stored media type exactly: hapi would append a charset to text types.
        response.charset(undefined as unknown as string);
        const stat = await blobStore.stat(key);
        if (stat) {
            response.bytes(stat.size);
        }

        return response;
    };

    return [
        {
            method: 'GET',
            path: `${DEFAULT_LINK_PATH}/{key}`,
            options: {
                auth: false,
                // An empty attachment is still a file to save: hapi would answer 204.
                response: { emptyStatusCode: 200 },
                tags: [API_TAG, GROUP_DOWNLOADS],
                description: 'Serve a signed download link of the filesystem blob store',
                notes: 'The target of the 302 of the raw and attachment downloads when blobs are kept on the local file system. Needs no API key: the signature and expiry in the query are checked instead.',
                validate: {
                    params: Joi.object({ key: Joi.string().required().description('Blob key, percent-encoded.') }).label('BlobParams'),
                    query: Joi.object({
                        expires: Joi.string().required().description('Expiry, Unix seconds.'),
                        filename: Joi.string().required(),
                        type: Joi.string().required().description('Media type the blob is served with.'),
                        sig: Joi.string().required().description('HMAC-SHA256 of key, expiry, filename and type, hex.')
                    }).unknown(true).label('BlobQuery'),
                    // The signature check itself decides: a malformed query is a bad signature.
                    failAction: () => {
                        throw apiError(403, 'FORBIDDEN');
                    }
                },
                plugins: {
                    'hapi-swagger': {
                        produces: ['application/octet-stream', 'application/json'],
                        responses: {
                            200: {
                                description: 'The blob, with `Content-Disposition: attachment` and the stored media type (`message/rfc822` for raw messages)',
                                schema: Joi.binary().label('Blob')
                            },
                            ...errorResponses({ 403: ['FORBIDDEN'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: serve
        }
    ];
}
