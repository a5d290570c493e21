import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { runNode } from '../helpers/child-process';
import { isolatedEnv } from '../helpers/service-env';
import { startStandalone, type StandaloneService } from '../helpers/standalone-service';
import { removeDir, tempDir } from '../helpers/temp-dir';

const { expect } = Code;
const { describe, it, before, after } = exports.lab = Lab.script();

const ROOT = Path.join(__dirname, '..', '..');

/** A linter's command-line program, from its package's `bin`. */
function binOf(pkg: string, name: string): string {
    const manifest = Path.join(ROOT, 'node_modules', pkg, 'package.json');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { bin } = require(manifest) as { bin: Record<string, string> };
    return Path.join(Path.dirname(manifest), bin[name]);
}

/**
 * Warnings the served document may carry, each for a reason; any other rule's warning
 * fails, so a route added later is held to the rest. Errors are never allowed.
 */
const ACCEPTED_WARNINGS: Record<string, Record<string, string>> = {
    redocly: {
        // /health, /version, /openapi.json and /docs answer nothing but 200.
        'operation-4xx-response': 'a public route that answers no client error',
        // The raw and attachment downloads answer 302 to a signed link, by design.
        'operation-2xx-response': 'a download answers 302'
    },
    spectral: {
        // A service people run themselves has no one contact to name.
        'info-contact': 'no contact in info'
    }
};

interface Finding {
    rule: string;
    severity: 'error' | 'warning' | 'other';
    where: string;
}

const REDOCLY_SEVERITY: Record<string, Finding['severity']> = { error: 'error', warn: 'warning' };
// Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
const SPECTRAL_SEVERITY = ['error', 'warning', 'other', 'other'] as const;

describe('the served /openapi.json under OpenAPI linters', () => {

    let service: StandaloneService;
    let dir: string;
    let document: string;

    before(async () => {
        service = await startStandalone();
        dir = await tempDir('openapi-lint');
        const res = await fetch(`${service.baseUrl}/openapi.json`);
        expect(res.status).to.equal(200);
        document = Path.join(dir, 'openapi.json');
        await Fs.writeFile(document, await res.text());
    });

    after(async () => {
        await service?.stop();
        if (dir) {
            await removeDir(dir);
        }
    });

    /** Runs a linter; its JSON report, whatever its exit code (non-zero on errors). */
    async function lint(args: string[], env: Record<string, string> = {}): Promise<string> {
        const result = await runNode(args, { cwd: dir, env: isolatedEnv(env) });
        expect(result.stdout.trimStart(), `${args.join(' ')}: ${result.stderr}`).to.match(/^[[{]/);
        return result.stdout;
    }

    it('passes `redocly lint` with its recommended rules: no error, only the warnings said why', { timeout: 60_000 }, async () => {
        // No telemetry or update check: this machine, like CI, reaches no such host.
        const out = await lint([binOf('@redocly/cli', 'redocly'), 'lint', '--extends=recommended', '--format=json', document], { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' });
        const report = JSON.parse(out) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; location: Array<{ pointer: string }> }> };
        const findings: Finding[] = report.problems.map((p) => ({
            rule: p.ruleId,
            severity: REDOCLY_SEVERITY[p.severity] ?? 'other',
            where: p.location[0]?.pointer ?? ''
        }));
        expect(findings.filter((f) => f.severity === 'error')).to.equal([]);
        expect(report.totals.errors).to.equal(0);
        expect(findings.filter((f) => f.severity === 'warning' && !(f.rule in ACCEPTED_WARNINGS.redocly))).to.equal([]);
    });

    it('passes Spectral\'s `spectral:oas`: no error, only the warnings said why', { timeout: 60_000 }, async () => {
        const ruleset = Path.join(dir, '.spectral.yaml');
        await Fs.writeFile(ruleset, 'extends: ["spectral:oas"]\n');
        const out = await lint([binOf('@stoplight/spectral-cli', 'spectral'), 'lint', '--format=json', `--ruleset=${ruleset}`, document]);
        const findings: Finding[] = (JSON.parse(out) as Array<{ code: string; severity: number; path: string[] }>).map((p) => ({
            rule: p.code,
            severity: SPECTRAL_SEVERITY[p.severity] ?? 'other',
            where: p.path.join('.')
        }));
        expect(findings.filter((f) => f.severity === 'error')).to.equal([]);
        expect(findings.filter((f) => f.severity === 'warning' && !(f.rule in ACCEPTED_WARNINGS.spectral))).to.equal([]);
    });
});
