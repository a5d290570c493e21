import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import * as Ts from 'typescript';
import { generateTypes } from './openapi-types';
import { provisionServer } from './provision-server';
import { removeDir, tempDir } from './temp-dir';

/** A served OpenAPI document, as far as these checks read it. */
export interface ServedDocument {
    components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
}

/**
 * The /openapi.json of a fresh default server. SQLite and the file store serve every
 * route, the file store's signed links included, so it holds every shape and error code.
 */
export async function servedDocument(): Promise<ServedDocument> {
    const p = await provisionServer();
    try {
        return JSON.parse((await p.server.inject('/openapi.json')).payload);
    }
    finally {
        await p.cleanup();
    }
}

/** What a module says of the served schemas: its type of each, or why it has none. */
export interface ShapeClaims {
    /** Component name in `/openapi.json` → the type of the module that claims to be its shape. */
    types: Record<string, string>;
    /** Component name → why no type of the module claims it. */
    unclaimed: Record<string, string>;
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
 * Checks that every schema of `document` is claimed by a type of `modulePath` (a .ts
 * file, absolute) or said to have none, and, with the TypeScript compiler, that each
 * claimed type is its schema field by field, both ways: the same fields, the same
 * optional ones, each field of the same type. Types are generated from `document` with
 * openapi-typescript. Answers one line per mismatch, empty when every claim holds.
 */
export async function shapeMismatches(document: ServedDocument, modulePath: string, claims: ShapeClaims): Promise<string[]> {
    const served = Object.keys(document.components.schemas);
    const found = served.filter((schema) => !(schema in claims.types) && !(schema in claims.unclaimed))
        .map((schema) => `${schema}: served, but no type claims it and no reason says why`);
    found.push(...Object.keys({ ...claims.types, ...claims.unclaimed }).filter((schema) => !served.includes(schema))
        .map((schema) => `${schema}: claimed, but not served`));

    const lines = [PRELUDE, `import type * as M from ${JSON.stringify(modulePath.replace(/\.ts$/, ''))};`];
    const meaning = new Map<string, string>();
    for (const [schema, type] of Object.entries(claims.types).filter(([name]) => served.includes(name))) {
        for (const check of CHECKS) {
            const name = `_${meaning.size}`;
            meaning.set(name, `${schema} vs ${type}: ${check.what}`);
            lines.push(`export const ${name}: ${check.line(`S['${schema}']`, `M.${type}`)} = true;`);
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
