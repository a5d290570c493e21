import { createHmac, randomBytes } from 'node:crypto';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import { openEmbeddedRecordStore } from '../../lib/service/embedded-stores';
import type { RecordStore } from '../../lib/record-store/record-store';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { TEST_SIGNING_SECRET } from '../helpers/test-stores';
import { rawRequest, type RawResponse } from '../helpers/raw-http';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Statuses a hostile request may get: refused, unauthorized, forbidden or not found; never a 200 or a 5xx. */
const REFUSALS = [400, 401, 403, 404];

/** A link signature far in the future, Unix seconds: the links below fail for their key, not their age. */
const EXPIRES = '9999999999';

/** One row of the table: a request and what must come back. */
interface Case {
    name: string;
    path: string;
    /** `wire`: a real HTTP request, path bytes as given; `inject`: past Node's HTTP parser, straight into hapi. */
    over?: 'wire' | 'inject';
    headers?: Record<string, string>;
    /** Send the test's API key (default true). */
    auth?: boolean;
    status: number;
    /** The plugin's `{ error }` code, when the plugin answers; undefined when hapi or Node refuse first. */
    code?: string;
}

/**
 * A download link for `key` with a genuine HMAC, as only a holder of the signing
 * secret could make: the traversal must be refused for its key, not its signature.
 */
function signedQuery(key: string): string {
    const filename = 'x.txt';
    const type = 'text/plain';
    const sig = createHmac('sha256', TEST_SIGNING_SECRET).update(`${key}\n${EXPIRES}\n${filename}\n${type}`, 'utf8').digest('hex');
    return new URLSearchParams({ expires: EXPIRES, filename, type, sig }).toString();
}

const BAD_SIG = new URLSearchParams({ expires: EXPIRES, filename: 'x.txt', type: 'text/plain', sig: '0'.repeat(64) }).toString();

