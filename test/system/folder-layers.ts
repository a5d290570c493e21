import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import { cruise, ROOT } from '../helpers/dependency-cruise';
import { layerOffences, parseLayerPicture } from '../helpers/folder-layers';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('folder layers', () => {

    it('docs/design.md opens with the layers of lib/, lib/record-store/ and adapters/, and the tree keeps to them', async () => {
        const design = Fs.readFileSync(Path.join(ROOT, 'docs', 'design.md'), 'utf8');
        const blocks = parseLayerPicture(design);
        expect(blocks.map((b) => b.base)).to.equal(['lib', 'lib/record-store', 'adapters']);
        // The picture is in the first section, before anything it orders is described.
        const sections = [...design.matchAll(/^## .*$/gm)];
        expect(sections[0][0]).to.equal('## The layers');
        expect(design.indexOf('```text')).to.be.between(sections[0].index!, sections[1].index!);

        const result = await cruise(['lib', 'adapters']);
        expect(layerOffences(ROOT, '', blocks, result)).to.equal([]);
        // The check saw the tree: every folder of lib/ and adapters/ is a line's item.
        expect(blocks[0].lines.flat().filter((item) => item.endsWith('/')).length).to.be.above(14);
        expect(result.modules.filter((m) => /^(lib|adapters)\//.test(m.source)).length).to.be.above(150);
    });

    it('finds a name that is not in the tree, an item not in the picture, an import on its own line or upwards, and README.md lines that do not match', async () => {
        const fixture = 'test/fixtures/folder-layers';
        const blocks = parseLayerPicture(Fs.readFileSync(Path.join(ROOT, fixture, 'design.md'), 'utf8'));
        expect(blocks).to.equal([{ base: 'lib', lines: [['top/'], ['middle/', 'side/'], ['bottom/', 'gone/'], ['base.ts']] }]);
        const result = await cruise([`${fixture}/lib`]);
        expect(layerOffences(ROOT, fixture, blocks, result)).to.equal([
            'lib/gone/: in the picture, not in the tree',
            'lib/extra/: in the tree, not in the picture',
            `${fixture}/lib/bottom/bottom.ts → ${fixture}/lib/top/top.ts: bottom/ imports top/, on a line above`,
            `${fixture}/lib/middle/middle.ts → ${fixture}/lib/side/side.ts: middle/ imports side/, on its own line`,
            'lib/middle/README.md: may import top/, which is not below it',
            'lib/middle/README.md: leaves out base.ts, which it imports',
            'lib/middle/README.md: leaves out side/, which it imports',
            'lib/side/README.md: no "May import:" line',
            'lib/bottom/README.md: leaves out top/, which it imports'
        ]);
    });
});
