import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { nameComponents } from '../../../adapters/hapi/openapi-components';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe('adapters/hapi/openapi-components', () => {

    describe('nameComponents()', () => {
        it('inlines property-named components, and merges route errors into one Error narrowed per response', () => {
            const document = {
                paths: {
                    '/a': { get: { responses: { 200: { content: { 'application/json': { schema: ref('Page') } } }, 404: { content: { 'application/json': { schema: ref('Error404_notFound') } } } } } },
                    '/b': { get: { responses: { 400: { content: { 'application/json': { schema: ref('Error400_invalidLimit') } } } } } }
                },
                components: {
                    schemas: {
                        items: { type: 'array', items: ref('Item') },
                        Item: { type: 'object', properties: { kind: ref('kind') } },
                        kind: { type: 'string', enum: ['x'] },
                        Page: { type: 'object', properties: { items: ref('items') } },
                        error: { type: 'string', enum: ['NOT_FOUND'] },
                        Error404_notFound: { type: 'object', properties: { error: ref('error') } },
                        error1: { type: 'string', enum: ['INVALID_LIMIT'] },
                        Error400_invalidLimit: { type: 'object', properties: { error: ref('error1') } }
                    }
                }
            };
            nameComponents(document);
            expect(Object.keys(document.components.schemas)).to.equal(['Item', 'Page', 'Error']);
            expect(document.components.schemas).to.equal({
                Item: { type: 'object', properties: { kind: { type: 'string', enum: ['x'] } } },
                Page: { type: 'object', properties: { items: { type: 'array', items: ref('Item') } } },
                Error: {
                    type: 'object',
                    description: 'Every error body. Each response narrows `error` to the codes its route answers.',
                    properties: { error: { type: 'string', enum: ['INVALID_LIMIT', 'NOT_FOUND'] } },
                    required: ['error']
                }
            } as never);
            const narrowed = (codes: string[]) => ({ allOf: [ref('Error'), { type: 'object', properties: { error: { type: 'string', enum: codes } } }] });
            expect(document.paths['/a'].get.responses[404].content['application/json'].schema).to.equal(narrowed(['NOT_FOUND']) as never);
            expect(document.paths['/b'].get.responses[400].content['application/json'].schema).to.equal(narrowed(['INVALID_LIMIT']) as never);
            expect(document.paths['/a'].get.responses[200].content['application/json'].schema).to.equal(ref('Page'));
        });

        it('leaves a document without components alone', () => {
            const document = { paths: { '/x': {} } };
            nameComponents(document);
            expect(document).to.equal({ paths: { '/x': {} } });
        });
    });
});
