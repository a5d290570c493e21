import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { isInboxCaptureError } from '../../../lib/errors';
import { checkHtmlCompatibility } from '../../../lib/html-check/html-checker';
import { DEFAULT_CLIENT_GLOBS, type HtmlCheckResult } from '../../../lib/html-check/html-check-types';
import { errorResponses, htmlCheckSchema, SERVER_ERRORS } from '../api-schemas';
import { AUTH_STRATEGY } from '../auth-scheme';
import { quoted } from '../../error-detail/detail-line';
import { validationWords } from '../../error-detail/validation-words';
import { apiError } from '../error-mapping';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_EMAILS, type RouteContext } from '../route-context';
import { messageIdParams, noSuchEmail, paramsFailAction } from './emails';

/** One caniemail client glob: a client id such as `outlook.windows`, `*` for any run of characters, `?` for one. */
const CLIENT_GLOB = /^[a-z0-9.*?-]{1,64}$/;

/** Query of the HTML check: the clients, as comma-separated globs. */
export const htmlCheckQuerySchema = Joi.object({
    clients: Joi.string().max(1000).pattern(/^[a-z0-9.*?-]{1,64}(,[a-z0-9.*?-]{1,64}){0,49}$/, 'comma-separated client globs (a-z, 0-9, ., -, * and ?)')
        .description(`Comma-separated caniemail client globs (\`outlook.*\`, \`*.ios\`, \`gmail.android\`); default \`${DEFAULT_CLIENT_GLOBS.join(',')}\`.`)
        .example('outlook.*,gmail.*')
}).label('HtmlCheckQuery');

// A params failure is still no such email; a query that is not client globs is VALIDATION_ERROR.
function checkFailAction(request: Request, _h: ResponseToolkit, err?: Error): never {
    const source = (err as { output?: { payload?: { validation?: { source?: string } } } } | undefined)?.output?.payload?.validation?.source;
    if (source === 'params') {
        paramsFailAction(request);
    }

    throw apiError(400, 'VALIDATION_ERROR', validationWords((err as Joi.ValidationError | undefined)?.details ?? [], 'query', htmlCheckQuerySchema));
}

/** The checks of one email (docs/api.md, "Checks"): its HTML against email clients. */
export function checkRoutes(context: RouteContext): ServerRoute[] {
    const { capture } = context;

    const html = async (request: Request): Promise<HtmlCheckResult> => {
        const messageId = request.params.messageId as string;
        const query = request.query as { clients?: string };
        const record = await capture.getEmail(messageId, keyScopeOf(request));
        if (!record) {
            throw noSuchEmail(messageId);
        }

        const globs = query.clients === undefined ? DEFAULT_CLIENT_GLOBS : query.clients.split(',').filter((glob) => CLIENT_GLOB.test(glob));
        try {
            return await checkHtmlCompatibility(record.htmlBody, globs);
        }
        catch (err) {
            if (isInboxCaptureError(err, 'INVALID_INPUT')) {
                throw apiError(400, 'VALIDATION_ERROR', `clients: ${quoted(query.clients)} matches no email client`);
            }

            throw err;
        }
    };

    return [
        {
            method: 'GET',
            path: '/v1/emails/{messageId}/checks/html',
            options: {
                auth: { strategy: AUTH_STRATEGY, mode: 'required' },
                tags: [API_TAG, GROUP_EMAILS],
                description: 'Check the HTML of one email against email clients',
                notes: 'The email\'s HTML (its `<style>` blocks and `style` attributes too) against the caniemail data set: every feature that some client lacks or half-supports, with those clients and how often the feature occurs, and a score (0–100, the share of (feature found, client) pairs supported, a partial one counting half). By default the Gmail, Outlook, Apple Mail, Yahoo and Samsung Email clients; `clients` narrows it. An email without HTML answers score 100, no findings and `html: false`. Errors take precedence in this order: 401, 404 for a malformed id, VALIDATION_ERROR, 404 for an unknown email or one of an inbox outside the key\'s prefix, then VALIDATION_ERROR for globs that match no client.',
                validate: { params: messageIdParams, query: htmlCheckQuerySchema, options: { abortEarly: false }, failAction: checkFailAction },
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'getHtmlCheck',
                        security: BEARER_SECURITY,
                        responses: {
                            200: { description: 'The HTML compatibility of the email', schema: htmlCheckSchema },
                            ...errorResponses({ 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'], ...SERVER_ERRORS })
                        }
                    }
                }
            },
            handler: html
        }
    ];
}
