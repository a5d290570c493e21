import * as Path from 'node:path';
import Inert from '@hapi/inert';
import type { Request, ResponseObject, ResponseToolkit, Server, ServerRoute } from '@hapi/hapi';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { packageRoot } from '../../lib/package-version';
import { servesOwnLinks } from './routes/blobs';

/** Where `npm run build` leaves the web interface (scripts/build-web-ui.js). */
export function webUiDir(): string {
    return Path.join(packageRoot(), 'dist', 'web-ui');
}

/**
 * The pages' policy (docs/ui.md): only our own scripts, styles and API; frames only our
 * viewer; no inline script, no eval, no base, no form posts, never framed. `connect`
 * adds the origin of the store's download links when they are not ours (S3).
 */
export function uiCsp(connect: string[] = []): string {
    return [
        'default-src \'none\'',
        'script-src \'self\'',
        'style-src \'self\'',
        'img-src \'self\' data:',
        ['connect-src \'self\'', ...connect].join(' '),
        'frame-src \'self\'',
        'base-uri \'none\'',
        'form-action \'none\'',
        'frame-ancestors \'none\''
    ].join('; ');
}

/**
 * The policy of viewer.html, the frame that holds an email's HTML: no script at all,
 * the inline styles mail depends on, and remote images, styles and fonts, which the
 * mail frame's own policy (mail-frame.ts) blocks until the person asks; a srcdoc frame
 * inherits this policy and the two intersect, so this one must allow what "load remote
 * content" then allows. `frame-src 'none'`: a link clicked in the mail goes nowhere.
 * Framed only by our own pages.
 */
export const VIEWER_CSP = [
    'default-src \'none\'',
    'style-src \'unsafe-inline\' http: https:',
    'img-src data: http: https:',
    'font-src data: http: https:',
    'frame-src \'none\'',
    'base-uri \'none\'',
    'form-action \'none\'',
    'frame-ancestors \'self\''
].join('; ');

const VIEWER = 'viewer.html';

/**
 * The origins the pages must reach besides their own to download: a store whose links
 * point elsewhere (S3) is asked for one link, made locally by signing, and its origin is
 * allowed in `connect-src`. Our own signed links need nothing more.
 */
export async function downloadOrigins(store: BlobStore): Promise<string[]> {
    if (servesOwnLinks(store)) {
        return [];
    }

    try {
        const link = await store.createDownloadLink('web-ui-probe', { expiresInSeconds: 60, filename: 'probe', contentType: 'application/octet-stream' });
        return 'url' in link ? [new URL(link.url).origin] : [];
    }
    catch {
        // No link to learn from: downloads from the pages fail visibly, nothing else does.
        return [];
    }
}

/**
 * GET /ui/{path*}: the web interface's static files (inert, confined to dist/web-ui),
 * revalidated by content-hash ETag on every load (`no-cache`: names carry no hash, and
 * an upgrade must never mix old and new modules), with the pages' security headers.
 * GET /ui redirects to /ui/ so the pages' relative URLs resolve under the prefix.
 */
export async function registerUiRoutes(server: Server, options: { prefix: string; connectSources: string[] }): Promise<void> {
    // once: a host that registered inert itself keeps its registration.
    await server.register({ plugin: Inert, once: true });
    const root = webUiDir();
    const pageCsp = uiCsp(options.connectSources);

    const secure = (response: ResponseObject, file: string): ResponseObject => {
        const viewer = file === VIEWER;
        return response
            .header('Content-Security-Policy', viewer ? VIEWER_CSP : pageCsp)
            .header('X-Frame-Options', viewer ? 'SAMEORIGIN' : 'DENY')
            .header('Referrer-Policy', 'no-referrer')
            .header('Cache-Control', 'no-cache');
    };

    const file = (request: Request, h: ResponseToolkit) => {
        const path = (request.params.path as string | undefined) || 'index.html';
        return secure(h.file(path, { confine: root, etagMethod: 'hash' }), path);
    };

    const routes: ServerRoute[] = [
        {
            method: 'GET',
            path: '/ui',
            options: { auth: false },
            handler: (_request, h) => h.redirect(`${options.prefix}/ui/`)
        },
        {
            method: 'GET',
            path: '/ui/{path*}',
            options: { auth: false },
            handler: file
        }
    ];
    server.route(routes);
}
