import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Ajv from 'ajv';
import Joi from 'joi';
import { toJsonSchema } from '../../../adapters/mcp/json-schema';
import { INPUTS, OUTPUTS } from '../../../adapters/mcp/tool-schemas';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('toJsonSchema()', () => {

    it('translates objects, required keys, strings, integers, booleans, arrays, enums, null and defaults', () => {
        const schema = Joi.object({
            name: Joi.string().max(10).pattern(/^[a-z]+$/).required().description('a name'),
            note: Joi.string().allow(''),
            count: Joi.number().integer().min(1).max(5).default(2),
            ratio: Joi.number().min(0),
            flag: Joi.boolean().valid(true),
            kind: Joi.string().valid('a', 'b'),
            maybe: Joi.string().allow(null).required(),
            list: Joi.array().items(Joi.object({ x: Joi.string() }).unknown()).max(3),
            either: Joi.alternatives(Joi.number().integer(), Joi.string().max(4))
        });
        expect(toJsonSchema(schema)).to.equal({
            type: 'object',
            properties: {
                name: { type: 'string', maxLength: 10, pattern: '^[a-z]+$', minLength: 1, description: 'a name' },
                note: { type: 'string' },
                count: { type: 'integer', minimum: 1, maximum: 5, default: 2 },
                ratio: { type: 'number', minimum: 0 },
                flag: { type: 'boolean', enum: [true] },
                kind: { type: 'string', minLength: 1, enum: ['a', 'b'] },
                maybe: { type: ['string', 'null'], minLength: 1 },
                list: { type: 'array', items: { type: 'object', properties: { x: { type: 'string', minLength: 1 } } }, maxItems: 3 },
                either: { anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 4, minLength: 1 }] }
            },
            required: ['name', 'maybe'],
            additionalProperties: false
        });
    });

    it('lets an allowed empty string pass a pattern, as joi does', () => {
        const schema = Joi.object({ prefix: Joi.string().allow('').pattern(/^[a-z]+$/) });
        const ajv = new Ajv({ strict: false });
        const validate = ajv.compile(toJsonSchema(schema));
        for (const value of ['', 'abc', 'A', 'a b']) {
            expect(validate({ prefix: value }), value).to.equal(!schema.validate({ prefix: value }).error);
        }
    });

    it('refuses what it cannot translate faithfully', () => {
        expect(() => toJsonSchema(Joi.object({ d: Joi.date() }))).to.throw(/joi type "date" is not translated/);
        expect(() => toJsonSchema(Joi.object({ s: Joi.string().email() }))).to.throw(/rule "email" of string/);
        expect(() => toJsonSchema(Joi.object({ s: Joi.string().pattern(/a/i) }))).to.throw(/without flags/);
        expect(() => toJsonSchema(Joi.object({ a: Joi.array() }))).to.throw(/exactly one items/);
    });

    describe('the tools\' schemas', () => {

        const ajv = new Ajv({ strict: false });

        // What clients are told accepts and refuses the same arguments as what the tools enforce.
        const SAMPLES: Record<string, unknown[]> = {
            list_inboxes: [{}, { prefix: '' }, { prefix: 'team-' }, { prefix: 'Team' }, { limit: 100 }, { limit: 101 }, { limit: 1.5 }, { other: 1 }],
            search_emails: [{ inbox: 'a' }, {}, { inbox: '' }, { inbox: 'a'.repeat(65) }, { inbox: 'a', query: 'from:x "y z"' }, { inbox: 'a', query: 'q'.repeat(1025) }, { inbox: 'a', limit: 0 }],
            wait_for_email: [{ inbox: 'a' }, { inbox: 'a', timeoutSeconds: 300 }, { inbox: 'a', timeoutSeconds: 301 }, { inbox: 'a', receivedAfter: 5 }, { inbox: 'a', receivedAfter: '2026-01-01' }, { inbox: 'a', receivedAfter: -1 }, { inbox: 'a', receivedAfter: true }],
            get_email: [{ messageId: 'a@b' }, {}, { messageId: '' }, { messageId: 'x'.repeat(257) }],
            get_attachment: [{ messageId: 'a@b', filename: '0-a.txt' }, { messageId: 'a@b' }],
            delete_email: [{ messageId: 'a@b' }, { messageId: 1 }],
            delete_inbox: [{ inbox: 'a' }, { inbox: 'A' }],
            new_inbox: [{}, { prefix: '' }, { prefix: 'p-' }, { prefix: 'x'.repeat(54) }, { prefix: 'x'.repeat(55) }],
            send_email: [
                { from: 'a@x', to: 'b@x', subject: 's' }, { from: 'a@x', to: ['b@x', 'C <c@x>'], cc: 'd@x', subject: '', text: 't', html: '<p>h</p>' },
                { to: 'b@x', subject: 's' }, { from: 'a@x', to: [], subject: 's' }, { from: 'a@x', to: 'b@x' }, { from: 'a@x', to: 'b@x', subject: 's', other: 1 },
                { from: 'a@x', to: 'b@x', subject: 's', headers: { 'X-Tags': 'a, b' } }, { from: 'a@x', to: 'b@x', subject: 's', headers: { 'Bad Name': 'v' } },
                { from: 'a@x', to: 'b@x', subject: 's', headers: { 'X-A': 1 } },
                { from: 'a@x', to: 'b@x', subject: 's', attachments: [{ filename: 'a.txt', contentType: 'text/plain', contentBase64: 'aGk=' }] },
                { from: 'a@x', to: 'b@x', subject: 's', attachments: [{ filename: 'a.txt', contentBase64: 'not base64!' }] },
                { from: 'a@x', to: 'b@x', subject: 's', attachments: [{ contentBase64: '' }] }
            ],
            check_email: [{ messageId: 'a@b' }, { messageId: 'a@b', checks: ['html'] }, { messageId: 'a@b', checks: [] }, { messageId: 'a@b', checks: ['spam'] }, { messageId: 'a@b', checks: ['html', 'html'] }, {}]
        };

        for (const [name, samples] of Object.entries(SAMPLES)) {
            it(`${name}: the JSON Schema and joi agree`, () => {
                const schema = INPUTS[name as keyof typeof INPUTS];
                const validate = ajv.compile(toJsonSchema(schema));
                for (const sample of samples) {
                    expect(validate(sample), JSON.stringify(sample)).to.equal(!schema.validate(sample, { convert: false }).error);
                }
            });
        }

        it('every output schema translates', () => {
            for (const schema of Object.values(OUTPUTS)) {
                expect(toJsonSchema(schema).type).to.equal('object');
            }
        });
    });
});
