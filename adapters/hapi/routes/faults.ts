import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { checkFaultRuleInput, MAX_FAULT_DELAY_MS, MAX_FAULT_RULES, MAX_FAULT_RULES_PER_PREFIX, type FaultRuleInput } from '../../../lib/faults/fault-rule';
import { deletedFaultSchema, deletedFaultsSchema, errorResponses, faultListSchema, faultMatchSchema, faultReplySchema, faultRuleSchema, SERVER_ERRORS } from '../api-schemas';
import type { DeletedFaultsView, DeletedFaultView, FaultListView } from '../api-types';
import { AUTH_STRATEGY } from '../auth-scheme';
import { quoted } from '../../error-detail/detail-line';
import { validationWords } from '../../error-detail/validation-words';
import { apiError } from '../error-mapping';
import { isInboxCaptureError } from '../../../lib/errors';
import { faultInScope } from '../../../lib/identity/key-scope';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_FAULTS, type RouteContext } from '../route-context';

/**
 * The body of POST /v1/faults. The shape is joi's; which fields go with which stage
 * (connect takes no match, mail matches on the sender only, at least one effect) is the
 * core's own check, run here so that a malformed rule is 400 before anything else.
 */
export const faultRuleInputSchema = Joi.object({
    stage: Joi.string().valid('connect', 'mail', 'rcpt', 'data').required(),
    // None for `connect`; only `sender` for `mail` (checkFaultRuleInput).
    match: faultMatchSchema,
    reply: faultReplySchema,
    delayMs: Joi.number().integer().min(0).max(MAX_FAULT_DELAY_MS).description('Wait before the reply, the disconnect or the normal reply.'),
    disconnect: Joi.boolean().valid(true).description('Close the connection (after the reply, when there is one).'),
    times: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).description('Only the next `times` matching commands, across every instance; then the rule is gone.'),
    probability: Joi.number().min(0).max(1).description('The chance a matching command gets the fault (default 1).')
}).custom((value: FaultRuleInput) => {
    checkFaultRuleInput(value);
    return value;
}).label('FaultRuleInput');

// No bound on the id: a path no rule has is a 404 from the store, after a read-only key's 403.
const faultIdParams = Joi.object({
    id: Joi.string().required().description('The rule\'s `id`.')
}).label('FaultIdParams');

const noSuchRule = (id: unknown) => apiError(404, 'NOT_FOUND', `id: no fault rule ${quoted(id)}`);

// A rule joi or the core's check refuses: VALIDATION_ERROR, with what is wrong.
function faultFailAction(_request: Request, _h: ResponseToolkit, err?: Error): never {
    throw apiError(400, 'VALIDATION_ERROR', validationWords((err as Joi.ValidationError | undefined)?.details ?? [], 'payload', faultRuleInputSchema));
}

