import * as Fs from 'node:fs';
import * as Path from 'node:path';
import type { Cruise } from './dependency-cruise';

/**
 * One block of the layer picture (docs/design.md, "The layers"): a folder and its items,
 * top line first. An item is a sub-folder (`name/`) or a file directly in the folder
 * (`name.ts`); an item imports only items of the lines below its own.
 */
export interface LayerBlock {
    /** The folder, relative to the repository, without a trailing slash. */
    base: string;
    /** Items by line, the top line first. */
    lines: string[][];
}

const ITEM = /^[\w.-]+(?:\/|\.ts)$/;

/**
 * The blocks of the first ```text block of `markdown`: a line that starts at the margin
 * with `folder/` opens a block; each indented line below it is one layer, its items the
 * leading words that end in `/` or `.ts`, the rest of the line (from the first other word)
 * a description.
 */
export function parseLayerPicture(markdown: string): LayerBlock[] {
    const fence = /^```text\n([\s\S]*?)^```$/m.exec(markdown);
    if (!fence) {
        return [];
    }

    const blocks: LayerBlock[] = [];
    for (const line of fence[1].split('\n')) {
        const words = line.trim().split(/\s+/).filter(Boolean);
        if (words.length === 0) {
            continue;
        }

        if (!/^\s/.test(line) && words[0].endsWith('/')) {
            blocks.push({ base: words[0].slice(0, -1), lines: [] });
            continue;
        }

        const items: string[] = [];
        for (const word of words) {
            if (!ITEM.test(word)) {
                break;
            }

            items.push(word);
        }

        if (items.length > 0 && blocks.length > 0) {
            blocks[blocks.length - 1].lines.push(items);
        }
    }

    return blocks;
}

/** The item of `base` that holds `file` (both relative to the repository), or null when outside it. */
function itemOf(base: string, file: string): string | null {
    if (!file.startsWith(`${base}/`)) {
        return null;
    }

    const rest = file.slice(base.length + 1);
    const slash = rest.indexOf('/');
    return slash === -1 ? rest : rest.slice(0, slash + 1);
}

/** The sub-folders (`name/`) and `.ts` files (not declarations) directly in `dir`. */
function treeItems(dir: string): string[] {
    return Fs.readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory() || (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')))
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort();
}

/** The backquoted names of a folder's README.md `May import:` line; null when it has none. */
function mayImport(readme: string): string[] | null {
    const line = /^May import:(.*)$/m.exec(readme);
    return line ? [...line[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]) : null;
}

/**
 * Every way the tree under `root` (the repository, or a fixture standing for it) departs
 * from the picture: a name that is not in the tree, an item of the tree not in the
 * picture, an import of an item on the same line or a line above, and for each folder
 * item a README.md whose `May import:` line is missing, names an item not below it, or
 * leaves out one it imports. Paths are relative to `repo`; `prefix` is where the picture's
 * folders lie inside it ('' for the repository's own). An import that leaves a block is the
 * business of the block around it; for an outermost block, its target's top folder (`lib/`)
 * must be listed, and may be when it is another outermost block.
 */
export function layerOffences(repo: string, prefix: string, blocks: LayerBlock[], cruise: Cruise): string[] {
    const offences: string[] = [];
    const inRepo = (path: string) => (prefix === '' ? path : `${prefix}/${path}`);
    const outermost = blocks.filter((b) => !blocks.some((outer) => b.base.startsWith(`${outer.base}/`)));
    for (const block of blocks) {
        const base = inRepo(block.base);
        const dir = Path.join(repo, base);
        if (!Fs.existsSync(dir) || !Fs.statSync(dir).isDirectory()) {
            offences.push(`${block.base}/: in the picture, not a folder`);
            continue;
        }

        const level = new Map<string, number>();
        block.lines.forEach((items, i) => {
            for (const item of items) {
                if (level.has(item)) {
                    offences.push(`${block.base}/${item}: in the picture twice`);
                }

                level.set(item, i);
            }
        });
        const tree = treeItems(dir);
        for (const item of level.keys()) {
            if (!tree.includes(item)) {
                offences.push(`${block.base}/${item}: in the picture, not in the tree`);
            }
        }

        for (const item of tree) {
            if (!level.has(item)) {
                offences.push(`${block.base}/${item}: in the tree, not in the picture`);
            }
        }

        const nested = !outermost.includes(block);
        // The other outermost blocks, which a README may name whole (`lib/`).
        const others = nested ? [] : outermost.filter((b) => b !== block).map((b) => `${b.base}/`);
        const imported = new Map<string, Set<string>>();
        for (const module of cruise.modules) {
            const from = itemOf(base, module.source);
            if (from === null) {
                continue;
            }

            for (const dependency of module.dependencies) {
                // Packages and Node's modules are not ours to order (nor is a name that resolves to no file).
                if (dependency.coreModule || dependency.resolved.startsWith('node_modules/') || !Fs.existsSync(Path.join(repo, dependency.resolved))) {
                    continue;
                }

                const to = itemOf(base, dependency.resolved);
                const outside = prefix === '' ? dependency.resolved : dependency.resolved.slice(prefix.length + 1);
                const target = to ?? (nested ? null : `${outside.split('/')[0]}/`);
                if (target === null || target === from) {
                    continue;
                }

                if (!imported.has(from)) {
                    imported.set(from, new Set());
                }

                imported.get(from)!.add(target);
                if (to !== null && level.has(from) && level.has(to) && level.get(to)! <= level.get(from)!) {
                    const where = level.get(to) === level.get(from) ? 'on its own line' : 'on a line above';
                    offences.push(`${module.source} → ${dependency.resolved}: ${from} imports ${to}, ${where}`);
                }
            }
        }

        for (const [item, i] of level) {
            if (!item.endsWith('/') || !tree.includes(item)) {
                continue;
            }

            const readme = Path.join(dir, item, 'README.md');
            const listed = Fs.existsSync(readme) ? mayImport(Fs.readFileSync(readme, 'utf8')) : null;
            if (listed === null) {
                offences.push(`${block.base}/${item}README.md: no "May import:" line`);
                continue;
            }

            const allowed = new Set([...block.lines.slice(i + 1).flat(), ...others]);
            for (const name of listed) {
                if (!allowed.has(name)) {
                    offences.push(`${block.base}/${item}README.md: may import ${name}, which is not below it`);
                }
            }

            for (const name of [...(imported.get(item) ?? [])].sort()) {
                if (!listed.includes(name)) {
                    offences.push(`${block.base}/${item}README.md: leaves out ${name}, which it imports`);
                }
            }
        }
    }

    return offences;
}
