/**
 * The fault rules' probe shapes (docs/api.md, "Faults"): a `times` rule two instances on
 * one Postgres must count together, and the limit on how many rules are kept.
 */

import { SmtpSession } from './smtp-client';
import { startStandalone, type Standalone } from './standalone';
import { createKey, describeAnswer, inBatches, PROBE_FROM, request, tally, withParts, type Probe } from './hardening-probe';

/** Rules asked for at once while filling (each create may wait for the other instances to see it). */
const CREATE_WIDTH = 50;

/** The sizes of the limit probe: rules the prefix key makes, rules made before the burst, the burst. */
const LIMIT_SIZES = {
    full: { prefixRules: 1000, fill: 990, burst: 200 },
    smoke: { prefixRules: 110, fill: 90, burst: 20 }
};

/** An SMTP session past MAIL FROM, ready for RCPTs. */
async function envelope(smtpPort: number): Promise<SmtpSession> {
    const session = await SmtpSession.open(smtpPort);
    await session.command(`MAIL FROM:<${PROBE_FROM}>`, 250);
    return session;
}

// 3. A `times: 2` rule made through A; RCPTs alternately to B and A.
const rulesAcrossInstances: Probe = {
    item: 3,
    title: 'a times: 2 rule, two instances on one Postgres',
    run: async ({ root, postgres }) => {
        const databaseUrl = await (await postgres()).createDatabase();
        return withParts(async ({ add }) => {
            // One after the other: each start migrates the shared database first.
            const a: Standalone = add(await startStandalone({ root, databaseUrl }));
            const b: Standalone = add(await startStandalone({ root, databaseUrl }));
            const sessions = { a: await envelope(a.smtpPort), b: await envelope(b.smtpPort) };
            add({ close: async () => {
                await sessions.a.close();
                await sessions.b.close();
            } });
            // Each instance has just read the rules (none), as a busy one would have.
            await sessions.a.command('RCPT TO:<warm@example.test>', 250);
            await sessions.b.command('RCPT TO:<warm@example.test>', 250);
            const created = await request(a, a.apiKey, 'POST', '/v1/faults', { stage: 'rcpt', match: { inbox: 'flaky' }, reply: { code: 450 }, times: 2 });
            const codes: number[] = [];
            for (const which of ['b', 'a', 'b', 'a'] as const) {
                codes.push((await sessions[which].command('RCPT TO:<flaky@example.test>')).code);
            }

            return {
                sent: 'two standalones on one Postgres; `POST /v1/faults` {stage: rcpt, match: {inbox: flaky}, reply: {code: 450}, times: 2} through A, then `RCPT TO:<flaky@…>` to B, A, B, A',
                answer: `create: ${created.status}; RCPTs: ${codes.join(', ')}`,
                figure: `B, A, B, A: ${codes.join(', ')}`
            };
        });
    }
};

/** A rule for `inbox` no mail of the probe meets. */
const ruleFor = (inbox: string) => ({ stage: 'rcpt', match: { inbox }, reply: { code: 451 } });

// 5. The limit on rules: a prefix key fills it, the unscoped key is next; a burst at the limit.
const ruleLimit: Probe = {
    item: 5,
    title: 'the fault-rule limit',
    run: ({ root, size }) => withParts(async ({ add }) => {
        const { prefixRules, fill, burst } = LIMIT_SIZES[size];
        const service: Standalone = add(await startStandalone({ root }));
        const prefixKey = await createKey(root, service, 'probe-prefix', ['--inbox-prefix', 'limit-']);
        const create = (key: string, inbox: string) => request(service, key, 'POST', '/v1/faults', ruleFor(inbox));
        const made = await inBatches(prefixRules, CREATE_WIDTH, async (i) => (await create(prefixKey, `limit-${i}`)).status);
        const next = await create(prefixKey, `limit-${prefixRules}`);
        const unscoped = await create(service.apiKey, 'other-0');

        await request(service, service.apiKey, 'DELETE', '/v1/faults');
        await inBatches(fill, CREATE_WIDTH, (i) => create(service.apiKey, `fill-${i}`));
        const listed = async () => (JSON.parse((await request(service, service.apiKey, 'GET', '/v1/faults')).text) as { faults: unknown[] }).faults.length;
        const before = await listed();
        const racing = await Promise.all(Array.from({ length: burst }, (_, i) => create(service.apiKey, `burst-${i}`).then((a) => a.status)));
        const left = await listed();
        return {
            sent: `a key with --inbox-prefix limit- makes ${prefixRules} rules (${CREATE_WIDTH} at a time), then rule ${prefixRules + 1}; the unscoped key's next rule; all deleted, ${fill} made, then ${burst} concurrent creates`,
            answer: `prefix key: ${tally(made)}; rule ${prefixRules + 1}: ${describeAnswer(next)}; unscoped: ${describeAnswer(unscoped)}; the ${burst}: ${tally(racing)}`,
            figure: `rules ${prefixRules + 1} and unscoped: ${next.status}, ${unscoped.status}; ${burst} concurrent at ${before}: ${left} rules left`
        };
    })
};

/** The probes of this file, by item. */
export const FAULT_RULE_PROBES: Probe[] = [rulesAcrossInstances, ruleLimit];
