import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { cruise, type Cruise } from '../helpers/dependency-cruise';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Each cycle once, as `a.ts → b.ts → a.ts`, starting from its first file by name. */
function cyclesOf(result: Cruise): string[] {
    const cycles = new Set<string>();
    for (const module of result.modules) {
        for (const dependency of module.dependencies) {
            if (dependency.circular) {
                const files = (dependency.cycle ?? []).map((step) => step.name);
                const start = files.indexOf([...files].sort()[0]);
                const ordered = [...files.slice(start), ...files.slice(0, start)];
                cycles.add([...ordered, ordered[0]].join(' → '));
            }
        }
    }

    return [...cycles].sort();
}

describe('import cycles', () => {

    it('lib/ and adapters/ have none, `import type` counted', async () => {
        const result = await cruise(['lib', 'adapters']);
        expect(cyclesOf(result)).to.equal([]);
        expect(result.modules.filter((module) => /^(lib|adapters)\//.test(module.source)).length).to.be.above(150);
    });

    it('finds a cycle made of `import type` alone', async () => {
        const result = await cruise(['test/fixtures/type-cycle']);
        expect(cyclesOf(result)).to.equal(['test/fixtures/type-cycle/a.ts → test/fixtures/type-cycle/b.ts → test/fixtures/type-cycle/a.ts']);
    });
});
