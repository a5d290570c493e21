import {
    AbortMultipartUploadCommand,
    CompleteMultipartUploadCommand,
    CreateMultipartUploadCommand,
    DeleteObjectsCommand,
    GetObjectCommand,
    ListObjectsV2Command,
    PutObjectCommand,
    UploadPartCommand,
    type CompletedPart,
    type S3Client
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { retryWithBackoff } from '../util/backoff';
import { InboxCaptureError } from '../errors';
import { attachmentDisposition } from './content-disposition';
import { isValidBlobKey } from './blob-key';
import type { BlobStore, LinkOptions, UrlLink } from './blob-store';

/** DeleteObjects takes at most 1,000 keys per request (S3 API limit). */
export const DELETE_BATCH_KEYS = 1000;

/** S3's smallest part, bytes, for every part of a multipart upload but the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

/**
 * Default part size, bytes. A stream body is read one part at a time, so a put holds
 * at most two parts in memory whatever the message size; anything up to one part is
 * a single PutObject. 8 MiB × 10,000 parts (S3's limit) allows 80 GB bodies.
 */
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024;

/** Retries of a throttled delete after the first attempt (delays 100 ms, 200 ms, ... capped). */
const DEFAULT_MAX_RETRIES = 5;
const DEFAULT_BASE_DELAY_MS = 100;
/** Longest single wait between delete retries, ms: past this, waiting more rarely helps. */
const MAX_DELAY_MS = 5_000;

// Error codes S3 asks to be retried after a pause: throttling and transient server faults.
const RETRYABLE_CODES = new Set([
    'SlowDown', 'Throttling', 'ThrottlingException', 'RequestLimitExceeded', 'TooManyRequestsException',
    'ServiceUnavailable', 'InternalError', 'RequestTimeout'
]);
const RETRYABLE_STATUS = new Set([429, 500, 503]);

/** Options of the S3 blob store. */
export interface S3BlobStoreOptions {
    /** A configured client; the caller owns it (this store never destroys it). */
    client: S3Client;
    bucket: string;
    /** Prepended to every key, e.g. `inbox-capture/`; the prefix must hold only our blobs. */
    keyPrefix?: string;
    /** Multipart part size for stream bodies, bytes (default 8 MiB, at least 5 MiB). */
    partSizeBytes?: number;
    /** Backoff of DeleteObjects on throttling: retries after the first attempt and first delay, ms. */
    retry?: { maxRetries?: number; baseDelayMs?: number };
}

/** A blob store on an S3 bucket. */
export interface S3BlobStore extends BlobStore {
    /** A presigned GetObject URL that forces a download under `filename` as `contentType`. */
    createDownloadLink(key: string, options: LinkOptions): Promise<UrlLink>;
}

/** Creates a blob store on an S3 bucket; download links are presigned GetObject URLs. */
export function createS3BlobStore(options: S3BlobStoreOptions): S3BlobStore {
    const { client, bucket } = options ?? {};
    if (!client || typeof client.send !== 'function') {
        throw new TypeError('createS3BlobStore: options.client must be an S3Client');
    }

    if (typeof bucket !== 'string' || bucket.length === 0) {
        throw new TypeError('createS3BlobStore: options.bucket must be a bucket name');
    }

    const keyPrefix = options.keyPrefix ?? '';
    if (typeof keyPrefix !== 'string' || keyPrefix.startsWith('/')) {
        throw new TypeError('createS3BlobStore: options.keyPrefix must be a string not starting with "/"');
    }

    const partSize = options.partSizeBytes ?? DEFAULT_PART_BYTES;
    if (!Number.isInteger(partSize) || partSize < MIN_PART_BYTES) {
        throw new TypeError(`createS3BlobStore: options.partSizeBytes must be an integer of at least ${MIN_PART_BYTES}`);
    }

    const maxRetries = options.retry?.maxRetries ?? DEFAULT_MAX_RETRIES;
    const baseDelayMs = options.retry?.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;

    const objectKey = (key: string) => keyPrefix + key;

    const putStream = async (Key: string, body: Readable, ContentType: string): Promise<number> => {
        let size = 0;
        let pending: Buffer | null = null;
        let uploadId: string | undefined;
        const parts: CompletedPart[] = [];

        const uploadPart = async (part: Buffer) => {
            const PartNumber = parts.length + 1;
            const { ETag } = await client.send(new UploadPartCommand({
                Bucket: bucket, Key, UploadId: uploadId, PartNumber, Body: part, ContentLength: part.length
            }));
            parts.push({ PartNumber, ETag });
        };

        try {
            for await (const part of readParts(body, partSize)) {
                size += part.length;
                if (pending) {
                    // A second part exists: only now is a multipart upload worth its requests.
                    uploadId ??= (await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key, ContentType }))).UploadId;
                    await uploadPart(pending);
                }

                pending = part;
            }

            if (!uploadId) {
                const whole = pending ?? Buffer.alloc(0);
                await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: whole, ContentType, ContentLength: whole.length }));
                return size;
            }

            if (pending) {
                await uploadPart(pending);
            }

            // The object appears only here, complete: a failure before leaves no object.
            await client.send(new CompleteMultipartUploadCommand({
                Bucket: bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts }
            }));
            return size;
        }
        catch (err) {
            if (uploadId) {
                // Best effort: parts left behind cost storage until a bucket lifecycle rule
                // (AbortIncompleteMultipartUpload) removes them, but never become an object.
                await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key, UploadId: uploadId })).catch(() => undefined);
            }

            throw err;
        }
    };

    // One DeleteObjects batch, retried with backoff while S3 throttles the call or some
    // keys; each retry asks again only for the keys that failed. Jittered, so that many
    // writers throttled together do not retry together.
    const deleteBatch = async (keys: string[]): Promise<void> => {
        let pending = keys;
        const attempt = async () => {
            const { Errors = [] } = await client.send(new DeleteObjectsCommand({
                Bucket: bucket,
                Delete: { Objects: pending.map((Key) => ({ Key })), Quiet: true }
            }));
            const failed = Errors.filter((e) => e.Code !== 'NoSuchKey');
            const fatal = failed.find((e) => !RETRYABLE_CODES.has(e.Code ?? ''));
            if (fatal) {
                throw new InboxCaptureError('BLOB_STORE_FAILED', `S3 refused to delete ${fatal.Key}: ${fatal.Code} ${fatal.Message ?? ''}`.trim());
            }

            if (failed.length > 0) {
                pending = failed.map((e) => e.Key!);
                throw new KeysThrottledError(`S3 answered ${failed[0].Code} for ${failed.length} key(s)`);
            }
        };

        const retryable = (err: unknown) => err instanceof KeysThrottledError || isRetryable(err);
        try {
            await retryWithBackoff(attempt, { retries: maxRetries, firstMs: baseDelayMs, maxMs: MAX_DELAY_MS, jitter: true, retryable });
        }
        catch (err) {
            if (retryable(err)) {
                throw new InboxCaptureError('BLOB_STORE_FAILED', `S3 delete still throttled after ${maxRetries} retries`, { cause: err });
            }

            throw err;
        }
    };

    return {
        async put(key, body, contentType) {
            if (!isValidBlobKey(key)) {
                throw new InboxCaptureError('INVALID_INPUT', `invalid blob key ${JSON.stringify(String(key).slice(0, 64))}`);
            }

            if (Buffer.isBuffer(body)) {
                await client.send(new PutObjectCommand({
                    Bucket: bucket, Key: objectKey(key), Body: body, ContentType: contentType, ContentLength: body.length
                }));
                return { size: body.length };
            }

            return { size: await putStream(objectKey(key), body, contentType) };
        },

        async get(key) {
            if (!isValidBlobKey(key)) {
                return null;
            }

            try {
                const { Body } = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
                if (Body instanceof Readable) {
                    return Body;
                }

                // Only a non-Node HTTP handler gives a web stream.
                return Readable.fromWeb(Body as import('node:stream/web').ReadableStream);
            }
            catch (err) {
                if (isNotFound(err)) {
                    return null;
                }

                throw err;
            }
        },

        async delete(keys) {
            const unique = [...new Set(keys.filter(isValidBlobKey).map(objectKey))];
            for (let i = 0; i < unique.length; i += DELETE_BATCH_KEYS) {
                await deleteBatch(unique.slice(i, i + DELETE_BATCH_KEYS));
            }
        },

        async *listBlobs() {
            let ContinuationToken: string | undefined;
            do {
                const page = await client.send(new ListObjectsV2Command({
                    Bucket: bucket, Prefix: keyPrefix || undefined, ContinuationToken
                }));
                for (const object of page.Contents ?? []) {
                    const key = object.Key?.slice(keyPrefix.length);
                    if (isValidBlobKey(key)) {
                        yield { key, modifiedAt: object.LastModified?.getTime() ?? 0 };
                    }
                }

                ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
            } while (ContinuationToken);
        },

        async createDownloadLink(key, { expiresInSeconds, filename, contentType }) {
            if (!isValidBlobKey(key)) {
                throw new InboxCaptureError('INVALID_INPUT', 'invalid blob key');
            }

            const command = new GetObjectCommand({
                Bucket: bucket,
                Key: objectKey(key),
                ResponseContentDisposition: attachmentDisposition(filename),
                ResponseContentType: contentType
            });
            return { url: await getSignedUrl(client, command, { expiresIn: expiresInSeconds }) };
        }
        // No close(): the caller created the client and destroys it.
    };
}

