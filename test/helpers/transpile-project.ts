import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Ts from 'typescript';

/**
 * Emits the JavaScript of a tsconfig project as `tsc -p` would, file by file without
 * the type check: every file the project includes, and every file of ours they import
 * that it does not (tsc follows imports too). Seconds where tsc takes half a minute on
 * the 2-core CI machine; the types are `npm run typecheck`'s to check. Returns the count.
 */
export async function transpileProject(tsconfig: string): Promise<number> {
    const parsed = Ts.getParsedCommandLineOfConfigFile(tsconfig, {}, {
        ...Ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
            throw new Error(`${tsconfig}: ${Ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
        }
    });
    if (!parsed || parsed.errors.length > 0) {
        throw new Error(`${tsconfig}: ${parsed?.errors.map((e) => Ts.flattenDiagnosticMessageText(e.messageText, '\n')).join('; ')}`);
    }

    const { rootDir, outDir } = parsed.options;
    if (!rootDir || !outDir) {
        throw new Error(`${tsconfig}: rootDir and outDir must be set`);
    }

    const queue = parsed.fileNames.filter((file) => !file.endsWith('.d.ts'));
    const seen = new Set(queue);
    while (queue.length > 0) {
        const file = queue.pop()!;
        const { outputText, sourceMapText } = Ts.transpileModule(await Fs.readFile(file, 'utf8'), { compilerOptions: parsed.options, fileName: file });
        const out = Path.join(outDir, Path.relative(rootDir, file)).replace(/\.ts$/, '.js');
        await Fs.mkdir(Path.dirname(out), { recursive: true });
        await Fs.writeFile(out, outputText);
        if (sourceMapText !== undefined) {
            await Fs.writeFile(`${out}.map`, sourceMapText);
        }

        for (const imported of relativeImports(file, outputText)) {
            if (!seen.has(imported)) {
                seen.add(imported);
                queue.push(imported);
            }
        }
    }

    return seen.size;
}

/** The TypeScript files that the emitted `js` of `file` requires by relative path. */
function relativeImports(file: string, js: string): string[] {
    const found: string[] = [];
    for (const [, specifier] of js.matchAll(/\brequire\("(\.{1,2}\/[^"]*)"\)/g)) {
        const base = Path.resolve(Path.dirname(file), specifier!);
        const source = [`${base}.ts`, Path.join(base, 'index.ts')].find((candidate) => Ts.sys.fileExists(candidate));
        if (source) {
            found.push(source);
        }
    }

    return found;
}
