import * as Fs from 'node:fs/promises';
import * as Os from 'node:os';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { EmailView } from '../../adapters/hapi/api-types';
import { isValidBlobKey } from '../../lib/blob-store/blob-key';
import { isShardName, keyOfFile } from '../../lib/blob-store/fs-blob-layout';
import { createFsBlobStore } from '../../lib/blob-store/fs-blob-store';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { openEmbeddedRecordStore } from '../../lib/service/embedded-stores';
import type { RecordStore } from '../../lib/record-store/record-store';
import { ESCAPE_CANARIES, adversarialMessages, attachmentPayload } from '../fixtures/adversarial/generate';
import { buildMail } from '../helpers/mail';
import { followDownload, type Download } from '../helpers/downloads';
import { provisionServer, type ProvisionedServer } from '../helpers/provision-server';
import { postgresS3Stores, TEST_SIGNING_SECRET } from '../helpers/test-stores';
import { rawRequest } from '../helpers/raw-http';
import { isWellFormed, strictUtf8, stringsOf } from '../helpers/text';
import { tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/** Bound of one case, ms: each case travels through every route. */
const CASE_TIMEOUT_MS = 30_000;

/**
 * `attachment; filename="<fallback>"; filename*=UTF-8''<name>` and nothing else: the
 * fallback printable ASCII without `"` or `\`, the name only RFC 5987 attr-chars and
 * percent escapes (RFC 6266 section 4.1). No CR, LF or NUL can hide in either.
 */
const CONTENT_DISPOSITION = /^attachment; filename="([\x20-\x21\x23-\x5b\x5d-\x7e]*)"; filename\*=UTF-8''((?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-F]{2})+)$/;

/** Parts of attacker-chosen names that must never show up in a stored key or path. */
const ATTACKER_NAME_FRAGMENTS = ['canary', 'CON', 'report', 'passwd', 'Injected', 'fdp', 'evil', '..'];

/** Attachment cases: the generator's name and the API file names the parts must get, in order. */
const ATTACHMENT_CASES: Array<{ name: string; filenames?: string[] }> = [
    { name: 'attachment-name-dot-dot' },
    { name: 'attachment-name-absolute' },
    { name: 'attachment-name-backslash' },
    { name: 'attachment-name-nul' },
    { name: 'attachment-name-crlf' },
    { name: 'attachment-name-rtl-override' },
    { name: 'attachment-name-con', filenames: ['0-CON'] },
    { name: 'attachment-names-duplicate', filenames: ['0-report.pdf', '1-report.pdf'] },
    { name: 'attachment-name-index-lookalike', filenames: ['0-report.pdf', '1-0-report.pdf'] }
];

/**
 * Message-ID cases that must be readable, downloadable and deletable over HTTP, and
 * what their id keeps: a 10,000-character one is stored under its digest id
 * (docs/api.md, "Addressable message ids").
 */
const MESSAGE_ID_CASES: Array<{ name: string; idKeeps: RegExp }> = [
    { name: 'message-id-control-characters', idKeeps: /^ctl[\u0001-\u001f\u007f]/ },
    { name: 'message-id-10000-characters', idKeeps: /^[0-9a-f]{64}@inbox-capture$/ }
];

/** The attacker-chosen fragments a stored key or path contains (none, for a safe one). */
function attackerFragmentsIn(text: string): string[] {
    return ATTACKER_NAME_FRAGMENTS.filter((fragment) => text.includes(fragment));
}

/** A backend for this file: stores, and what is on disk or in the bucket afterwards. */
interface Backend {
    name: string;
    open(): Promise<{ recordStore: RecordStore; blobStore: BlobStore; dir?: string; close(): Promise<void> }>;
}

// SQLite and files in a temp dir of our own, so the whole dir can be searched afterwards.
const sqliteFs: Backend = {
    name: 'sqlite+fs',
    async open() {
        const dir = await tempDir('adversarial-http');
        const recordStore = await openEmbeddedRecordStore({ dataDir: Path.join(dir, 'data') });
        const blobStore = createFsBlobStore({ root: Path.join(dir, 'data', 'blobs'), signingSecret: TEST_SIGNING_SECRET });
        return {
            recordStore,
            blobStore,
            dir,
            async close() {
                await recordStore.close();
                await Fs.rm(dir, { recursive: true, force: true });
            }
        };
    }
};

