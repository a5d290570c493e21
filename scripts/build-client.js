'use strict';

// The builds of the client (adapters/client), for the package inbox-capture-client
// (packages/client/dist: esm/ and cjs/, each with its declarations, and the Playwright
// fixture of packages/client/src beside them) and for this package's own
// `inbox-capture/client` import (dist/client-esm, a copy of the same ES module build;
// its `require` is tsc's main build, dist/adapters/client).
//
// tsc emits relative imports as written (`./errors`); ES modules need the file's name
// (`./errors.js`), so they are completed here. The sources stay extension-free because
// the CommonJS build and the TypeScript test runner load them.

const Fs = require('node:fs');
const Path = require('node:path');
const Ts = require('typescript');

const ROOT = Path.join(__dirname, '..');
const PACKAGE = Path.join(ROOT, 'packages', 'client');
const OUT = Path.join(PACKAGE, 'dist');
const ROOT_ESM = Path.join(ROOT, 'dist', 'client-esm');

// One process for the four compilations, parsing each source (lib.dom.d.ts above all) once.
const parsed = new Map();
const host = Ts.createCompilerHost({});
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const key = `${fileName}:${JSON.stringify(languageVersion)}`;
    if (!parsed.has(key)) {
        parsed.set(key, getSourceFile(fileName, languageVersion, ...rest));
    }

    return parsed.get(key);
};

/** `tsc -p project --module <module> --outDir <outDir>`; throws with the diagnostics when it does not compile. */
function tsc(project, module, outDir) {
    const config = Ts.getParsedCommandLineOfConfigFile(project, { module: Ts.ModuleKind[module], outDir }, { ...Ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
    const program = Ts.createProgram({ rootNames: config.fileNames, options: config.options, host });
    const emitted = program.emit();
    const diagnostics = [...config.errors, ...Ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
    if (diagnostics.length > 0) {
        fail(diagnostics);
    }
}

function fail(diagnostics) {
    const text = Ts.formatDiagnosticsWithColorAndContext(diagnostics, { getCurrentDirectory: () => ROOT, getCanonicalFileName: (f) => f, getNewLine: () => '\n' });
    throw new Error(`the client does not compile:\n${text}`);
}

// `from './x'` and `import('./x')` in emitted code and declarations: one line each, known shapes.
const RELATIVE = /(\bfrom\s+|\bimport\s*\(\s*|^import\s+)(['"])(\.\.?\/[^'"]+?)\2/gm;

/** Gives every relative import of the ES module files in `dir` its `.js`, and marks the folder as ES modules. */
function completeEsm(dir) {
    for (const name of Fs.readdirSync(dir)) {
        if (name.endsWith('.js') || name.endsWith('.d.ts')) {
            const file = Path.join(dir, name);
            const text = Fs.readFileSync(file, 'utf8');
            Fs.writeFileSync(file, text.replace(RELATIVE, (_m, lead, quote, path) => `${lead}${quote}${path.endsWith('.js') ? path : `${path}.js`}${quote}`));
        }
    }

    Fs.writeFileSync(Path.join(dir, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
}

Fs.rmSync(OUT, { recursive: true, force: true });
Fs.rmSync(ROOT_ESM, { recursive: true, force: true });
const clientProject = Path.join(ROOT, 'tsconfig.client.json');
tsc(clientProject, 'ES2022', Path.join(OUT, 'esm'));
completeEsm(Path.join(OUT, 'esm'));
Fs.cpSync(Path.join(OUT, 'esm'), ROOT_ESM, { recursive: true });
tsc(clientProject, 'CommonJS', Path.join(OUT, 'cjs'));
// Explicit, so a `"type": "module"` above the installed package never reinterprets it.
Fs.writeFileSync(Path.join(OUT, 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);

// The fixture imports the client by the package's own name, resolved to the build above
// (the paths of packages/client/tsconfig.json) and, once installed, by Node's self-reference.
const fixtureProject = Path.join(PACKAGE, 'tsconfig.json');
tsc(fixtureProject, 'ES2022', Path.join(OUT, 'esm'));
tsc(fixtureProject, 'CommonJS', Path.join(OUT, 'cjs'));
