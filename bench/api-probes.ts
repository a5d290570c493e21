/**
 * The API's probe shapes: readers of a mail with a huge header section (HTTP and MCP),
 * a `q` with nothing to search for on a DELETE, and `/mcp` asked by a foreign page
 * (docs/api.md, "Header fields", "Search: `q`", "MCP: tools for agents").
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as Http from 'node:http';
import { bigHeaderMessage } from './header-readers';
import { describeHealth, startHealthProbe } from './health-probe';
import { mib } from './process-rss';
import { countListed, startStandalone, type Standalone } from './standalone';
import { createKey, deliver, describeAnswer, probeMessage, request, tally, withParts, type Probe } from './hardening-probe';

/** Concurrent readers and the size of the header section they read. */
const READER_SIZES = { full: { readers: 30, bytes: 1024 * 1024 }, smoke: { readers: 5, bytes: 64 * 1024 } };

/** The Message-ID of the mail with the big header section. */
const BIG = 'big-headers@shop.test';

// 2. 30 concurrent readers of one mail with a 1 MiB header section, over HTTP and MCP.
const headerReaders: Probe = {
    item: 2,
    title: 'concurrent readers of a 1 MiB header section',
    run: ({ root, size }) => withParts(async ({ add }) => {
        const { readers, bytes } = READER_SIZES[size];
        const service: Standalone = add(await startStandalone({ root }));
        const readOnly = await createKey(root, service, 'probe-reader', ['--read-only']);
        await deliver(service.smtpPort, bigHeaderMessage(BIG, bytes), 'headers@example.test');

        let probe = await startHealthProbe(`${service.base}/health`);
        const answers = await Promise.all(Array.from({ length: readers }, () => request(service, service.apiKey, 'GET', `/v1/emails/${encodeURIComponent(BIG)}/headers`)));
        const statuses = answers.map((a) => a.status);
        const http = await probe.stop();

        const client = new Client({ name: 'hardening-probe', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${service.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${readOnly}` } } }));
        add({ close: () => client.close() });
        probe = await startHealthProbe(`${service.base}/health`);
        // What one answer weighs: every reader's answer is built and sent on the service's main thread.
        let resultBytes = 0;
        const results = await Promise.all(Array.from({ length: readers }, () => client.callTool({ name: 'get_email', arguments: { messageId: BIG } }, undefined, { timeout: 120_000 })
            .then((r) => {
                resultBytes = Math.max(resultBytes, JSON.stringify(r).length);
                return r.isError === true ? 'isError' : 'ok';
            }, (err: Error) => `threw ${err.message.slice(0, 40)}`)));
        const mcp = await probe.stop();
        return {
            sent: `a mail with a ${bytes / 1024} KiB header section of encoded words; ${readers} concurrent \`GET /v1/emails/{id}/headers\`, then ${readers} concurrent MCP \`get_email\` with a read-only key; /health every 50 ms`,
            answer: `HTTP ${tally(statuses)} (${mib(Math.max(...answers.map((a) => Buffer.byteLength(a.text))))} MiB each); MCP ${tally(results)} (${mib(resultBytes)} MiB of JSON each); /health HTTP ${describeHealth(http)}, MCP ${describeHealth(mcp)}`,
            figure: `slowest /health: ${http.slowestMs.toFixed(0)} ms (HTTP), ${mcp.slowestMs.toFixed(0)} ms (MCP)`
        };
    })
};

/** The `q` shapes that hold no term once cleaned: name and value as sent in the URL. */
const EMPTY_QUERIES: Array<[string, string]> = [['NUL', '%00'], ['BOM', '%EF%BB%BF'], ['NBSP', '%C2%A0'], ['TAB', '%09']];

/** Mails in each inbox the DELETE aims at. */
const MAILS_PER_INBOX = 3;

// 6. DELETE with a q that searches for nothing.
const emptyQueryDelete: Probe = {
    item: 6,
    title: 'DELETE /v1/emails with a q of nothing',
    run: ({ root }) => withParts(async ({ add }) => {
        const service: Standalone = add(await startStandalone({ root }));
        const answers: string[] = [];
        const figures: string[] = [];
        for (const [name, q] of EMPTY_QUERIES) {
            const inbox = `wipe-${name.toLowerCase()}`;
            for (let i = 0; i < MAILS_PER_INBOX; i++) {
                await deliver(service.smtpPort, probeMessage(`${inbox}-${i}@shop.test`, `${inbox}@example.test`, `keep me ${i}`), `${inbox}@example.test`);
            }

            const answer = await request(service, service.apiKey, 'DELETE', `/v1/emails?inbox=${inbox}&q=${q}`);
            const left = await countListed(service.base, service.apiKey, inbox);
            answers.push(`${name}: ${describeAnswer(answer, 40)}`);
            figures.push(`${name} ${answer.status}, ${left} of ${MAILS_PER_INBOX} left`);
        }

        return {
            sent: `${MAILS_PER_INBOX} mails in an inbox per shape; \`DELETE /v1/emails?inbox=X&q=\` ${EMPTY_QUERIES.map(([n, q]) => `${q} (${n})`).join(', ')}`,
            answer: answers.join('; '),
            figure: figures.join('; ')
        };
    })
};

/** A POST with exactly these headers (fetch would not send a foreign Host). */
function post(service: Standalone, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; detail: string; text: string }> {
    const url = new URL(`${service.base}${path}`);
    return new Promise((resolve, reject) => {
        const req = Http.request({ host: url.hostname, port: url.port, path, method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (d: string) => {
                text += d;
            }).on('end', () => resolve({ status: res.statusCode ?? 0, detail: String(res.headers['inbox-capture-error-detail'] ?? ''), text }));
        });
        req.on('error', reject);
        req.end(body);
    });
}

// 8. /mcp asked from a page of another origin, with a foreign Host (DNS rebinding's shape).
const foreignOrigin: Probe = {
    item: 8,
    title: 'POST /mcp from a foreign Origin',
    run: ({ root }) => withParts(async ({ add }) => {
        const service: Standalone = add(await startStandalone({ root }));
        const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'evil', version: '1' } } });
        const answer = await post(service, '/mcp', {
            host: 'evil.example',
            origin: 'http://evil.example',
            authorization: `Bearer ${service.apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream'
        }, initialize);
        return {
            sent: '`POST /mcp` (initialize, a valid key) with `Origin: http://evil.example` and `Host: evil.example`',
            answer: `${describeAnswer(answer, 60)}${answer.detail ? ` (detail: ${answer.detail})` : ''}`,
            figure: `status ${answer.status}`
        };
    })
};

/** The probes of this file, by item. */
export const API_PROBES: Probe[] = [headerReaders, emptyQueryDelete, foreignOrigin];
