import type { TimeBound } from './types';

/** A query value as the client's methods take it. */
export type QueryValue = string | number | boolean | Date | undefined;

/** The time bound as the API reads it: Unix milliseconds, or the string as given. */
export function timeParam(value: TimeBound): string {
    return value instanceof Date ? String(value.getTime()) : String(value);
}

/** `?a=1&b=x` from the defined values (Dates as Unix milliseconds), `''` when none. */
export function queryString(values: Record<string, QueryValue>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(values)) {
        if (value !== undefined) {
            params.append(name, value instanceof Date ? timeParam(value) : String(value));
        }
    }

    const text = params.toString();
    return text === '' ? '' : `?${text}`;
}
