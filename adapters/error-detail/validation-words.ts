import type Joi from 'joi';
import { isInboxCaptureError } from '../../lib/errors';
import { isSearchSyntaxError } from '../../lib/search/search-syntax-error';
import { quoted } from './detail-line';

// joi's findings in our words (docs/api.md, "Errors"): the parameter or field, then the
// rule it broke. The words come from the schema that refused the value, so a bound
// changed in a schema changes its detail with it.

/** Where the refused value came from: its words say "parameter" or "field". */
export type ValidationSource = 'query' | 'payload' | 'params' | 'arguments';

/** Character classes of the API's names, as a person reads them. */
const CHARACTER_CLASSES: Record<string, string> = {
    '^[a-z0-9._-]+$': 'a-z 0-9 . _ -',
    '^[a-zA-Z0-9._-]+$': 'a-z 0-9 . _ -'
};

/** A parameter or field as written in a request: `tags[0]`, `match.inbox`. */
export function pathName(path: ReadonlyArray<string | number>): string {
    return path.reduce<string>((name, part) => typeof part === 'number' ? `${name}[${part}]` : name ? `${name}.${part}` : part, '');
}

// The described rules of the schema at `path`, when it can be found (numbers need their whole range).
function rulesAt(schema: Joi.Schema | undefined, path: ReadonlyArray<string | number>): Array<{ name: string; args?: { limit?: unknown } }> {
    if (!schema || path.length === 0 || path.some((p) => typeof p === 'number')) {
        return [];
    }

    try {
        const described = (schema as Joi.ObjectSchema).extract(path as string[]).describe() as { rules?: Array<{ name: string; args?: { limit?: unknown } }> };
        return described.rules ?? [];
    }
    catch {
        return [];
    }
}

function numberRule(item: Joi.ValidationErrorItem, schema: Joi.Schema | undefined): string {
    const rules = rulesAt(schema, item.path);
    const integer = rules.some((r) => r.name === 'integer') || item.type === 'number.integer';
    const min = rules.find((r) => r.name === 'min')?.args?.limit ?? (item.type === 'number.min' ? item.context?.limit : undefined);
    const max = rules.find((r) => r.name === 'max')?.args?.limit ?? (item.type === 'number.max' ? item.context?.limit : undefined);
    const what = integer ? 'an integer' : 'a number';
    if (min !== undefined && max !== undefined) {
        return `must be ${what} from ${String(min)} to ${String(max)}`;
    }

    if (min !== undefined) {
        return `must be ${what} of at least ${String(min)}`;
    }

    return max !== undefined ? `must be ${what} of at most ${String(max)}` : `must be ${what}`;
}

function patternRule(item: Joi.ValidationErrorItem): string {
    const value = String(item.context?.value ?? '');
    const regex = item.context?.regex as RegExp | undefined;
    const allowed = regex ? CHARACTER_CLASSES[regex.source] : undefined;
    if (!allowed || !regex) {
        return `${quoted(value)} is not of the form ${regex ? regex.source : 'asked for'}`;
    }

    // The one mistake worth naming: a name that is right once lowercased.
    if (value !== value.toLowerCase() && regex.test(value.toLowerCase())) {
        // Only the inbox pattern refuses uppercase (tags are lowercased for the caller).
        return `${quoted(value)} has uppercase letters; inbox names are lowercase (did you mean ${quoted(value.toLowerCase())}?)`;
    }

    return `${quoted(value)} may hold only ${allowed}`;
}

// A value a custom check refused, by what it was meant to be.
function invalidRule(item: Joi.ValidationErrorItem): string {
    const value = item.context?.value;
    switch (item.path[item.path.length - 1]) {
        case 'cursor':
            return `${quoted(value)} is not a cursor of this list (pass nextCursor as it came, with # as %23)`;
        case 'receivedAfter':
        case 'receivedBefore':
        case 'before':
        case 'after':
            return `${quoted(value)} is not a date (Unix ms or ISO 8601)`;
        case 'tags':
            return 'more than 20 distinct tags';
        default:
            return `${quoted(value)} is not valid here`;
    }
}

function customRule(item: Joi.ValidationErrorItem): string {
    const error = item.context?.error as unknown;
    if (isSearchSyntaxError(error)) {
        return error.reason;
    }

    // The core's own checks (a fault rule's) name the field in words meant for the caller.
    if (isInboxCaptureError(error, 'INVALID_INPUT')) {
        return error.message;
    }

    return `${quoted(item.context?.value)} is not valid here`;
}

/** The rule `item` broke, in our words, without the name of the parameter or field. */
function ruleOf(item: Joi.ValidationErrorItem, source: ValidationSource, schema: Joi.Schema | undefined): string {
    const limit = String(item.context?.limit ?? '');
    switch (item.type) {
        case 'any.required':
            return 'is required';
        case 'object.unknown':
            return source === 'query' ? 'is not a parameter of this endpoint' : 'is not a field here';
        case 'string.empty':
            return 'must not be empty';
        case 'string.base':
            return 'must be a string';
        case 'string.max':
            return `is longer than ${limit} characters`;
        case 'string.min':
            return `is shorter than ${limit} characters`;
        case 'string.pattern.base':
            return patternRule(item);
        case 'string.email':
            return `${quoted(item.context?.value)} is not an email address`;
        case 'boolean.base':
            return 'must be true or false';
        case 'array.base':
            return 'must be an array';
        case 'array.min':
            return `needs at least ${limit} items`;
        case 'array.max':
            return `holds more than ${limit} items`;
        case 'object.base':
            return 'must be an object';
        case 'any.only':
            return `must be ${((item.context?.valids ?? []) as unknown[]).map((v) => JSON.stringify(v)).join(', or ')}`;
        case 'any.invalid':
            return invalidRule(item);
        case 'any.custom':
            return customRule(item);
        default:
            if (item.type.startsWith('number.')) {
                return numberRule(item, schema);
            }

            // joi's own sentence, its leading label dropped: still names the rule.
            return item.message.replace(/^"[^"]*" /, '');
    }
}

/**
 * What joi refused, in our words: `timeout: must be an integer from 1 to 28`, `tags[0]:
 * "has space" may hold only a-z 0-9 . _ -`, `q: unclosed quote at character 9`. Several
 * findings are joined with `; `. `schema` is the one that refused (for the whole range of
 * a number); a finding about the value as a whole is named by `source`. `names` renames
 * a parameter for a caller who knows it by another name (MCP's `query` is the API's `q`).
 */
export function validationWords(details: readonly Joi.ValidationErrorItem[], source: ValidationSource, schema?: Joi.Schema, names: Readonly<Record<string, string>> = {}): string {
    const whole = source === 'query' ? 'query' : source === 'arguments' ? 'arguments' : 'body';
    const said = details.map((item) => {
        const rule = ruleOf(item, source, schema);
        // A core check's message names its own field ("fault rule: ...").
        if (item.type === 'any.custom' && isInboxCaptureError(item.context?.error, 'INVALID_INPUT') && !isSearchSyntaxError(item.context?.error)) {
            return rule;
        }

        const name = pathName(item.path) || whole;
        return `${names[name] ?? name}: ${rule}`;
    });
    return [...new Set(said)].join('; ');
}