const postgresS3: Backend = {
    name: 'postgres+s3',
    async open() {
        const stores = await postgresS3Stores().create();
        return { recordStore: stores.recordStore, blobStore: stores.blobStore, close: () => stores.cleanup() };
    }
};

async function blobKeys(store: BlobStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const blob of store.listBlobs()) {
        keys.push(blob.key);
    }

    return keys;
}

/** Every file and directory below `dir`, relative to it. */
async function walk(dir: string, prefix = ''): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
        const relative = Path.join(prefix, entry.name);
        out.push(relative);
        if (entry.isDirectory()) {
            out.push(...await walk(Path.join(dir, entry.name), relative));
        }
    }

    return out;
}

/** A JSON body as a client reads it: valid UTF-8, parseable, every string well-formed. */
function json(body: Buffer): unknown {
    const value: unknown = JSON.parse(strictUtf8(body));
    for (const [path, text] of stringsOf(value)) {
        expect(isWellFormed(text), `${path} is well-formed`).to.be.true();
    }

    return value;
}

/** The file name a well-formed Content-Disposition carries, or a failed expectation. */
function dispositionName(header: string | undefined): string {
    const match = CONTENT_DISPOSITION.exec(header ?? '');
    expect(match, `Content-Disposition ${JSON.stringify(header)} is well-formed`).to.not.be.null();
    return decodeURIComponent(match![2]);
}

