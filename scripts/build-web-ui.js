'use strict';

// The web interface (docs/ui.md) in dist/web-ui: its TypeScript compiled by tsc to ES
// modules under js/ (with the typed client it uses, adapters/client), and its static
// files (HTML, CSS) copied beside them. No bundler: the browser loads the modules as
// they are, so relative imports get their `.js` here, as in build-client.js.

const ChildProcess = require('node:child_process');
const Fs = require('node:fs');
const Path = require('node:path');

const ROOT = Path.join(__dirname, '..');
const SOURCE = Path.join(ROOT, 'adapters', 'web-ui');
const OUT = Path.join(ROOT, 'dist', 'web-ui');
const STATIC = ['.html', '.css', '.svg'];

Fs.rmSync(OUT, { recursive: true, force: true });
ChildProcess.execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', Path.join(ROOT, 'tsconfig.web-ui.json')], { stdio: 'inherit' });

const RELATIVE = /(\bfrom\s+|\bimport\s*\(\s*|^import\s+)(['"])(\.\.?\/[^'"]+?)\2/gm;
for (const dir of ['web-ui', 'client']) {
    const full = Path.join(OUT, 'js', dir);
    for (const name of Fs.readdirSync(full)) {
        if (name.endsWith('.js')) {
            const file = Path.join(full, name);
            const text = Fs.readFileSync(file, 'utf8');
            Fs.writeFileSync(file, text.replace(RELATIVE, (_m, lead, quote, path) => `${lead}${quote}${path.endsWith('.js') ? path : `${path}.js`}${quote}`));
        }
    }
}

for (const name of Fs.readdirSync(SOURCE)) {
    if (STATIC.includes(Path.extname(name))) {
        Fs.copyFileSync(Path.join(SOURCE, name), Path.join(OUT, name));
    }
}
