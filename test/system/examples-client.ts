import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { runNode } from '../helpers/child-process';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';

// The client examples run as a user runs them (node --test) against the standalone
// service; the README shows exactly the Playwright one, which
// test/system/playwright-fixture.ts runs. They read `codes` and `links` (docs/api.md, "Links and codes").

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');

/** Runs one example with node's test runner against the service; answers its TAP output. */
async function runExample(service: StandaloneService, file: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, INBOX_CAPTURE_URL: service.baseUrl, INBOX_CAPTURE_API_KEY: service.apiKey, SMTP_PORT: String(service.smtpPort) };
    // Set when this runs under node --test itself: the child would report to the parent instead.
    delete env.NODE_TEST_CONTEXT;
    const result = await runNode(['--test', '--test-reporter=tap', Path.join('examples', file)], { cwd: ROOT, env });
    expect(result.code, `${result.stdout}\n${result.stderr}`).to.equal(0);
    return result.stdout;
}

describe('client examples', () => {
    let service: StandaloneService;

    before(async () => {
        service = await startStandalone();
    });

    after(() => service?.stop());

    it('examples/signup.test.js passes against the standalone service', async () => {
        const tap = await runExample(service, 'signup.test.js');
        expect(tap).to.match(/^# pass 1$/m);
        expect(tap).to.match(/^# fail 0$/m);
    });

    it('examples/signup.browser.test.js (Playwright) passes against the standalone service', async () => {
        const tap = await runExample(service, 'signup.browser.test.js');
        expect(tap).to.match(/^# pass 1$/m);
        expect(tap).to.match(/^# fail 0$/m);
    });

    it('README shows examples/signup.playwright.spec.js exactly', async () => {
        const readme = await Fs.readFile(Path.join(ROOT, 'README.md'), 'utf8');
        const file = await Fs.readFile(Path.join(ROOT, 'examples', 'signup.playwright.spec.js'), 'utf8');
        const start = '// examples/signup.playwright.spec.js';
        const block = readme.split(/^```js\n/m).slice(1).map((rest) => rest.slice(0, rest.indexOf('```'))).find((code) => code.startsWith(start));
        expect(block, `a \`\`\`js block starting with ${start}`).to.exist();
        expect(block).to.equal(file);
    });
});