/** POST, GET and DELETE /v1/faults and DELETE /v1/faults/{id} (docs/api.md, "Faults"). */
export function faultRoutes(context: RouteContext): ServerRoute[] {
    const { faults } = context.capture;

    const create = async (request: Request, h: ResponseToolkit): Promise<ResponseObject> => {
        const input = request.payload as FaultRuleInput;
        // A key with a prefix makes rules for an inbox inside it only: any other rule acts on every inbox's mail.
        const scope = keyScopeOf(request);
        if (!faultInScope(scope, input.match)) {
            throw apiError(403, 'FORBIDDEN', `key scope: a key limited to the prefix ${quoted(scope.inboxPrefix)} makes only rules whose match.inbox starts with it`);
        }

        try {
            return h.response(await faults.create(input, scope)).code(201);
        }
        catch (err) {
            if (isInboxCaptureError(err, 'LIMIT_REACHED')) {
                throw apiError(409, 'FAULT_LIMIT_REACHED', `faults: the rules kept are at their limit (${MAX_FAULT_RULES} in all, ${MAX_FAULT_RULES_PER_PREFIX} for the inboxes of one key prefix); delete some first`);
            }

            throw err;
        }
    };

    const list = async (request: Request): Promise<FaultListView> => ({ faults: await faults.list(keyScopeOf(request)) });

    const remove = async (request: Request): Promise<DeletedFaultView> => {
        if (!(await faults.delete(request.params.id as string, keyScopeOf(request)))) {
            throw noSuchRule(request.params.id);
        }

        return { deleted: true };
    };

    const removeAll = async (request: Request): Promise<DeletedFaultsView> => ({ deleted: await faults.deleteAll(keyScopeOf(request)) });

    const auth = { strategy: AUTH_STRATEGY, mode: 'required' as const };
    const tags = [API_TAG, GROUP_FAULTS];
    const errors = (more: Record<number, readonly ('FORBIDDEN' | 'NOT_FOUND' | 'VALIDATION_ERROR' | 'FAULT_LIMIT_REACHED')[]> = {}) =>
        errorResponses({ ...more, 401: ['UNAUTHORIZED'], ...SERVER_ERRORS });

    return [
        {
            method: 'POST',
            path: '/v1/faults',
            options: {
                auth,
                tags,
                description: 'Create a fault rule: the SMTP listener misbehaves on purpose',
                notes: 'At least one of `reply`, `delayMs`, `disconnect`. With `times` exactly that many matching commands get the fault, across every instance sharing the store, then the rule is gone; without it the rule stays until deleted. A read-only key is 403; a key with an inbox prefix must name a `match.inbox` inside it (else 403). At most 1000 rules are kept, and at most 100 for the inboxes of one key prefix: past either, 409 FAULT_LIMIT_REACHED. Errors take precedence in this order: 401, VALIDATION_ERROR, 403, 409.',
                validate: { payload: faultRuleInputSchema, failAction: faultFailAction },
                plugins: {
                    ...routeAccess({ access: 'change' }),
                    'hapi-swagger': {
                        id: 'createFault',
                        security: BEARER_SECURITY,
                        responses: {
                            201: { description: 'The rule, with its id and remaining uses', schema: faultRuleSchema },
                            ...errors({ 400: ['VALIDATION_ERROR'], 403: ['FORBIDDEN'], 409: ['FAULT_LIMIT_REACHED'] })
                        }
                    }
                }
            },
            handler: create
        },
        {
            method: 'GET',
            path: '/v1/faults',
            options: {
                auth,
                tags,
                description: 'List the fault rules, oldest first',
                notes: 'A key with an inbox prefix sees only the rules whose `match.inbox` lies inside it.',
                plugins: { ...routeAccess({ access: 'read' }), 'hapi-swagger': { id: 'listFaults', security: BEARER_SECURITY, responses: { 200: { description: 'The rules', schema: faultListSchema }, ...errors() } } }
            },
            handler: list
        },
        {
            method: 'DELETE',
            path: '/v1/faults/{id}',
            options: {
                auth,
                tags,
                description: 'Delete one fault rule',
                notes: 'A read-only key is 403; a rule a key with an inbox prefix does not see is 404, as one that does not exist.',
                validate: { params: faultIdParams, failAction: (request) => { throw noSuchRule(request.params.id); } },
                plugins: { ...routeAccess({ access: 'change' }), 'hapi-swagger': { id: 'deleteFault', security: BEARER_SECURITY, responses: { 200: { description: 'Deleted', schema: deletedFaultSchema }, ...errors({ 403: ['FORBIDDEN'], 404: ['NOT_FOUND'] }) } } }
            },
            handler: remove
        },
        {
            method: 'DELETE',
            path: '/v1/faults',
            options: {
                auth,
                tags,
                description: 'Delete every fault rule',
                notes: 'A read-only key is 403; a key with an inbox prefix deletes only the rules it sees (`match.inbox` inside its prefix).',
                plugins: { ...routeAccess({ access: 'change' }), 'hapi-swagger': { id: 'deleteFaults', security: BEARER_SECURITY, responses: { 200: { description: 'How many rules were deleted', schema: deletedFaultsSchema }, ...errors({ 403: ['FORBIDDEN'] }) } } }
            },
            handler: removeAll
        }
    ];
}
