import type Joi from 'joi';

// The tools declare their input and output once, as joi schemas (validation at the edge,
// as everywhere else); MCP clients are told the same shapes as JSON Schema, derived here.
// Only the parts of joi the tools use are translated: anything else throws, so a schema
// can never be advertised as something looser than what is enforced.

/** A JSON Schema (draft 2020-12 subset) as MCP's `inputSchema` and `outputSchema` carry it. */
export type JsonSchema = { [keyword: string]: unknown };

interface Rule {
    name: string;
    args?: { limit?: number; regex?: string };
}

/** What joi's describe() answers, as far as this translation reads it. */
interface Description {
    type: string;
    flags?: { presence?: string; description?: string; default?: unknown; only?: boolean; unknown?: boolean };
    rules?: Rule[];
    allow?: unknown[];
    keys?: Record<string, Description>;
    patterns?: Array<{ regex?: string; rule: Description }>;
    items?: Description[];
    matches?: Array<{ schema: Description }>;
}

const RULE_KEYWORDS: Record<string, Record<string, string>> = {
    string: { min: 'minLength', max: 'maxLength' },
    number: { min: 'minimum', max: 'maximum' },
    array: { min: 'minItems', max: 'maxItems' }
};

/** The JSON Schema of a joi schema built from objects, strings, numbers, booleans, arrays and alternatives. */
export function toJsonSchema(schema: Joi.Schema): JsonSchema {
    return translate(schema.describe() as Description, 'schema');
}

function translate(d: Description, at: string): JsonSchema {
    const out: JsonSchema = {};
    const allowed = d.allow ?? [];
    switch (d.type) {
        case 'object':
            Object.assign(out, objectSchema(d, at));
            break;
        case 'string':
        case 'number':
        case 'boolean':
            out.type = d.type === 'number' && d.rules?.some((r) => r.name === 'integer') ? 'integer' : d.type;
            Object.assign(out, ruleKeywords(d, at));
            // joi refuses '' unless allowed, and unless a `min` says more.
            if (d.type === 'string' && !allowed.includes('') && out.minLength === undefined) {
                out.minLength = 1;
            }

            break;
        case 'array':
            out.type = 'array';
            if (d.items?.length !== 1) {
                throw new Error(`toJsonSchema: ${at}: an array needs exactly one items() schema`);
            }

            out.items = translate(d.items[0]!, `${at}[]`);
            Object.assign(out, ruleKeywords(d, at));
            break;
        case 'alternatives':
            out.anyOf = (d.matches ?? []).map((m, i) => translate(m.schema, `${at}|${i}`));
            break;
        default:
            throw new Error(`toJsonSchema: ${at}: joi type "${d.type}" is not translated`);
    }

    if (d.flags?.only) {
        out.enum = allowed;
    }
    else if (allowed.includes(null)) {
        out.type = [out.type, 'null'];
    }

    if (d.flags?.description !== undefined) {
        out.description = d.flags.description;
    }

    if (d.flags?.default !== undefined && typeof d.flags.default !== 'function') {
        out.default = d.flags.default;
    }

    return out;
}

function objectSchema(d: Description, at: string): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [name, key] of Object.entries(d.keys ?? {})) {
        properties[name] = translate(key, `${at}.${name}`);
        if (key.flags?.presence === 'required') {
            required.push(name);
        }
    }

    const out: JsonSchema = { type: 'object', properties };
    if (required.length > 0) {
        out.required = required;
    }

    // Keys matching a pattern (a map of names to values): each value as its rule says.
    const [pattern, ...more] = d.patterns ?? [];
    if (pattern && more.length === 0) {
        const literal = /^\/(.*)\/([a-z]*)$/s.exec(pattern.regex ?? '');
        if (!literal || literal[2] !== '') {
            throw new Error(`toJsonSchema: ${at}: only a key pattern without flags is translated`);
        }

        out.propertyNames = { pattern: literal[1] };
        out.additionalProperties = translate(pattern.rule, `${at}.*`);
    }
    else if (pattern) {
        throw new Error(`toJsonSchema: ${at}: only one key pattern is translated`);
    }
    else if (!d.flags?.unknown) {
        out.additionalProperties = false;
    }

    return out;
}

function ruleKeywords(d: Description, at: string): JsonSchema {
    const out: JsonSchema = {};
    for (const rule of d.rules ?? []) {
        if (rule.name === 'integer') {
            continue;
        }

        if (rule.name === 'pattern' && rule.args?.regex) {
            // joi describes a RegExp as its literal, `/source/flags`; flags have no JSON Schema form.
            const literal = /^\/(.*)\/([a-z]*)$/s.exec(rule.args.regex);
            if (!literal || literal[2] !== '') {
                throw new Error(`toJsonSchema: ${at}: only a pattern without flags is translated`);
            }

            // joi lets an allowed '' pass whatever the pattern says; so must the JSON Schema.
            out.pattern = (d.allow ?? []).includes('') ? `(?:${literal[1]})|^$` : literal[1];
            continue;
        }

        const keyword = RULE_KEYWORDS[d.type]?.[rule.name];
        if (!keyword || rule.args?.limit === undefined) {
            throw new Error(`toJsonSchema: ${at}: joi rule "${rule.name}" of ${d.type} is not translated`);
        }

        out[keyword] = rule.args.limit;
    }

    return out;
}
