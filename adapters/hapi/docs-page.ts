import * as Fs from 'node:fs';
import * as Path from 'node:path';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { apiError } from './error-mapping';
import { API_TAG, GROUP_SERVICE, PUBLIC_SECURITY } from './route-context';

/**
 * The interactive page allows only its own scripts and styles (Swagger UI sets inline
 * styles), talks only to this origin, and may not be framed (clickjacking).
 */
export const DOCS_CSP = [
    'default-src \'none\'',
    'script-src \'self\'',
    'style-src \'self\' \'unsafe-inline\'',
    'img-src \'self\' data:',
    'font-src \'self\' data:',
    'connect-src \'self\'',
    'frame-ancestors \'none\'',
    'base-uri \'none\'',
    'form-action \'none\''
].join('; ');

/** Swagger UI files the page loads, with their media types: nothing else of the package is served. */
const ASSETS: Record<string, string> = {
    'swagger-ui.css': 'text/css; charset=utf-8',
    'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
    'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
    'favicon-32x32.png': 'image/png',
    'favicon-16x16.png': 'image/png'
};

/** Seconds browsers may cache the Swagger UI files: they change only with a new install. */
const ASSET_MAX_AGE_SECONDS = 3600;

// swagger-ui-dist comes with hapi-swagger; resolving it from there keeps the one copy
// hapi-swagger was tested with.
function swaggerUiDir(): string {
    const from = Path.dirname(require.resolve('hapi-swagger/package.json'));
    return Path.dirname(require.resolve('swagger-ui-dist/package.json', { paths: [from] }));
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * GET /docs (docs/design.md): Swagger UI over the plugin's OpenAPI document, served by the
 * plugin itself (no inert or vision registered on the host's server), with a script of
 * its own instead of an inline one, so the page runs under a strict CSP.
 */
export function docsRoutes(options: { prefix: string; at?: string; openapiPath: string; title: string }): ServerRoute[] {
    const dir = swaggerUiDir();
    // `prefix` is the registration's (hapi adds it to the routes), `at` the public routes' own.
    const at = options.at ?? '';
    const base = `${options.prefix}${at}/docs`;
    const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(options.title)}</title>
<link rel="stylesheet" href="${escapeHtml(base)}/swagger-ui.css">
<link rel="icon" type="image/png" href="${escapeHtml(base)}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${escapeHtml(base)}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${escapeHtml(base)}/swagger-ui-bundle.js"></script>
<script src="${escapeHtml(base)}/swagger-ui-standalone-preset.js"></script>
<script src="${escapeHtml(base)}/init.js"></script>
</body>
</html>
`;
    const init = `window.onload = function () {
    window.ui = SwaggerUIBundle({
        url: ${JSON.stringify(options.prefix + options.openapiPath)},
        dom_id: '#swagger-ui',
        deepLinking: true,
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
        layout: 'StandaloneLayout'
    });
};
`;

    const secure = (response: ReturnType<ResponseToolkit['response']>) => response
        .header('Content-Security-Policy', DOCS_CSP)
        .header('X-Frame-Options', 'DENY');

    const asset = (request: Request, h: ResponseToolkit) => {
        const file = request.params.file as string;
        if (file === 'init.js') {
            return secure(h.response(init).type('text/javascript; charset=utf-8'));
        }

        const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
        if (!type) {
            throw apiError(404, 'NOT_FOUND');
        }

        return secure(h.response(Fs.createReadStream(Path.join(dir, file))).type(type))
            .header('Cache-Control', `public, max-age=${ASSET_MAX_AGE_SECONDS}`);
    };

    return [
        {
            method: 'GET',
            path: `${at}/docs`,
            options: {
                auth: false,
                tags: [API_TAG, GROUP_SERVICE],
                description: 'Interactive API documentation (Swagger UI)',
                notes: 'Swagger UI over this server\'s OpenAPI document; its script and styles are served beside it, never from another host.',
                plugins: { 'hapi-swagger': { id: 'getDocsPage', security: PUBLIC_SECURITY, produces: ['text/html'], responses: { 200: { description: 'The HTML page' } } } }
            },
            handler: (_request, h) => secure(h.response(page).type('text/html; charset=utf-8'))
        },
        {
            method: 'GET',
            path: `${at}/docs/{file}`,
            // The page's own files: not an endpoint, so not in the document.
            options: { auth: false },
            handler: asset
        }
    ];
}
