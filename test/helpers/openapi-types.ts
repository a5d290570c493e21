import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Ts from 'typescript';
import { removeDir, tempDir } from './temp-dir';

/** What openapi-typescript exports, as far as we use it (its CommonJS build). */
interface OpenapiTypescript {
    default(schema: object): Promise<Ts.Node[]>;
    astToString(ast: Ts.Node[]): string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const generator = require('openapi-typescript') as OpenapiTypescript;

/** TypeScript declarations generated from an OpenAPI document by openapi-typescript, as a user would make them. */
export async function generateTypes(document: object): Promise<string> {
    return generator.astToString(await generator.default(document));
}

/**
 * Type-checks `program` (a module importing `./api`) against the generated `api.ts`
 * with TypeScript's compiler API, strict; answers the diagnostics as text, one a line
 * (empty when it compiles).
 */
export async function typecheckAgainst(apiTypes: string, program: string): Promise<string[]> {
    const dir = await tempDir('openapi-types');
    try {
        await Fs.writeFile(Path.join(dir, 'api.ts'), apiTypes);
        await Fs.writeFile(Path.join(dir, 'program.ts'), program);
        const options: Ts.CompilerOptions = { strict: true, noEmit: true, target: Ts.ScriptTarget.ES2022, module: Ts.ModuleKind.CommonJS, types: [], lib: ['lib.es2022.d.ts'] };
        const compiled = Ts.createProgram([Path.join(dir, 'program.ts')], options);
        return Ts.getPreEmitDiagnostics(compiled).map((d) => `${d.file ? Path.basename(d.file.fileName) : ''}: TS${d.code} ${Ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
    finally {
        await removeDir(dir);
    }
}
