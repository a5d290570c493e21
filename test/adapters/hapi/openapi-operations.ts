import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { API_TAG } from '../../../adapters/hapi/route-context';
import { generateTypes, typecheckAgainst } from '../../helpers/openapi-types';
import { provisionServer, type ProvisionedServer } from '../../helpers/provision-server';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

/**
 * The verbs an operationId may start with: what the operation does, as a generated
 * client's method reads (`client.listEmails()`). A new route whose verb is missing here
 * adds it, if it names an action.
 */
const VERBS = ['list', 'get', 'create', 'delete', 'download', 'update', 'set', 'replace', 'add', 'remove', 'release', 'send', 'search', 'open', 'close', 'call', 'clear', 'start', 'stop', 'cancel', 'reset', 'check'];
/** Operations named by a noun alone, where a verb would add nothing. */
const NOUNS = ['health'];

/** The operations of today's routes, by method and path: what generated clients call them. */
const NAMED = {
    'GET /v1/emails': 'listEmails',
    'DELETE /v1/emails': 'deleteInbox',
    'GET /v1/emails/{messageId}': 'getEmail',
    'DELETE /v1/emails/{messageId}': 'deleteEmail',
    'GET /v1/emails/{messageId}/headers': 'getHeaders',
    'GET /v1/emails/{messageId}/raw': 'downloadRaw',
    'GET /v1/emails/{messageId}/attachments/{filename}': 'downloadAttachment',
    'PUT /v1/emails/{messageId}/tags': 'setTags',
    'PUT /v1/emails/{messageId}/seen': 'setSeen',
    'GET /v1/inboxes': 'listInboxes',
    'GET /v1/keys/current': 'getCurrentKey',
    'POST /mcp': 'sendMcpMessage',
    'GET /v1/blobs/{key}': 'downloadBlob',
    'GET /health': 'health',
    'GET /version': 'getVersion',
    'GET /openapi.json': 'getOpenApiDocument',
    'GET /docs': 'getDocsPage'
};

interface Operation {
    operationId?: string;
    security?: unknown[];
}

/**
 * What is wrong with one operation's name; empty when nothing. `operationId` is the
 * route's own `plugins['hapi-swagger'].id`: without it hapi-swagger spells one from the
 * method and path (`getV1EmailsMessageid`).
 */
function operationIdProblems(method: string, path: string, operationId: string | undefined): string[] {
    if (operationId === undefined) {
        return [`${method} ${path}: no operationId of its own (give the route plugins['hapi-swagger'].id)`];
    }

    const problems: string[] = [];
    if (!/^[a-z]+(?:[A-Z][a-z]*)*$/.test(operationId)) {
        problems.push(`${method} ${path}: operationId "${operationId}" is not camelCase letters (no digits, no version)`);
    }

    const verb = /^[a-z]+/.exec(operationId)?.[0] ?? '';
    if (!VERBS.includes(verb) && !NOUNS.includes(operationId)) {
        problems.push(`${method} ${path}: operationId "${operationId}" does not start with a verb of ${VERBS.join(', ')}`);
    }

    return problems;
}

describe('adapters/hapi: the OpenAPI operations', () => {
    let p: ProvisionedServer;
    let paths: Record<string, Record<string, Operation>>;

    before(async () => {
        p = await provisionServer();
        const res = await p.server.inject('/openapi.json');
        expect(res.statusCode).to.equal(200);
        paths = JSON.parse(res.payload).paths;
    });

    after(() => p.cleanup());

    const operations = () => Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));

    it('names every operation of the served document with a verb of what it does, once, as its route says', () => {
        const ours = p.server.table().filter((route) => (route.settings.tags ?? []).includes(API_TAG));
        const declared = new Map(ours.map((route) => [`${route.method.toUpperCase()} ${route.path}`, (route.settings.plugins?.['hapi-swagger'] as { id?: string } | undefined)?.id]));
        const problems = operations().flatMap(({ method, path, op }) => {
            const id = declared.get(`${method} ${path}`);
            return [...operationIdProblems(method, path, id), ...(id !== undefined && op.operationId !== id ? [`${method} ${path}: served as "${op.operationId}", declared "${id}"`] : [])];
        });
        expect(problems).to.equal([]);
        const ids = operations().map(({ op }) => op.operationId);
        expect(ids.filter((id, i) => ids.indexOf(id) !== i), 'operationIds used twice').to.equal([]);
    });

    it('names today\'s routes as the client names its methods', () => {
        const named = Object.fromEntries(operations().map(({ method, path, op }) => [`${method} ${path}`, op.operationId]));
        for (const [route, id] of Object.entries(NAMED)) {
            expect(named[route], route).to.equal(id);
        }
    });

    it('rejects a missing, versioned or verbless name', () => {
        expect(operationIdProblems('GET', '/v1/things', undefined).join()).to.contain('no operationId of its own');
        expect(operationIdProblems('GET', '/v2/emails', 'listEmailsV2').join()).to.contain('not camelCase letters');
        expect(operationIdProblems('PUT', '/v1/emails/{messageId}/tags', 'tags').join()).to.contain('does not start with a verb');
        expect(operationIdProblems('PUT', '/v1/emails/{messageId}/tags', 'setTags')).to.equal([]);
    });

    it('declares `security: []` on exactly the routes that need no key, and the key on every other', () => {
        const documented = new Map(operations().map(({ method, path, op }) => [`${method} ${path}`, op]));
        const ours = p.server.table().filter((route) => (route.settings.tags ?? []).includes(API_TAG));
        expect(ours.length).to.equal(documented.size);
        for (const route of ours) {
            const key = `${route.method.toUpperCase()} ${route.path}`;
            const op = documented.get(key);
            expect(op, key).to.exist();
            // hapi keeps `auth: false` as given, though its type says only settings.
            expect(op!.security, key).to.equal((route.settings.auth as unknown) === false ? [] : [{ bearerAuth: [] }]);
        }
    });

    it('gives openapi-typescript an `operations` type keyed by those names', async () => {
        const program = `
import type { operations } from './api';
type Page = operations['listEmails']['responses'][200]['content']['application/json'];
export const page: Page = { emails: [], hasMore: false };
export const id: operations['getEmail']['parameters']['path']['messageId'] = 'x@y';
export const deleted: operations['deleteInbox']['responses'][200]['content']['application/json'] = { deleted: 0 };
export const inboxes: operations['listInboxes']['responses'][200]['content']['application/json']['inboxes'] = [];
`;
        expect(await typecheckAgainst(await generateTypes(JSON.parse((await p.server.inject('/openapi.json')).payload)), program)).to.equal([]);
    });
});
