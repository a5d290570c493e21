/**
 * What a consumer's script does with the client, as `client.cjs` (require) and
 * `client.mjs` (import) of `specifier`: its named exports, a real call against
 * BASE_URL with API_KEY, a typed error, printed as one line of JSON. `extra` runs
 * before the printing, with `out` to add to and `load(name)` to load another module
 * the same way (`require`, or `import()`).
 */
export function clientScripts(specifier: string, extra = ''): { cjs: string; esm: string } {
    const check = `
    const out = { names: Object.keys(client).sort() };
    const api = new client.InboxCaptureClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
    out.page = await api.listEmails({ inbox: api.newInbox({ domain: 'x.test' }).inbox });
    try {
        await api.getEmail('missing@x.test');
    }
    catch (err) {
        out.error = { typed: err instanceof client.InboxCaptureApiError, status: err.status, code: err.code };
    }
${extra}
    console.log(JSON.stringify(out));
`;
    return {
        cjs: `'use strict';\nconst client = require('${specifier}');\nconst load = async (name) => require(name);\n(async () => {${check}})().catch((err) => { console.error(err); process.exit(1); });\n`,
        esm: `import * as client from '${specifier}';\nconst load = (name) => import(name);\n${check}`
    };
}

/** What those scripts print against an empty server. */
export const CLIENT_SCRIPT_OUTPUT = {
    names: ['DEFAULT_MAIL_DOMAIN', 'InboxCaptureApiError', 'InboxCaptureClient', 'UNEXPECTED_RESPONSE', 'WaitTimeoutError'],
    page: { emails: [], hasMore: false },
    error: { typed: true, status: 404, code: 'NOT_FOUND' }
};
