import * as Crypto from 'node:crypto';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { BlobStore } from '../../lib/blob-store/blob-store';
import { packageRoot } from '../../lib/util/package-version';
import { apiError } from './error-mapping';
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

/** Media types of the interface's files, by extension; a file of another kind is not served. */
const TYPES: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.png': 'image/png',
    '.svg': 'image/svg+xml'
};

interface UiFile {
    body: Buffer;
    type: string;
    etag: string;
}

/** Every file of the built interface by its path under /ui/, read once (about 60 KB). */
export function loadUiFiles(root: string = webUiDir()): Map<string, UiFile> {
    const files = new Map<string, UiFile>();
    const walk = (dir: string, prefix: string) => {
        for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
            const path = `${prefix}${entry.name}`;
            const type = TYPES[Path.extname(entry.name)];
            if (entry.isDirectory()) {
                walk(Path.join(dir, entry.name), `${path}/`);
            }
            else if (entry.isFile() && type) {
                const body = Fs.readFileSync(Path.join(dir, entry.name));
                files.set(path, { body, type, etag: Crypto.createHash('sha1').update(body).digest('hex') });
            }
        }
    };

    if (Fs.existsSync(root)) {
        walk(root, '');
    }

    return files;
}

/**
 * GET /ui/{path*}: the web interface's static files, read into memory at registration
 * from dist/web-ui, so only those exact paths exist (nothing else of the disk is
 * reachable) and the host's server gets no decorations (inert would add its handlers
 * server-wide). Content-hash ETags with `no-cache`: the browser revalidates each file and
 * gets 304 while it is unchanged, and an upgrade never mixes old and new modules (the
 * names carry no hash). GET /ui redirects to /ui/ so the pages' relative URLs, and
 * their calls to ../v1, resolve under the route prefix.
 */
export function uiRoutes(options: { prefix: string; connectSources: string[]; files?: Map<string, UiFile> }): ServerRoute[] {
    const files = options.files ?? loadUiFiles();
    const pageCsp = uiCsp(options.connectSources);

    const file = (request: Request, h: ResponseToolkit) => {
        const path = (request.params.path as string | undefined) || 'index.html';
        const found = files.get(path);
        if (!found) {
            throw apiError(404, 'NOT_FOUND');
        }

        const viewer = path === VIEWER;
        return h.response(found.body)
            .type(found.type)
            .etag(found.etag)
            .header('Content-Security-Policy', viewer ? VIEWER_CSP : pageCsp)
            .header('X-Frame-Options', viewer ? 'SAMEORIGIN' : 'DENY')
            .header('Referrer-Policy', 'no-referrer')
            .header('Cache-Control', 'no-cache');
    };

    return [
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
}
