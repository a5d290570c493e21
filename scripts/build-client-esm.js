'use strict';

// The ES module build of inbox-capture/client (dist/client-esm), for `import` in Node
// and for browsers. tsc emits the relative imports as written (`./errors`); ES modules
// need the file's name (`./errors.js`), so they are completed here. The sources stay
// extension-free because the CommonJS build and the TypeScript test runner load them.

const ChildProcess = require('node:child_process');
const Fs = require('node:fs');
const Path = require('node:path');

const ROOT = Path.join(__dirname, '..');
const OUT = Path.join(ROOT, 'dist', 'client-esm');

Fs.rmSync(OUT, { recursive: true, force: true });
ChildProcess.execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', Path.join(ROOT, 'tsconfig.client-esm.json')], { stdio: 'inherit' });

// `from './x'` and `import('./x')` in emitted code and declarations: one line each, known shapes.
const RELATIVE = /(\bfrom\s+|\bimport\s*\(\s*|^import\s+)(['"])(\.\.?\/[^'"]+?)\2/gm;
for (const name of Fs.readdirSync(OUT)) {
    if (name.endsWith('.js') || name.endsWith('.d.ts')) {
        const file = Path.join(OUT, name);
        const text = Fs.readFileSync(file, 'utf8');
        Fs.writeFileSync(file, text.replace(RELATIVE, (_m, lead, quote, path) => `${lead}${quote}${path.endsWith('.js') ? path : `${path}.js`}${quote}`));
    }
}

Fs.writeFileSync(Path.join(OUT, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