// The temp dir holds `canary.txt` and `data/` (the SQLite file and `data/blobs`, the blob root).
const CASES: Case[] = [
    // Oversized and out-of-range queries.
    { name: 'a 100 KB query string is refused by the HTTP parser', path: `/v1/emails?inbox=a&subject=${'x'.repeat(100 * 1024)}`, status: 400 },
    { name: 'a 100 KB query string that got past the parser is VALIDATION_ERROR', over: 'inject', path: `/v1/emails?inbox=a&subject=${'x'.repeat(100 * 1024)}`, status: 400, code: 'VALIDATION_ERROR' },
    { name: 'a 10 KB subject filter is VALIDATION_ERROR', path: `/v1/emails?inbox=a&subject=${'x'.repeat(10 * 1024)}`, status: 400, code: 'VALIDATION_ERROR' },
    { name: '2,000 repeated parameters are VALIDATION_ERROR', path: `/v1/emails?inbox=a${'&x=1'.repeat(2000)}`, status: 400, code: 'VALIDATION_ERROR' },
    { name: 'limit=1e9 is INVALID_LIMIT', path: '/v1/emails?inbox=a&limit=1e9', status: 400, code: 'INVALID_LIMIT' },
    { name: 'limit=9007199254740993 is INVALID_LIMIT', path: '/v1/emails?inbox=a&limit=9007199254740993', status: 400, code: 'INVALID_LIMIT' },
    { name: 'limit=-1 is INVALID_LIMIT', path: '/v1/emails?inbox=a&limit=-1', status: 400, code: 'INVALID_LIMIT' },
    { name: 'limit=0x10 is INVALID_LIMIT', path: '/v1/emails?inbox=a&limit=0x10', status: 400, code: 'INVALID_LIMIT' },
    { name: 'timeout=1e9 is VALIDATION_ERROR', path: '/v1/emails?inbox=a&wait=true&timeout=1e9', status: 400, code: 'VALIDATION_ERROR' },
    { name: 'an inbox of 10,000 characters is INVALID_INBOX', path: `/v1/emails?inbox=${'a'.repeat(10_000)}`, status: 400, code: 'INVALID_INBOX' },
    { name: 'a 10 KB Authorization header is UNAUTHORIZED', path: '/v1/emails?inbox=a', auth: false, headers: { authorization: `Bearer ${'a'.repeat(10 * 1024)}` }, status: 401, code: 'UNAUTHORIZED' },
    { name: '20 KB of headers are refused by the HTTP parser', path: '/v1/emails?inbox=a', headers: { 'x-padding': 'p'.repeat(20 * 1024) }, status: 400 },

    // Path tricks on the email routes: the id is one segment, looked up, never a path.
    { name: '/v1/emails/..%2F..%2Fetc%2Fpasswd is NOT_FOUND', path: '/v1/emails/..%2F..%2Fetc%2Fpasswd', status: 404, code: 'NOT_FOUND' },
    { name: '/v1/emails/%2e%2e%2f%2e%2e%2fetc%2fpasswd is NOT_FOUND', path: '/v1/emails/%2e%2e%2f%2e%2e%2fetc%2fpasswd', status: 404, code: 'NOT_FOUND' },
    // hapi resolves the dot segments first: the path leaves /v1 and gets the host's 404.
    { name: '/v1/emails/%2e%2e/%2e%2e/etc/passwd is 404', path: '/v1/emails/%2e%2e/%2e%2e/etc/passwd', status: 404 },
    { name: '/v1/emails/../../etc/passwd is 404', path: '/v1/emails/../../etc/passwd', status: 404 },
    { name: '/v1/emails/%252e%252e%252fetc%252fpasswd (double-encoded) is NOT_FOUND', path: '/v1/emails/%252e%252e%252f%252e%252e%252fetc%252fpasswd', status: 404, code: 'NOT_FOUND' },
    { name: '/v1/emails/%c0%ae%c0%ae%c0%afetc%c0%afpasswd (overlong UTF-8) is NOT_FOUND', path: '/v1/emails/%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afetc%c0%afpasswd', status: 404, code: 'NOT_FOUND' },
    { name: 'a lone % in the id is NOT_FOUND', path: '/v1/emails/%', status: 404, code: 'NOT_FOUND' },
    { name: 'a traversal id on the raw route is NOT_FOUND', path: '/v1/emails/..%2F..%2Fetc%2Fpasswd/raw', status: 404, code: 'NOT_FOUND' },
    { name: 'a traversal file name on the attachment route is NOT_FOUND', path: '/v1/emails/x%40example.test/attachments/..%2F..%2F..%2Fetc%2Fpasswd', status: 404, code: 'NOT_FOUND' },

    // Path tricks on the file store's blob route (no API key: the signature is the credential).
    { name: '/v1/blobs/..%2F..%2Fcanary.txt with a bad signature is FORBIDDEN', auth: false, path: `/v1/blobs/..%2F..%2Fcanary.txt?${BAD_SIG}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/..%2F..%2Fcanary.txt with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/..%2F..%2Fcanary.txt?${signedQuery('../../canary.txt')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/..%2Finbox-capture.sqlite (the database) with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/..%2Finbox-capture.sqlite?${signedQuery('../inbox-capture.sqlite')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/%2e%2e%2f%2e%2e%2fcanary.txt with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/%2e%2e%2f%2e%2e%2fcanary.txt?${signedQuery('../../canary.txt')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/%252e%252e%252fcanary.txt (double-encoded) with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/%252e%252e%252f%252e%252e%252fcanary.txt?${signedQuery('%2e%2e%2f%2e%2e%2fcanary.txt')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/..%5C..%5Ccanary.txt (backslashes) with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/..%5C..%5Ccanary.txt?${signedQuery('..\\..\\canary.txt')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/%2Fetc%2Fpasswd (absolute) with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/%2Fetc%2Fpasswd?${signedQuery('/etc/passwd')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/.tmp%2Fx (the temp dir) with a genuine signature is FORBIDDEN', auth: false, path: `/v1/blobs/.tmp%2Fx?${signedQuery('.tmp/x')}`, status: 403, code: 'FORBIDDEN' },
    { name: '/v1/blobs/%c0%ae%c0%ae%c0%afcanary.txt (overlong UTF-8) is NOT_FOUND', auth: false, path: `/v1/blobs/%c0%ae%c0%ae%c0%afcanary.txt?${BAD_SIG}`, status: 404, code: 'NOT_FOUND' },
    { name: '/v1/blobs/../../canary.txt is 404', auth: false, path: `/v1/blobs/../../canary.txt?${BAD_SIG}`, status: 404 },

    // The docs page's files: a fixed list, never a path.
    { name: '/docs/..%2F..%2Fpackage.json is NOT_FOUND', auth: false, path: '/docs/..%2F..%2Fpackage.json', status: 404, code: 'NOT_FOUND' },
    { name: '/docs/%2e%2e%2f%2e%2e%2fcanary.txt is NOT_FOUND', auth: false, path: '/docs/%2e%2e%2f%2e%2e%2fcanary.txt', status: 404, code: 'NOT_FOUND' },
    { name: '/docs/swagger-ui.css%00.png is NOT_FOUND', auth: false, path: '/docs/swagger-ui.css%00.png', status: 404, code: 'NOT_FOUND' }
];

describe('http limits', () => {

    let dir: string;
    let canary: string;
    let recordStore: RecordStore;
    let provisioned: ProvisionedServer;
    let port: number;

    before(async () => {
        dir = await tempDir('http-limits');
        canary = `canary ${randomBytes(16).toString('hex')}`;
        await Fs.writeFile(Path.join(dir, 'canary.txt'), canary);
        recordStore = await openEmbeddedRecordStore({ dataDir: Path.join(dir, 'data') });
        const blobStore = createFsBlobStore({ root: Path.join(dir, 'data', 'blobs'), signingSecret: TEST_SIGNING_SECRET });
        provisioned = await provisionServer({ recordStore, blobStore, listen: true });
        port = provisioned.server.info.port as number;
    });

    after(async () => {
        await provisioned?.cleanup();
        await recordStore?.close();
        await Fs.rm(dir, { recursive: true, force: true });
    });

    const send = async (c: Case): Promise<RawResponse> => {
        const headers = { ...(c.auth === false ? {} : provisioned.auth), ...c.headers };
        if (c.over === 'inject') {
            const res = await provisioned.server.inject({ method: 'GET', url: c.path, headers });
            return { statusCode: res.statusCode, headers: res.headers as RawResponse['headers'], body: res.rawPayload };
        }

        return rawRequest(port, c.path, { headers });
    };

    describe('hostile requests', () => {

        for (const c of CASES) {
            it(c.name, async () => {
                const res = await send(c);
                expect(REFUSALS).to.include(res.statusCode);
                expect(res.statusCode).to.equal(c.status);
                const body = res.body.toString('latin1');
                expect(body).to.not.include(canary);
                expect(body).to.not.include('root:');
                expect(body).to.not.include('SQLite format');
                expect(body).to.not.include('"name": "inbox-capture"');
                if (c.code) {
                    // The plugin answered: its JSON error and its headers.
                    expect(JSON.parse(body)).to.equal({ error: c.code });
                    expect(res.headers['x-content-type-options']).to.equal('nosniff');
                }
            });
        }
    });

    describe('afterwards', () => {

        it('still serves a well-formed request', async () => {
            const res = await rawRequest(port, '/v1/emails?inbox=a&limit=100', { headers: provisioned.auth });
            expect(res.statusCode).to.equal(200);
            expect(JSON.parse(res.body.toString('utf8'))).to.equal({ emails: [], hasMore: false });
        });
    });
});
