import * as Fs from 'node:fs';
import * as Path from 'node:path';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { packedTarballs, tarballFiles, type PackedTarballs } from '../helpers/packed';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

const ROOT = Path.resolve(__dirname, '../..');
/** The README is the front door: the reference lives in docs/, so the door stays short. */
const MAX_README_LINES = 300;

/** One relative link as written in a Markdown file. */
interface DocLink {
    /** The file the link is written in, absolute. */
    from: string;
    /** The link target as written, e.g. `docs/api.md#errors`. */
    target: string;
}

/** The documentation files whose links are checked: README.md, docs/*.md, bench/README.md. */
function docFiles(): string[] {
    const docsDir = Path.join(ROOT, 'docs');
    const docs = Fs.readdirSync(docsDir).filter((name) => name.endsWith('.md')).sort().map((name) => Path.join(docsDir, name));
    return [Path.join(ROOT, 'README.md'), ...docs, Path.join(ROOT, 'bench', 'README.md')];
}

/** Drops fenced code blocks, whose contents are examples rather than links or headings. */
function withoutFences(markdown: string): string {
    return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** Relative links of one Markdown text; inline code is dropped first, like the fences. */
function relativeLinks(markdown: string): string[] {
    const text = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
    const targets: string[] = [];
    for (const match of text.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1];
        // A scheme (https:, mailto:) or a protocol-relative URL leaves the repository.
        if (!/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('//')) {
            targets.push(target);
        }
    }

    return targets;
}

