import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { randomBytes } from 'node:crypto';
import { createS3BlobStore, DEFAULT_PART_BYTES, type S3BlobStore } from '../../../lib/blob-store/s3-blob-store';
import { attachmentDisposition } from '../../../lib/blob-store/content-disposition';
import { blobStoreContract } from '../../contracts/blob-store-contract';
import { readBlob } from '../../helpers/blob-contents';
import { chunked, failingAfter } from '../../helpers/streams';
import { startS3, type S3Fixture } from '../../helpers/s3';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

// The contract runs twice: on a bare bucket and under a key prefix.
for (const keyPrefix of [undefined, 'inbox-capture/']) {
    describe(`s3 store${keyPrefix ? ` under ${keyPrefix}` : ''}`, () => {
        let fixture: S3Fixture;

        before(async () => {
            fixture = await startS3();
        });

        after(async () => {
            await fixture.stop();
        });

        blobStoreContract({ describe, it, before, after }, {
            name: keyPrefix ? `s3, keyPrefix ${keyPrefix}` : 's3',
            async provision() {
                const bucket = await fixture.createBucket();
                return {
                    store: createS3BlobStore({ client: fixture.createClient(), bucket, keyPrefix }),
                    cleanup: async () => undefined
                };
            }
        });
    });
}

/** Sends every command to the real client, failing the first `failures` matching ones first. */
function faulty(client: S3Client, options: { failures: number; command: string; fault: () => unknown }): { client: S3Client; calls: string[] } {
    const calls: string[] = [];
    let remaining = options.failures;
    const send = client.send.bind(client);
    const wrapped = Object.create(client) as S3Client;
    wrapped.send = ((command: { constructor: { name: string } }, ...rest: unknown[]) => {
        const name = command.constructor.name;
        calls.push(name);
        if (name === options.command && remaining > 0) {
            remaining--;
            return Promise.reject(options.fault());
        }

        return (send as (...args: unknown[]) => Promise<unknown>)(command, ...rest);
    }) as S3Client['send'];
    return { client: wrapped, calls };
}

function slowDown(): Error {
    return Object.assign(new Error('Please reduce your request rate.'), {
        name: 'SlowDown',
        $fault: 'server',
        $metadata: { httpStatusCode: 503 }
    });
}

