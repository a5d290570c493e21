/**
 * The HTML compatibility check in a thread of its own (docs/api.md, "Checks"). The thread
 * holds a private copy of the caniemail package, whose data it rewrites once so that the
 * package reports every feature it finds, supported or not: the score counts the
 * supported features too, which the package alone never names. Support itself is read
 * from an untouched copy of the same data, by the package's own rule.
 */

import { parentPort } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import type { HtmlCheckResult, HtmlFinding } from './html-check-types';

/** What the main thread posts: one HTML to check against client globs. */
export interface HtmlCheckRequest {
    id: number;
    html: string;
    globs: string[];
}

/** What the thread posts back: the result, or why there is none. */
export type HtmlCheckReply =
    | { id: number; result: HtmlCheckResult; error?: undefined }
    | { id: number; error: { message: string; code?: string } };

type Support = 'full' | 'partial' | 'none';

interface RawFeature {
    slug: string;
    title: string;
    url: string;
    category: string;
    stats: Record<string, Record<string, Record<string, string> | undefined> | undefined>;
}

interface RawData {
    last_update_date: string;
    data: RawFeature[];
}

interface Issue {
    title: string;
}

interface CanIEmail {
    caniemail(options: { clients: string[]; html: string }): { issues: { errors: Map<string, Issue[]>; warnings: Map<string, Issue[]> } };
    rawData: RawData;
}

// The package is ES modules only; TypeScript compiled to CommonJS would turn import() into
// require(), so the import is written where the compiler leaves it alone.
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;

/** caniemail's rule: the latest tested version (the last version key in sort order) decides. */
export function supportOf(versions: Record<string, string> | undefined): Support | undefined {
    if (!versions) {
        return undefined;
    }

    const keys = Object.keys(versions).sort();
    const word = versions[keys[keys.length - 1]!] ?? '';
    return word.startsWith('y') ? 'full' : word.startsWith('n') ? 'none' : 'partial';
}

/** The client ids that the globs match (`*` any run of characters, `?` one), in sorted order. */
export function clientsOf(all: readonly string[], globs: string[]): string[] {
    const patterns = globs.map((glob) => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`));
    return all.filter((client) => patterns.some((pattern) => pattern.test(client)));
}

interface Loaded {
    check: CanIEmail['caniemail'];
    features: Map<string, { feature: RawFeature; support: Map<string, Support | undefined> }>;
    clients: string[];
    updated: string;
}

async function load(): Promise<Loaded> {
    const entry = require.resolve('caniemail');
    const module = await importModule(pathToFileURL(entry).href) as CanIEmail;
    const raw = module.rawData;
    const clients = new Set<string>();
    for (const feature of raw.data) {
        for (const [family, platforms] of Object.entries(feature.stats)) {
            for (const platform of Object.keys(platforms ?? {})) {
                clients.add(`${family}.${platform}`);
            }
        }
    }

    // Support read before the data is rewritten below.
    const features = new Map<string, { feature: RawFeature; support: Map<string, Support | undefined> }>();
    for (const feature of raw.data) {
        const support = new Map<string, Support | undefined>();
        for (const client of clients) {
            const [family, platform] = client.split('.') as [string, string];
            support.set(client, supportOf(feature.stats[family]?.[platform]));
        }

        features.set(feature.title, { feature: { ...feature, stats: {} }, support });
    }

    // Every client half-supports every feature in this thread's copy: the package then
    // reports each feature it finds, once per occurrence, and never stops at a client it
    // has no data for (it throws there).
    for (const feature of raw.data) {
        for (const client of clients) {
            const [family, platform] = client.split('.') as [string, string];
            feature.stats[family] ??= {};
            feature.stats[family]![platform] = { 0: 'a' };
        }
    }

    return { check: module.caniemail, features, clients: [...clients].sort(), updated: new Date(raw.last_update_date.replace(' ', 'T').replace(' +0000', 'Z')).toISOString() };
}

/** The check of `html` for the clients the globs match (docs/api.md, "Checks"). */
export function checkWith(loaded: Loaded, html: string, globs: string[]): HtmlCheckResult {
    const clients = clientsOf(loaded.clients, globs);
    const data = { source: 'caniemail' as const, updated: loaded.updated };
    if (clients.length === 0) {
        throw Object.assign(new Error(`clients: no client matches ${globs.join(',')}`), { code: 'NO_CLIENT' });
    }

    if (html === '') {
        return { clients, score: 100, findings: [], data, html: false };
    }

    // One client of the package's own set is enough to learn which features occur and how often.
    const { issues } = loaded.check({ clients: [clients[0]!], html });
    const counts = new Map<string, number>();
    for (const issue of issues.warnings.get(clients[0]!) ?? []) {
        counts.set(issue.title, (counts.get(issue.title) ?? 0) + 1);
    }

    let pairs = 0;
    let supported = 0;
    const findings: HtmlFinding[] = [];
    for (const [title, count] of counts) {
        const known = loaded.features.get(title);
        if (!known) {
            continue;
        }

        const unsupported: string[] = [];
        const partial: string[] = [];
        for (const client of clients) {
            const support = known.support.get(client);
            // A client the data set has no result for counts neither way.
            if (support === undefined) {
                continue;
            }

            pairs += 1;
            supported += support === 'full' ? 1 : support === 'partial' ? 0.5 : 0;
            if (support === 'none') {
                unsupported.push(client);
            }
            else if (support === 'partial') {
                partial.push(client);
            }
        }

        if (unsupported.length > 0 || partial.length > 0) {
            const { slug, url, category } = known.feature;
            findings.push({ title, ...(slug ? { slug } : {}), ...(url ? { url } : {}), category, unsupported, partial, count });
        }
    }

    findings.sort((a, b) => b.unsupported.length - a.unsupported.length || b.partial.length - a.partial.length || b.count - a.count || (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
    const score = pairs === 0 ? 100 : Math.round((supported / pairs) * 100);
    return { clients, score, findings, data };
}

if (parentPort) {
    const port = parentPort;
    let loading: Promise<Loaded> | undefined;
    port.on('message', (request: HtmlCheckRequest) => {
        loading ??= load();
        loading.then((loaded) => {
            port.postMessage({ id: request.id, result: checkWith(loaded, request.html, request.globs) } satisfies HtmlCheckReply);
        }).catch((err: unknown) => {
            const error = err as { message?: string; code?: unknown };
            port.postMessage({ id: request.id, error: { message: String(error?.message ?? err), ...(typeof error?.code === 'string' ? { code: error.code } : {}) } } satisfies HtmlCheckReply);
        });
    });
}