/** GitHub's heading anchor: lowercase, punctuation other than `-` and `_` dropped, spaces to `-`. */
function slugify(heading: string): string {
    const text = heading
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')     // a link in a heading anchors on its text
        .toLowerCase();
    return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor the headings of a Markdown text produce, with GitHub's `-1`, `-2` for repeats. */
function headingAnchors(markdown: string): Set<string> {
    const anchors = new Set<string>();
    const seen = new Map<string, number>();
    for (const match of withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
        const slug = slugify(match[1]);
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }

    return anchors;
}

/** The problem with one link, or null when its file exists and its anchor names a heading there. */
function brokenReason(link: DocLink, readFile: (path: string) => string | null): string | null {
    const hash = link.target.indexOf('#');
    const pathPart = hash === -1 ? link.target : link.target.slice(0, hash);
    const anchor = hash === -1 ? '' : decodeURIComponent(link.target.slice(hash + 1));
    const file = pathPart === '' ? link.from : Path.resolve(Path.dirname(link.from), decodeURIComponent(pathPart));
    if (!file.startsWith(ROOT + Path.sep)) {
        return 'points outside the repository';
    }

    if (!Fs.existsSync(file)) {
        return 'no such file';
    }

    if (anchor === '') {
        return null;
    }

    const markdown = file.endsWith('.md') ? readFile(file) : null;
    if (markdown === null) {
        return 'an anchor into a file that is not Markdown';
    }

    return headingAnchors(markdown).has(anchor) ? null : `no heading "#${anchor}"`;
}

/** Every broken relative link of the given files, as `file: target (reason)` lines. */
function brokenLinks(files: string[], readFile: (path: string) => string | null): string[] {
    const broken: string[] = [];
    for (const from of files) {
        const markdown = readFile(from);
        if (markdown === null) {
            broken.push(`${Path.relative(ROOT, from)}: cannot read the file itself`);
            continue;
        }

        for (const target of relativeLinks(markdown)) {
            const reason = brokenReason({ from, target }, readFile);
            if (reason !== null) {
                broken.push(`${Path.relative(ROOT, from)}: ${target} (${reason})`);
            }
        }
    }

    return broken;
}

function readDisk(path: string): string | null {
    try {
        return Fs.readFileSync(path, 'utf8');
    }
    catch {
        return null;
    }
}

/** The files in the tarball `npm pack` makes of this package or of the client workspace (the run's shared pack). */
async function packedFiles(which: keyof PackedTarballs): Promise<Set<string>> {
    return new Set(await tarballFiles((await packedTarballs())[which]));
}

/**
 * The relative links of a package's README whose file its tarball does not hold: on the
 * registry's page and in node_modules they lead nowhere.
 */
function linksOutsidePackage(markdown: string, packageDir: string, files: Set<string>): string[] {
    const outside: string[] = [];
    for (const target of relativeLinks(markdown)) {
        const pathPart = target.split('#')[0];
        if (pathPart === '') {
            continue;
        }

        const inPackage = Path.relative(packageDir, Path.resolve(packageDir, decodeURIComponent(pathPart))).split(Path.sep).join('/');
        const packed = files.has(inPackage) || [...files].some((file) => file.startsWith(`${inPackage}/`));
        if (inPackage.startsWith('..') || !packed) {
            outside.push(target);
        }
    }

    return outside;
}

/** The repository's web address, from package.json's `repository` (the one place it is written). */
function repositoryUrl(): string {
    const pkg = JSON.parse(Fs.readFileSync(Path.join(ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };
    return pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** Links of a Markdown text into this repository's files on the web (`<repository>/blob/main/...`), as repository paths. */
function repositoryLinks(markdown: string, repository: string): string[] {
    const prefix = `${repository}/blob/main/`;
    const text = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
    return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?/g)].map((m) => m[1]).filter((t) => t.startsWith(prefix)).map((t) => t.slice(prefix.length));
}

describe('docs links', () => {

    describe('slugify()', () => {

        it('follows GitHub: lowercase, punctuation dropped except - and _, spaces to -', () => {
            expect(slugify('Migrations: once, before the instances start')).to.equal('migrations-once-before-the-instances-start');
            expect(slugify('In-process: `ingestRawEmail()`')).to.equal('in-process-ingestrawemail');
            expect(slugify('Soak: 20,000 messages under load')).to.equal('soak-20000-messages-under-load');
            expect(slugify('MAX_PROBES_IN_FLIGHT')).to.equal('max_probes_in_flight');
            expect(slugify('Scaling — out')).to.equal('scaling--out');
            expect(slugify('See [the API](docs/api.md)')).to.equal('see-the-api');
        });
    });

    describe('headingAnchors()', () => {

        it('numbers repeated headings and ignores headings inside code fences', () => {
            const anchors = headingAnchors('# Limits\n\n## Limits\n\n```sh\n# not a heading\n```\n### Clocks ###\n');
            expect([...anchors]).to.equal(['limits', 'limits-1', 'clocks']);
        });
    });

    describe('relativeLinks()', () => {

        it('finds relative links and skips URLs, code spans and code fences', () => {
            const markdown = [
                'See [api](docs/api.md#errors), [home](https://example.com) and [mail](mailto:a@b.c).',
                'Also [`pipe(8)`](https://www.postfix.org/pipe.8.html) and [top](#top).',
                '`[not](a-link.md)`',
                '```md',
                '[nor](this.md)',
                '```'
            ].join('\n');
            expect(relativeLinks(markdown)).to.equal(['docs/api.md#errors', '#top']);
        });
    });

    describe('brokenLinks()', () => {

        const readme = Path.join(ROOT, 'README.md');

        it('reports a missing file, a missing heading and a link out of the repository', () => {
            const markdown = '[a](docs/no-such-file.md) [b](docs/api.md#no-such-heading) [c](../../etc/passwd) [d](docs/api.md#errors)';
            const read = (path: string) => (path === readme ? markdown : readDisk(path));
            expect(brokenLinks([readme], read)).to.equal([
                'README.md: docs/no-such-file.md (no such file)',
                'README.md: docs/api.md#no-such-heading (no heading "#no-such-heading")',
                'README.md: ../../etc/passwd (points outside the repository)'
            ]);
        });

        it('checks an anchor of the same file against its own headings', () => {
            const markdown = '# Title\n\n## Quick start\n\n[ok](#quick-start) [bad](#quick-stop)\n';
            const read = (path: string) => (path === readme ? markdown : readDisk(path));
            expect(brokenLinks([readme], read)).to.equal(['README.md: #quick-stop (no heading "#quick-stop")']);
        });
    });

    describe('linksOutsidePackage()', () => {

        it('reports a link to a file the tarball lacks, or outside the package', () => {
            const markdown = '[a](docs/api.md#errors) [b](docs/ui.md) [c](../README.md) [d](#usage) [e](docs/) [f](LICENSE)';
            expect(linksOutsidePackage(markdown, ROOT, new Set(['docs/api.md', 'LICENSE', 'README.md']))).to.equal(['docs/ui.md', '../README.md']);
        });
    });

    describe('the packages', () => {

        it('hold every file their README links to, so that the links work on the registry\'s page and in node_modules', { timeout: 60_000 }, async () => {
            const readme = Fs.readFileSync(Path.join(ROOT, 'README.md'), 'utf8');
            const server = await packedFiles('server');
            expect(server.has('docs/api.md'), 'docs/ is packed').to.be.true();
            expect(linksOutsidePackage(readme, ROOT, server)).to.equal([]);
            const clientDir = Path.join(ROOT, 'packages', 'client');
            expect(linksOutsidePackage(Fs.readFileSync(Path.join(clientDir, 'README.md'), 'utf8'), clientDir, await packedFiles('client'))).to.equal([]);
        });

        it('name the same repository, homepage and issues, and the client\'s README links into it where it exists', () => {
            const repository = repositoryUrl();
            expect(repository).to.match(/^https:\/\/github\.com\/[\w.-]+\/inbox-capture$/);
            const server = JSON.parse(Fs.readFileSync(Path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
            const client = JSON.parse(Fs.readFileSync(Path.join(ROOT, 'packages', 'client', 'package.json'), 'utf8')) as Record<string, unknown>;
            expect(server).to.include({ homepage: `${repository}#readme`, bugs: { url: `${repository}/issues` } });
            expect(client).to.include({
                repository: { type: 'git', url: `git+${repository}.git`, directory: 'packages/client' },
                homepage: `${repository}/tree/main/packages/client#readme`,
                bugs: { url: `${repository}/issues` }
            });
            const links = repositoryLinks(Fs.readFileSync(Path.join(ROOT, 'packages', 'client', 'README.md'), 'utf8'), repository);
            expect(links).to.include('docs/api.md#the-client-inbox-captureclient');
            const readme = Path.join(ROOT, 'README.md');
            expect(links.map((target) => brokenReason({ from: readme, target }, readDisk)).filter((r) => r !== null)).to.equal([]);
        });
    });

    describe('the repository', () => {

        it('checks README.md, every docs/*.md and bench/README.md', () => {
            const names = docFiles().map((file) => Path.relative(ROOT, file));
            expect(names).to.include(['README.md', 'docs/api.md', 'docs/operations.md', 'docs/guarantees.md', 'docs/design.md', 'bench/README.md']);
        });

        it('has a README of at most 300 lines', () => {
            const readme = Fs.readFileSync(Path.join(ROOT, 'README.md'), 'utf8');
            const lines = readme.endsWith('\n') ? readme.split('\n').length - 1 : readme.split('\n').length;
            expect(lines).to.be.at.most(MAX_README_LINES);
        });

        it('has links from the README into each of the four docs and bench/README.md', () => {
            const targets = relativeLinks(Fs.readFileSync(Path.join(ROOT, 'README.md'), 'utf8')).map((target) => target.split('#')[0]);
            expect(targets).to.include(['docs/api.md', 'docs/operations.md', 'docs/guarantees.md', 'docs/design.md', 'bench/README.md']);
        });

        it('resolves every relative link to a file, and every anchor to a heading of that file', () => {
            expect(brokenLinks(docFiles(), readDisk)).to.equal([]);
        });
    });
});