/** Splits a stream into parts of exactly `partSize` bytes and a shorter, non-empty last one. */
async function* readParts(body: Readable, partSize: number): AsyncGenerator<Buffer> {
    let chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of body) {
        let buffer: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        while (length + buffer.length >= partSize) {
            const take = partSize - length;
            chunks.push(buffer.subarray(0, take));
            yield Buffer.concat(chunks, partSize);
            chunks = [];
            length = 0;
            buffer = buffer.subarray(take);
        }

        if (buffer.length > 0) {
            chunks.push(buffer);
            length += buffer.length;
        }
    }

    if (length > 0) {
        yield Buffer.concat(chunks, length);
    }
}

/** Some keys of a DeleteObjects were throttled: the batch is retried for them. */
class KeysThrottledError extends Error {}

interface S3ErrorShape {
    name?: string;
    Code?: string;
    $metadata?: { httpStatusCode?: number };
}

// A missing object is "absent"; a missing bucket is a broken store and must not look absent.
function isNotFound(err: unknown): boolean {
    const e = err as S3ErrorShape | null;
    if (e?.name === 'NoSuchBucket' || e?.Code === 'NoSuchBucket') {
        return false;
    }

    return e?.name === 'NoSuchKey' || e?.Code === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

function isRetryable(err: unknown): boolean {
    const e = err as S3ErrorShape | null;
    return RETRYABLE_CODES.has(e?.name ?? '') ||
        RETRYABLE_CODES.has(e?.Code ?? '') ||
        RETRYABLE_STATUS.has(e?.$metadata?.httpStatusCode ?? 0);
}
