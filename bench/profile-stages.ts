/**
 * Groups a .cpuprofile's self time by the stage of a small message's way (SMTP dialogue,
 * hash, parse, extraction, save, thread crossings, GC, ...) rather than by function:
 * the cost table of bench/README.md, "The small-mail fast path: cost per stage".
 * Node's internals and native frames have no stage of their own: a sample there counts
 * for the nearest frame up its stack that is ours or a package's (a socket write called by
 * smtp-server is the SMTP dialogue's), and for "thread crossings" when that stack is a
 * message port's or a worker's and nothing of ours called it.
 */
import type { CpuProfile, ProfileWindow } from './cpu-profile';
import { samplesInWindow } from './profile-samples';
import { ROOT } from './standalone';

/** The stages, in the order the table lists them. */
export const STAGES = [
    'SMTP dialogue (smtp-server, adapters/smtp)',
    'ingest entry (lib/ingest)',
    'hash (SHA-256 of the raw message)',
    'parse (mailparser and its libraries, lib/mime)',
    'extraction (links, codes, folded text: lib/extract)',
    'save statements (lib/record-store, lib/blob-store, lib/sqlite, sqlite3, knex)',
    'thread crossings (postMessage, message ports, structured clone)',
    'HTTP (Hapi, adapters other than SMTP)',
    'other code of ours',
    'other packages',
    'node internals (no frame of ours above)',
    'garbage collector',
    '(program)',
    '(idle)'
] as const;

export type Stage = typeof STAGES[number];

const PARSE_PACKAGES = new Set(['mailparser', 'mailsplit', 'libmime', 'libqp', 'libbase64', 'iconv-lite', 'encoding-japanese', 'punycode', 'punycode.js', 'he', 'html-to-text', 'htmlparser2', 'entities', 'linkify-it', 'tlds', '@zone-eu/mailsplit', 'selderee', 'parseley', 'domhandler', 'domutils', 'dom-serializer', 'deepmerge', 'leac', 'peberminta']);
const SAVE_PACKAGES = new Set(['sqlite3', 'knex', 'pg', 'pg-protocol']);
const HTTP_PACKAGES = new Set(['@hapi/hapi', '@hapi/shot', '@hapi/boom', '@hapi/hoek', '@hapi/podium', '@hapi/call', '@hapi/statehood', '@hapi/subtext', '@hapi/content', '@hapi/accept', '@hapi/ammo', '@hapi/topo', '@hapi/heavy', '@hapi/bounce', '@hapi/teamwork', '@hapi/somever', '@hapi/validate', '@hapi/bourne', '@hapi/catbox', '@hapi/catbox-memory', '@hapi/mimos', '@hapi/iron', '@hapi/cryptiles', '@hapi/wreck', '@hapi/file', '@hapi/pez', '@hapi/nigel', '@hapi/vise', 'joi']);

interface Frame {
    functionName: string;
    url: string;
}

/** The package a module of node_modules belongs to, or null. */
function packageOf(url: string): string | null {
    const at = url.lastIndexOf('node_modules/');
    if (at === -1) {
        return null;
    }

    const rest = url.slice(at + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
}

/** Our module's path under dist/ (e.g. `lib/mime/parse.js`), or null. */
function ourPath(url: string): string | null {
    const rel = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
    const at = rel.indexOf('dist/');
    return at === -1 || packageOf(url) !== null ? null : rel.slice(at + 'dist/'.length);
}

/** The stage a frame of ours or of a package stands for; null for node's internals and native frames. */
function stageOfOwner(frame: Frame): Stage | null {
    const pkg = packageOf(frame.url);
    if (pkg !== null) {
        if (pkg === 'smtp-server') {
            return STAGES[0];
        }

        if (PARSE_PACKAGES.has(pkg)) {
            return STAGES[3];
        }

        if (SAVE_PACKAGES.has(pkg)) {
            return STAGES[5];
        }

        return HTTP_PACKAGES.has(pkg) || pkg.startsWith('@hapi/') ? STAGES[7] : STAGES[9];
    }

    const path = ourPath(frame.url);
    if (path === null) {
        return null;
    }

    if (/sha256|digest/i.test(frame.functionName)) {
        return STAGES[2];
    }

    if (path.startsWith('adapters/smtp/')) {
        return STAGES[0];
    }

    if (path.startsWith('adapters/')) {
        return STAGES[7];
    }

    if (path.startsWith('lib/mime/parse-pool') || path.startsWith('lib/util/worker-script')) {
        return STAGES[6];
    }

    if (path.startsWith('lib/mime/')) {
        return STAGES[3];
    }

    if (path.startsWith('lib/extract/')) {
        return STAGES[4];
    }

    if (path.startsWith('lib/ingest/')) {
        return STAGES[1];
    }

    if (/^lib\/(record-store|blob-store|sqlite)\//.test(path)) {
        return STAGES[5];
    }

    return STAGES[8];
}

/** Node's frames of a thread crossing: posting to, or receiving from, another thread. */
function isCrossing(frame: Frame): boolean {
    return frame.functionName === 'postMessage' || frame.functionName === 'receiveMessageOnPort' ||
        /node:internal\/(per_context\/messageport|worker)/.test(frame.url);
}

/** The stage of a sample whose stack is `stack` (leaf first). */
export function stageOfStack(stack: Frame[]): Stage {
    const leaf = stack[0]!;
    switch (leaf.functionName) {
        case '(garbage collector)': return STAGES[11];
        case '(program)': return STAGES[12];
        case '(idle)': return STAGES[13];
    }

    // SHA-256 runs in node's crypto internals; the digest call names it wherever it is called from.
    if (stack.some((f) => /^(digest|createHash|sha256Hex|rawSha256Hex)$/.test(f.functionName) || f.url === 'node:internal/crypto/hash')) {
        return STAGES[2];
    }

    let crossing = false;
    for (const frame of stack) {
        crossing ||= isCrossing(frame);
        const stage = stageOfOwner(frame);
        if (stage !== null) {
            // A postMessage (or a message's clone) below our parse pool or writer client is the crossing, not their code.
            return crossing ? STAGES[6] : stage;
        }
    }

    return crossing ? STAGES[6] : STAGES[10];
}

interface StageNode {
    id: number;
    callFrame: Frame;
    children?: number[];
}

/** Self time per stage, ms, of the samples inside `window` (ms from the profile's start). */
export function summarizeStages(profile: CpuProfile, window: ProfileWindow = { fromMs: 0, toMs: Infinity }): { total: number; stages: Map<Stage, number> } {
    const nodes = profile.nodes as unknown as StageNode[];
    const parent = new Map<number, number>();
    for (const node of nodes) {
        for (const child of node.children ?? []) {
            parent.set(child, node.id);
        }
    }

    const byId = new Map(nodes.map((n) => [n.id, n]));
    const stageOfNode = new Map<number, Stage>();
    const nodeStage = (id: number) => {
        let stage = stageOfNode.get(id);
        if (stage === undefined) {
            const stack: Frame[] = [];
            for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
                stack.push(byId.get(at)!.callFrame);
            }

            stage = stageOfStack(stack);
            stageOfNode.set(id, stage);
        }

        return stage;
    };

    const stages = new Map<Stage, number>(STAGES.map((s) => [s, 0]));
    let total = 0;
    for (const { node, us } of samplesInWindow(profile, window)) {
        const stage = nodeStage(node);
        stages.set(stage, stages.get(stage)! + us / 1000);
        total += us / 1000;
    }

    return { total, stages };
}
