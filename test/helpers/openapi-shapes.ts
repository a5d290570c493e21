import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Ts from 'typescript';
import { generateTypes } from './openapi-types';
import { removeDir, tempDir } from './temp-dir';

/** A component schema of the served document and the TypeScript type that claims to be its shape. */
export interface ShapeClaim {
    /** Component name in `/openapi.json`, e.g. `Email`. */
    schema: string;
    /** The claiming type, exported by the module under test, e.g. `EmailView`. */
    type: string;
}

// Type-level helpers of the generated program. Deep rebuilds a type as plain mapped
// objects, so an interface and the generated literal of the same shape compare equal;
// Equals is the strict identity test (optional, readonly and `any` all count).
const PRELUDE = `
import type { components } from './api';
type S = components['schemas'];
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Deep<T> = T extends readonly (infer I)[] ? Deep<I>[] : T extends object ? { [K in keyof T]: Deep<T[K]> } : T;
type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];
type Differing<A, B> = { [K in keyof A & keyof B]-?: Equals<Deep<A[K]>, Deep<B[K]>> extends true ? never : K }[keyof A & keyof B];
type None<U> = [U] extends [never] ? true : U;
`;

// One assertion each: its type is `true` when the set of fields it names is empty, else
// that set of field names, which the checker then lists.
const CHECKS: ReadonlyArray<{ what: string; line: (served: string, claimed: string) => string }> = [
    { what: 'served fields the type lacks', line: (s, c) => `None<Exclude<keyof ${s}, keyof ${c}>>` },
    { what: 'fields of the type the server does not serve', line: (s, c) => `None<Exclude<keyof ${c}, keyof ${s}>>` },
    { what: 'fields optional on one side only', line: (s, c) => `None<Exclude<OptionalKeys<${s}>, OptionalKeys<${c}>> | Exclude<OptionalKeys<${c}>, OptionalKeys<${s}>>>` },
    { what: 'fields whose types differ', line: (s, c) => `None<Differing<${s}, ${c}>>` }
];

/**
 * Checks with the TypeScript compiler that each claimed type of `modulePath` (a .ts file,
 * absolute) is its served schema field by field, both ways: the same fields, the same
 * optional ones, and each field of the same type. Types are generated from `document`
 * with openapi-typescript. Answers one line per mismatch, empty when every claim holds.
 */
export async function shapeMismatches(document: object, modulePath: string, claims: readonly ShapeClaim[]): Promise<string[]> {
    const lines = [PRELUDE, `import type * as M from ${JSON.stringify(modulePath.replace(/\.ts$/, ''))};`];
    const meaning = new Map<string, string>();
    for (const claim of claims) {
        for (const check of CHECKS) {
            const name = `_${meaning.size}`;
            meaning.set(name, `${claim.schema} vs ${claim.type}: ${check.what}`);
            lines.push(`export const ${name}: ${check.line(`S['${claim.schema}']`, `M.${claim.type}`)} = true;`);
        }
    }

    const dir = await tempDir('openapi-shapes');
    try {
        await Fs.writeFile(Path.join(dir, 'api.ts'), await generateTypes(document));
        const program = Path.join(dir, 'program.ts');
        await Fs.writeFile(program, lines.join('\n'));
        const options: Ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, target: Ts.ScriptTarget.ES2022, module: Ts.ModuleKind.CommonJS, types: ['node'], lib: ['lib.es2022.d.ts'] };
        const compiled = Ts.createProgram([program], options);
        const source = compiled.getSourceFile(program)!;
        const checker = compiled.getTypeChecker();
        const found: string[] = [];
        for (const statement of source.statements) {
            const declaration = Ts.isVariableStatement(statement) ? statement.declarationList.declarations[0] : undefined;
            if (declaration?.type) {
                const type = checker.getTypeFromTypeNode(declaration.type);
                const names = (type.isUnion() ? type.types : [type]).map((t) => checker.typeToString(t)).sort();
                if (names.join() !== 'true') {
                    found.push(`${meaning.get(declaration.name.getText(source))}: ${names.join(' | ')}`);
                }
            }
        }

        // Besides the assertions that failed, what else the compiler refused (a type or
        // schema that does not exist); the modules imported are the project type-check's business.
        const assertionFailed = (d: Ts.Diagnostic) => d.code === 2322 && /^Type 'true' is not assignable/.test(Ts.flattenDiagnosticMessageText(d.messageText, ' '));
        const others = Ts.getPreEmitDiagnostics(compiled, source).filter((d) => !assertionFailed(d));
        return [...found, ...others.map((d) => `TS${d.code} ${Ts.flattenDiagnosticMessageText(d.messageText, ' ')}`)];
    }
    finally {
        await removeDir(dir);
    }
}
