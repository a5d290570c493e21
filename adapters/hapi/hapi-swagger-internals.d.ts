// Typings of the two hapi-swagger modules the plugin uses directly. Its entry point
// is avoided: it loads the whole Swagger UI browser bundle into Node, which defines
// globals (`CSS`, `__core-js_shared__`) in the host's process.

declare module 'hapi-swagger/lib/builder' {
    import type { Request } from '@hapi/hapi';

    /** Builds the document from the server's route table. */
    export function getSwaggerJSON(settings: Record<string, unknown>, request: Request): Promise<Record<string, unknown>>;
}

declare module 'hapi-swagger/lib/defaults' {
    const defaults: Record<string, unknown>;
    export = defaults;
}
