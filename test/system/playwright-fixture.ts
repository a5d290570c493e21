import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { chromiumForChild } from '../helpers/browser';
import { run } from '../helpers/child-process';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';
import { specsOf, type PlaywrightReport } from '../helpers/playwright-report';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');

describe('inbox-capture-client/playwright, run by `npx playwright test` in a real browser', () => {

    let service: StandaloneService;
    let work: string;

    before(async () => {
        service = await startStandalone();
        work = await tempDir('playwright');
    });

    after(async () => {
        await service?.stop();
        if (work) {
            await removeDir(work);
        }
    });

    it('passes the example and the fixture\'s checks: an inbox per test, from the environment or the option, deleted after it', { timeout: 120_000 }, async () => {
        const chromium = await chromiumForChild();
        const reportFile = Path.join(work, 'report.json');
        const env: NodeJS.ProcessEnv = {
            ...process.env,
            ...chromium.env,
            CHROMIUM_PATH: chromium.executablePath,
            INBOX_CAPTURE_URL: service.baseUrl,
            INBOX_CAPTURE_API_KEY: service.apiKey,
            INBOX_CAPTURE_MAIL_DOMAIN: 'env.test',
            SMTP_PORT: String(service.smtpPort),
            PLAYWRIGHT_JSON_OUTPUT_NAME: reportFile,
            PLAYWRIGHT_OUTPUT_DIR: Path.join(work, 'results'),
            // Playwright prints in colour to a terminal, and reads CI to forbid test.only.
            FORCE_COLOR: '0'
        };
        const result = await run('npx', ['playwright', 'test', '-c', Path.join('test', 'playwright', 'playwright.config.js'), '--reporter=list,json'], { cwd: ROOT, env });
        expect(result.code, `${result.stdout}\n${result.stderr}`).to.equal(0);

        const report = JSON.parse(await Fs.readFile(reportFile, 'utf8')) as PlaywrightReport;
        expect(report.stats).to.include({ expected: 5, unexpected: 0, flaky: 0, skipped: 0 });
        const specs = specsOf(report);
        expect(specs.map((s) => s.title).sort()).to.equal([
            'a person signs up, types the mailed code and clicks the mailed link',
            'a test gets an inbox at the domain of INBOX_CAPTURE_MAIL_DOMAIN and reads its mail',
            'a test that does not ask for an inbox gets none',
            'the next test gets another inbox',
            'the option wins over the environment'
        ]);
        expect(specs.every((s) => s.ok)).to.be.true();

        // Three tests, three inboxes, each of which held its mail, and none is left.
        const inboxes = specs.flatMap((s) => s.annotations.filter((a) => a.type === 'inbox').map((a) => a.description!));
        expect(new Set(inboxes).size).to.equal(3);
        const listed = await fetch(`${service.baseUrl}/v1/inboxes`, { headers: { authorization: `Bearer ${service.apiKey}` } });
        expect(((await listed.json()) as { inboxes: unknown[] }).inboxes).to.equal([]);
    });
});
