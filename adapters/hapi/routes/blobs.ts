import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { BlobStore, DownloadLink, SelfServedBlobStore } from '../../../lib/blob-store/blob-store';
import { attachmentDisposition } from '../../../lib/blob-store/content-disposition';
import { errorResponses, SERVER_ERRORS } from '../api-schemas';
import { apiError } from '../error-mapping';
import { API_TAG, GROUP_DOWNLOADS, PUBLIC_SECURITY } from '../route-context';

/**
 * What a served download may do in a browser, should one ever render it despite
 * `Content-Disposition: attachment`: nothing (no scripts, no requests, no framing).
 */
export const DOWNLOAD_CSP = 'default-src \'none\'; sandbox; frame-ancestors \'none\'';

/** Where the plugin serves the signed links of a self-served blob store (under its prefix). */
export const BLOB_LINK_PATH = '/v1/blobs';

/** True for a blob store whose links the plugin must serve and check itself. */
export function servesOwnLinks(store: BlobStore): store is SelfServedBlobStore {
    return typeof (store as Partial<SelfServedBlobStore>).verifyDownload === 'function';
}

/** The Location of a download link: object storage's URL as it is, a signed target as a URL of our blob route under `prefix`. */
export function downloadLocation(link: DownloadLink, prefix: string): string {
    if ('url' in link) {
        return link.url;
    }

    return `${prefix}${BLOB_LINK_PATH}/${encodeURIComponent(link.key)}?${new URLSearchParams(link.query).toString()}`;
}

// A link not signed by this server, or past its expiry: which one is not said.
const BAD_LINK = 'link: the signature does not match or the link has expired; ask the API for a new one';

/**
 * The route serving a self-served store's signed links: no API key, the HMAC and
 * expiry in the query are the credential; a bad or expired one is 403 FORBIDDEN
 * (docs/design.md, "Deletes and downloads"). `isReferenced(key)` tells a blob deleted with
 * its email (404) from one missing while an email references it (500).
 */
export function blobRoutes(blobStore: SelfServedBlobStore, isReferenced: (key: string) => Promise<boolean>): ServerRoute[] {
    const serve = async (request: Request, h: ResponseToolkit) => {
        const key = request.params.key as string;
        // Fields other than the signed four are ignored; a repeated one arrives as an array and fails.
        const verified = blobStore.verifyDownload(key, request.query);
        if (!verified) {
            throw apiError(403, 'FORBIDDEN', BAD_LINK);
        }

        const stream = await blobStore.get(key);
        if (!stream) {
            // A blob an email still references is never missing (docs/design.md, "Deletes and
            // downloads"): one that is is a broken store, a 500 with its cause in the log.
            if (await isReferenced(key)) {
                throw new Error(`blob ${key} is missing from the blob store, yet a stored email references it`);
            }

            // Deleted with its email after the link was made: the link is genuine, the blob is gone.
            throw apiError(404, 'NOT_FOUND', 'link: the file was deleted with its email');
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
            path: `${BLOB_LINK_PATH}/{key}`,
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
                        throw apiError(403, 'FORBIDDEN', BAD_LINK);
                    }
                },
                plugins: {
                    'hapi-swagger': {
                        id: 'downloadBlob',
                        security: PUBLIC_SECURITY,
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