describe('adversarial input over HTTP', () => {

    const messages = new Map(adversarialMessages().map((m) => [m.name, m]));

    for (const backend of [sqliteFs, postgresS3]) {
        describe(backend.name, () => {

            let stores: Awaited<ReturnType<Backend['open']>>;
            let provisioned: ProvisionedServer;
            let port: number;

            before(async () => {
                stores = await backend.open();
                provisioned = await provisionServer({ recordStore: stores.recordStore, blobStore: stores.blobStore, listen: true });
                port = provisioned.server.info.port as number;
            });

            after(async () => {
                await provisioned?.cleanup();
                await stores?.close();
            });

            const get = (path: string, method = 'GET') => rawRequest(port, path, { method, headers: provisioned.auth });

            /** Ingests one generated case for its own inbox and returns the stored email as the API lists it. */
            const ingest = async (name: string): Promise<EmailView> => {
                const message = messages.get(name);
                expect(message, `generated case ${name}`).to.exist();
                const inbox = `adv-${name}`.slice(0, 64);
                await provisioned.api.ingestForApi(message!.raw, { recipients: [`${inbox}@example.test`] });
                const res = await get(`/v1/emails?inbox=${inbox}`);
                expect(res.statusCode).to.equal(200);
                const page = json(res.body) as { emails: EmailView[] };
                expect(page.emails).to.have.length(1);
                return page.emails[0];
            };

            /** Follows a 302 of ours to the bytes, with no API key. */
            const download = async (url: string): Promise<Download> => {
                const redirect = await get(url);
                expect(redirect.statusCode, `${url} redirects`).to.equal(302);
                expect(redirect.headers['cache-control']).to.equal('no-store');
                return followDownload(provisioned.server, String(redirect.headers.location));
            };

            describe('attachment names', () => {

                for (const { name, filenames } of ATTACHMENT_CASES) {
                    it(`${name}: each part is served by its own URL with its own bytes and a well-formed Content-Disposition`, { timeout: CASE_TIMEOUT_MS }, async () => {
                        const email = await ingest(name);
                        if (filenames) {
                            expect(email.attachments.map((a) => a.filename)).to.equal(filenames);
                        }

                        expect(email.attachments.length).to.be.at.least(1);
                        expect(new Set(email.attachments.map((a) => a.url)).size, 'every part has a URL of its own').to.equal(email.attachments.length);
                        for (const [index, attachment] of email.attachments.entries()) {
                            const file = await download(attachment.url);
                            expect(file.statusCode).to.equal(200);
                            expect(file.body.toString('utf8'), `${attachment.filename} carries part ${index}`).to.equal(attachmentPayload(name, index));
                            expect(dispositionName(file.headers['content-disposition'])).to.equal(attachment.filename);
                            // A CR/LF in the name must not have become a header of its own.
                            expect(Object.keys(file.headers).filter((h) => h.startsWith('x-injected'))).to.equal([]);
                        }
                    });
                }

                it('an empty attachment downloads as 200 with no bytes (a browser saves nothing from a 204)', { timeout: CASE_TIMEOUT_MS }, async () => {
                    await provisioned.api.ingestForApi(buildMail({
                        subject: 'empty part',
                        attachments: [{ filename: 'empty.txt', contentType: 'text/plain', content: '' }]
                    }), { recipients: ['adv-empty-part@example.test'] });
                    const page = json((await get('/v1/emails?inbox=adv-empty-part')).body) as { emails: EmailView[] };
                    const [attachment] = page.emails[0].attachments;
                    expect(attachment).to.include({ filename: '0-empty.txt', size: 0 });
                    const file = await download(attachment.url);
                    expect(file.statusCode).to.equal(200);
                    expect(file.body.length).to.equal(0);
                    expect(dispositionName(file.headers['content-disposition'])).to.equal('0-empty.txt');
                });

                // Declared last in this block, so it runs after every case above.
                describe('afterwards', () => {

                    it('wrote nothing outside the blob root and no attacker-chosen name anywhere', async () => {
                        const keys = await blobKeys(stores.blobStore);
                        expect(keys.length).to.be.at.least(ATTACHMENT_CASES.length);
                        for (const key of keys) {
                            expect(isValidBlobKey(key), `blob key ${key}`).to.be.true();
                            expect(attackerFragmentsIn(key), `blob key ${key}`).to.equal([]);
                        }

                        if (stores.dir) {
                            // Only the data dir, and inside it only the database files and valid blob paths.
                            expect(await Fs.readdir(stores.dir)).to.equal(['data']);
                            const blobRoot = Path.join(stores.dir, 'data', 'blobs');
                            for (const path of await walk(blobRoot)) {
                                expect(attackerFragmentsIn(path), `path ${path}`).to.equal([]);
                                // The temp dir, a shard, or a file in a shard that names a valid key (fs-blob-layout.ts).
                                const [top, name, ...deeper] = path.split(Path.sep);
                                const ours = top === '.tmp' ? name === undefined : isShardName(top) && deeper.length === 0 && (name === undefined || keyOfFile(top, name) !== null);
                                expect(ours, `path ${path} under the blob root`).to.be.true();
                            }
                        }

                        for (const path of [ESCAPE_CANARIES.traversal, ESCAPE_CANARIES.absolute]) {
                            await expect(Fs.access(path)).to.reject();
                        }

                        for (const dir of [Os.tmpdir(), process.cwd(), '/']) {
                            for (const entry of await Fs.readdir(dir)) {
                                expect(entry, `${dir}/${entry}`).to.not.include('canary');
                            }
                        }
                    });
                });
            });

            describe('message ids', () => {

                for (const { name, idKeeps } of MESSAGE_ID_CASES) {
                    it(`${name}: the email can be fetched, downloaded and deleted by its id`, { timeout: CASE_TIMEOUT_MS }, async () => {
                        const email = await ingest(name);
                        // What the stored id keeps of the hostile Message-ID (or its digest): the case tests what it names.
                        expect(email.messageId).to.match(idKeeps);
                        const path = `/v1/emails/${encodeURIComponent(email.messageId)}`;
                        expect(email.rawUrl).to.equal(`${path}/raw`);

                        const one = await get(path);
                        expect(one.statusCode).to.equal(200);
                        expect((json(one.body) as EmailView).messageId).to.equal(email.messageId);

                        const raw = await download(email.rawUrl);
                        expect(raw.statusCode).to.equal(200);
                        expect(raw.body.equals(messages.get(name)!.raw), 'the raw .eml is the message as ingested').to.be.true();
                        expect(dispositionName(raw.headers['content-disposition'])).to.equal('message.eml');

                        const keysBefore = await blobKeys(stores.blobStore);
                        const deleted = await get(path, 'DELETE');
                        expect(deleted.statusCode).to.equal(200);
                        expect(json(deleted.body)).to.equal({ deleted: true, messageId: email.messageId });

                        expect((await get(path)).statusCode).to.equal(404);
                        expect((await get(email.rawUrl)).statusCode).to.equal(404);
                        expect((await get(path, 'DELETE')).statusCode).to.equal(404);
                        // Its raw blob went with it.
                        expect((await blobKeys(stores.blobStore)).length).to.equal(keysBefore.length - 1);
                    });
                }
            });
        });
    }
});
