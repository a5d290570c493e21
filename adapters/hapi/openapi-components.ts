// The OpenAPI document's component schemas as code generators want them: one named
// schema per API shape (`Email`, `EmailPage`, `Error`...), nothing named after a
// property. hapi-swagger turns every array and enum it meets into a component of its
// own (`emails`, `attachments`, `error1`): those are put back inline here.

/** The shared schema of every error body; each response narrows `error` to its route's codes. */
export const ERROR_COMPONENT = 'Error';

const REF_PREFIX = '#/components/schemas/';
/** What api-schemas.ts labels the per-route error bodies: `Error<status>_<codes>`. */
const ROUTE_ERROR = /^Error\d{3}_/;

type Json = unknown;
type Schema = Record<string, Json>;

// A copy of `value` with every `$ref` to a component replaced by what `replace` answers (undefined: kept).
function mapRefs(value: Json, replace: (name: string) => Json | undefined): Json {
    if (Array.isArray(value)) {
        return value.map((item) => mapRefs(item, replace));
    }

    if (value === null || typeof value !== 'object') {
        return value;
    }

    const ref = (value as Schema).$ref;
    if (typeof ref === 'string' && ref.startsWith(REF_PREFIX)) {
        const replaced = replace(ref.slice(REF_PREFIX.length));
        if (replaced !== undefined) {
            return mapRefs(replaced, replace);
        }
    }

    const out: Schema = {};
    for (const [key, item] of Object.entries(value as Schema)) {
        out[key] = mapRefs(item, replace);
    }

    return out;
}

// The codes a per-route error schema allows.
function codesOf(schema: Schema): string[] {
    const error = (schema.properties as Schema | undefined)?.error as Schema | undefined;
    return Array.isArray(error?.enum) ? error.enum as string[] : [];
}

/**
 * Rewrites `document.components.schemas` and every reference to them (in place):
 * property-named components inlined; per-route error bodies become
 * `allOf: [Error, { error: enum of the route's codes }]` over one `Error` schema
 * whose `error` lists every code the document uses.
 */
export function nameComponents(document: { components?: { schemas?: Record<string, Json> }; paths?: Json }): void {
    const schemas = document.components?.schemas;
    if (!schemas) {
        return;
    }

    // Property-named ones first: route errors refer to theirs (`error`, `error1`...).
    const inline = (name: string) => /^[a-z]/.test(name) ? schemas[name] : undefined;
    const resolved: Record<string, Schema> = {};
    for (const [name, schema] of Object.entries(schemas)) {
        if (!/^[a-z]/.test(name)) {
            resolved[name] = mapRefs(schema, inline) as Schema;
        }
    }

    const allCodes = new Set<string>();
    const routeErrors = new Map<string, Json>();
    for (const [name, schema] of Object.entries(resolved)) {
        if (ROUTE_ERROR.test(name)) {
            const codes = codesOf(schema);
            codes.forEach((code) => allCodes.add(code));
            routeErrors.set(name, {
                allOf: [
                    { $ref: `${REF_PREFIX}${ERROR_COMPONENT}` },
                    { type: 'object', properties: { error: { type: 'string', enum: codes } } }
                ]
            });
            delete resolved[name];
        }
    }

    if (routeErrors.size > 0) {
        resolved[ERROR_COMPONENT] = {
            type: 'object',
            description: 'Every error body. Each response narrows `error` to the codes its route answers.',
            properties: { error: { type: 'string', enum: [...allCodes].sort() } },
            required: ['error']
        };
    }

    const replace = (name: string) => inline(name) ?? routeErrors.get(name);
    document.components!.schemas = mapRefs(resolved, replace) as Record<string, Json>;
    document.paths = mapRefs(document.paths, replace);
}