describe('S3BlobStore', () => {
    let fixture: S3Fixture;
    let client: S3Client;
    let bucket: string;
    let store: S3BlobStore;

    before(async () => {
        fixture = await startS3();
        client = fixture.createClient();
        bucket = fixture.bucket;
        store = createS3BlobStore({ client, bucket });
    });

    after(async () => {
        await fixture.stop();
    });

    describe('put()', () => {

        it('stores the content type on the object', async () => {
            await store.put('ct/att/0', Buffer.from('<p>x</p>'), 'text/html');
            await store.put('ct/att/1', chunked(Buffer.from('%PDF')), 'application/pdf');

            expect((await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'ct/att/0' }))).ContentType).to.equal('text/html');
            expect((await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'ct/att/1' }))).ContentType).to.equal('application/pdf');
        });

        it('uploads a stream larger than one part in parts and round-trips it', async () => {
            const recorded = faulty(client, { failures: 0, command: '', fault: slowDown });
            const multipart = createS3BlobStore({ client: recorded.client, bucket });
            const data = randomBytes(2 * DEFAULT_PART_BYTES + 12345);

            expect(await multipart.put('big/raw.eml', chunked(data), 'message/rfc822')).to.equal({ size: data.length });

            expect(recorded.calls).to.equal([
                'CreateMultipartUploadCommand', 'UploadPartCommand', 'UploadPartCommand', 'UploadPartCommand', 'CompleteMultipartUploadCommand'
            ]);
            expect((await readBlob(store, 'big/raw.eml'))!.equals(data)).to.be.true();
            expect((await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'big/raw.eml' }))).ContentType).to.equal('message/rfc822');
        });

        it('sends a stream of exactly one part as a single PutObject', async () => {
            const recorded = faulty(client, { failures: 0, command: '', fault: slowDown });
            const single = createS3BlobStore({ client: recorded.client, bucket });
            const data = randomBytes(DEFAULT_PART_BYTES);

            expect(await single.put('onepart/raw.eml', chunked(data), 'message/rfc822')).to.equal({ size: data.length });

            expect(recorded.calls).to.equal(['PutObjectCommand']);
            expect((await readBlob(store, 'onepart/raw.eml'))!.equals(data)).to.be.true();
        });

        it('leaves no object when the stream fails after a part was uploaded', async () => {
            const recorded = faulty(client, { failures: 0, command: '', fault: slowDown });
            const multipart = createS3BlobStore({ client: recorded.client, bucket });

            await expect(multipart.put('halfway/raw.eml', failingAfter(randomBytes(2 * DEFAULT_PART_BYTES + 1)), 'message/rfc822')).to.reject('connection lost');

            expect(recorded.calls).to.equal(['CreateMultipartUploadCommand', 'UploadPartCommand', 'AbortMultipartUploadCommand']);
            expect(await store.get('halfway/raw.eml')).to.be.null();
        });

        it('refuses a part size S3 would reject', () => {
            expect(() => createS3BlobStore({ client, bucket, partSizeBytes: 1024 })).to.throw(/partSizeBytes/);
        });
    });

    describe('get()', () => {

        it('treats a missing bucket as a failure, not as an absent blob', async () => {
            const missing = createS3BlobStore({ client, bucket: 'no-such-bucket-here' });

            await expect(missing.get('a/raw.eml')).to.reject();
        });
    });

    describe('delete()', () => {

        it('deletes 2,500 keys in batches of at most 1,000', async () => {
            const keys = Array.from({ length: 2500 }, (_, i) => `many/att/${i}`);
            // s3rver stores an object in ~20 ms: every 25th key exists, so each batch holds real objects.
            const existing = keys.filter((_, i) => i % 25 === 0);
            const manyBucket = await fixture.createBucket();
            const many = createS3BlobStore({ client, bucket: manyBucket });
            for (let i = 0; i < existing.length; i += 20) {
                await Promise.all(existing.slice(i, i + 20).map((key) => many.put(key, Buffer.from(key), 'text/plain')));
            }

            await many.put('kept/raw.eml', Buffer.from('kept'), 'message/rfc822');
            const batches: number[] = [];
            const wrapped = Object.create(client) as S3Client;
            wrapped.send = ((command: DeleteObjectsCommandLike) => {
                batches.push(command.input.Delete.Objects.length);
                return client.send(command as never);
            }) as unknown as S3Client['send'];

            await createS3BlobStore({ client: wrapped, bucket: manyBucket }).delete(keys);

            expect(batches).to.equal([1000, 1000, 500]);
            const left: string[] = [];
            for await (const { key } of many.listBlobs()) {
                left.push(key);
            }

            expect(left).to.equal(['kept/raw.eml']);
        });

        it('retries a DeleteObjects call that S3 throttles with SlowDown', async () => {
            await store.put('throttled/raw.eml', Buffer.from('x'), 'message/rfc822');
            const recorded = faulty(client, { failures: 2, command: 'DeleteObjectsCommand', fault: slowDown });

            await createS3BlobStore({ client: recorded.client, bucket, retry: { baseDelayMs: 5 } }).delete(['throttled/raw.eml']);

            expect(recorded.calls).to.equal(['DeleteObjectsCommand', 'DeleteObjectsCommand', 'DeleteObjectsCommand']);
            expect(await store.get('throttled/raw.eml')).to.be.null();
        });

        it('retries a DeleteObjects call that fails with HTTP 503', async () => {
            await store.put('unavailable/raw.eml', Buffer.from('x'), 'message/rfc822');
            const fault = () => Object.assign(new Error('Service Unavailable'), { name: 'Unknown', $metadata: { httpStatusCode: 503 } });
            const recorded = faulty(client, { failures: 1, command: 'DeleteObjectsCommand', fault });

            await createS3BlobStore({ client: recorded.client, bucket, retry: { baseDelayMs: 5 } }).delete(['unavailable/raw.eml']);

            expect(recorded.calls).to.equal(['DeleteObjectsCommand', 'DeleteObjectsCommand']);
            expect(await store.get('unavailable/raw.eml')).to.be.null();
        });

        it('retries only the keys S3 reports as throttled', async () => {
            await store.put('perkey/att/0', Buffer.from('0'), 'text/plain');
            await store.put('perkey/att/1', Buffer.from('1'), 'text/plain');
            const sent: string[][] = [];
            let first = true;
            const wrapped = Object.create(client) as S3Client;
            wrapped.send = (async (command: DeleteObjectsCommandLike) => {
                const keys = command.input.Delete.Objects.map((o) => o.Key);
                sent.push(keys);
                if (first) {
                    // S3 deleted the first key and throttled the second, inside a 200 answer.
                    first = false;
                    await client.send(command as never);
                    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'perkey/att/1', Body: Buffer.from('1') }));
                    return { Errors: [{ Key: 'perkey/att/1', Code: 'SlowDown', Message: 'Please reduce your request rate.' }], $metadata: {} };
                }

                return client.send(command as never);
            }) as unknown as S3Client['send'];

            await createS3BlobStore({ client: wrapped, bucket, retry: { baseDelayMs: 5 } }).delete(['perkey/att/0', 'perkey/att/1']);

            expect(sent).to.equal([['perkey/att/0', 'perkey/att/1'], ['perkey/att/1']]);
            expect(await store.get('perkey/att/0')).to.be.null();
            expect(await store.get('perkey/att/1')).to.be.null();
        });

        it('gives up after the configured number of retries', async () => {
            const recorded = faulty(client, { failures: 100, command: 'DeleteObjectsCommand', fault: slowDown });

            const err = await expect(createS3BlobStore({ client: recorded.client, bucket, retry: { maxRetries: 3, baseDelayMs: 1 } }).delete(['x/raw.eml'])).to.reject();

            expect(err).to.include({ code: 'BLOB_STORE_FAILED' });
            expect((err as Error & { cause: Error }).cause.name).to.equal('SlowDown');
            expect(recorded.calls.length).to.equal(4);
        });

        it('does not retry an error that is not throttling', async () => {
            const denied = () => Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
            const recorded = faulty(client, { failures: 1, command: 'DeleteObjectsCommand', fault: denied });

            await expect(createS3BlobStore({ client: recorded.client, bucket, retry: { baseDelayMs: 1 } }).delete(['x/raw.eml'])).to.reject('Access Denied');
            expect(recorded.calls.length).to.equal(1);
        });
    });

    describe('listBlobs()', () => {

        it('lists only the prefix, without it, across pages', async () => {
            const listBucket = await fixture.createBucket();
            const keys = Array.from({ length: 250 }, (_, i) => `p${i}/raw.eml`);
            const plain = createS3BlobStore({ client, bucket: listBucket, keyPrefix: 'ic/' });
            for (let i = 0; i < keys.length; i += 25) {
                await Promise.all(keys.slice(i, i + 25).map((key) => plain.put(key, Buffer.from('x'), 'message/rfc822')));
            }

            await client.send(new PutObjectCommand({ Bucket: listBucket, Key: 'other-app/p1/raw.eml', Body: Buffer.from('x') }));
            await client.send(new PutObjectCommand({ Bucket: listBucket, Key: 'ic/Not-Ours', Body: Buffer.from('x') }));

            // Pages of 100 instead of S3's 1,000, so three pages need 250 objects, not 2,001.
            const pages: (string | undefined)[] = [];
            const wrapped = Object.create(client) as S3Client;
            wrapped.send = ((command: { input: { MaxKeys?: number; ContinuationToken?: string } }) => {
                command.input.MaxKeys = 100;
                pages.push(command.input.ContinuationToken);
                return client.send(command as never);
            }) as unknown as S3Client['send'];

            const found: string[] = [];
            for await (const { key } of createS3BlobStore({ client: wrapped, bucket: listBucket, keyPrefix: 'ic/' }).listBlobs()) {
                found.push(key);
            }

            expect(found.sort()).to.equal([...keys].sort());
            expect(pages.length).to.equal(3);
            expect(pages[0]).to.be.undefined();
            expect(pages[1]).to.be.a.string();
        });
    });

    describe('createDownloadLink()', () => {
        const filename = '2-r\u00e9sum\u00e9 "final".pdf';

        it('presigns a GetObject that expires in 900 s and forces a download', async () => {
            await store.put('link/att/2', Buffer.from('%PDF-1.7'), 'application/pdf');

            const url = new URL((await store.createDownloadLink('link/att/2', { expiresInSeconds: 900, filename, contentType: 'application/pdf' })).url);

            expect(url.origin).to.equal(fixture.endpoint);
            expect(url.pathname).to.equal(`/${bucket}/link/att/2`);
            expect(url.searchParams.get('X-Amz-Expires')).to.equal('900');
            expect(url.searchParams.get('X-Amz-Signature')).to.match(/^[0-9a-f]{64}$/);
            const disposition = url.searchParams.get('response-content-disposition')!;
            expect(disposition).to.equal(attachmentDisposition(filename));
            expect(disposition).to.startWith('attachment;');
            expect(disposition).to.contain("filename*=UTF-8''2-r%C3%A9sum%C3%A9%20%22final%22.pdf");
            expect(url.searchParams.get('response-content-type')).to.equal('application/pdf');
        });

        it('gives a URL that downloads the bytes with the forced headers', async () => {
            const data = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
            await store.put('fetch/att/0', data, 'application/octet-stream');

            const { url: link } = await store.createDownloadLink('fetch/att/0', { expiresInSeconds: 900, filename, contentType: 'text/html' });
            const response = await fetch(link);

            expect(response.status).to.equal(200);
            expect(Buffer.from(await response.arrayBuffer()).equals(data)).to.be.true();
            expect(response.headers.get('content-disposition')).to.equal(attachmentDisposition(filename));
            expect(response.headers.get('content-type')).to.equal('text/html');
        });

        it('puts the key prefix into the presigned path', async () => {
            const prefixed = createS3BlobStore({ client, bucket, keyPrefix: 'ic/' });
            await prefixed.put('pre/raw.eml', Buffer.from('raw'), 'message/rfc822');

            const { url: link } = await prefixed.createDownloadLink('pre/raw.eml', { expiresInSeconds: 60, filename: 'message.eml', contentType: 'message/rfc822' });

            expect(new URL(link).pathname).to.equal(`/${bucket}/ic/pre/raw.eml`);
            expect(Buffer.from(await (await fetch(link)).arrayBuffer()).toString()).to.equal('raw');
        });
    });
});

interface DeleteObjectsCommandLike {
    input: { Delete: { Objects: { Key: string }[] } };
}
