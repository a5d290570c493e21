/**
 * The relay's probe shapes (docs/api.md, "Release" and "Auto-relay"): a relay that leads
 * back to the service, local parts that route onwards past a domain allow-list, and a
 * relay that refuses.
 */

import * as Net from 'node:net';
import { startSmtpSink, type SmtpSink } from '../test/helpers/smtp-sink';
import { freePort } from '../test/helpers/net';
import { startWebhookReceiver, type WebhookReceiver } from '../test/helpers/webhook-receiver';
import { countListed, startStandalone, type Standalone } from './standalone';
import { deliver, describeAnswer, probeMessage, request, sleep, withParts, type Probe } from './hardening-probe';

/** How long the loop is watched, s (the security probe watched 20). */
const LOOP_SECONDS = { full: 20, smoke: 5 };

/** A TCP hop in front of a port that counts the messages sent through it. */
interface CountingHop {
    port: number;
    /** `MAIL FROM` commands seen so far: one a message the relay sent back. */
    messages(): number;
    close(): Promise<void>;
}

/** Starts a hop on a free loopback port that passes every byte on to `targetPort` and counts `MAIL FROM`. */
async function startCountingHop(targetPort: number): Promise<CountingHop> {
    let messages = 0;
    const sockets = new Set<Net.Socket>();
    const server = Net.createServer((client) => {
        const upstream = Net.connect(targetPort, '127.0.0.1');
        for (const socket of [client, upstream]) {
            sockets.add(socket);
            socket.on('close', () => sockets.delete(socket));
        }

        // A command line comes in one write: counting within each chunk is enough here.
        client.on('data', (chunk: Buffer) => {
            messages += chunk.toString('latin1').match(/^MAIL FROM:/gim)?.length ?? 0;
        });
        client.pipe(upstream).on('error', () => client.destroy());
        upstream.pipe(client).on('error', () => upstream.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as Net.AddressInfo).port,
        messages: () => messages,
        close: () => new Promise<void>((resolve) => {
            sockets.forEach((s) => s.destroy());
            server.close(() => resolve());
        })
    };
}

// 1. The relay leads back to the service's own SMTP port: every copy relayed again?
const relayLoop: Probe = {
    item: 1,
    title: 'auto-relay back into the service',
    run: ({ root, size }) => withParts(async ({ add }) => {
        const seconds = LOOP_SECONDS[size];
        const smtpPort = await freePort();
        const hop: CountingHop = add(await startCountingHop(smtpPort));
        const hooks: WebhookReceiver = add(await startWebhookReceiver());
        const service: Standalone = add(await startStandalone({
            root,
            smtpPort,
            env: {
                INBOX_CAPTURE_RELAY_URL: `smtp://127.0.0.1:${hop.port}`,
                INBOX_CAPTURE_RELAY_ALLOW: '*@loop.test',
                INBOX_CAPTURE_RELAY_AUTO_MATCH: 'subject:loop',
                INBOX_CAPTURE_WEBHOOK_URL: hooks.url('/hook')
            }
        }));
        await deliver(smtpPort, probeMessage('loop-1@shop.test', 'x@loop.test', 'loop 1'), 'x@loop.test');
        const now = () => ({ relayed: hop.messages(), posts: hooks.received.length });
        await sleep(seconds * 500);
        const half = now();
        await sleep(seconds * 500);
        const end = now();
        // Each copy that comes back is delivered again (one capture, one webhook POST); a copy of the same Message-ID in one inbox is listed once.
        const listed = await countListed(service.base, service.apiKey, 'x');
        return {
            sent: `relay smtp://127.0.0.1:<a hop counting MAIL FROM, then the service's own SMTP port>, allow \`*@loop.test\`, auto-match \`subject:loop\`, a webhook; one mail to x@loop.test, watched ${seconds} s`,
            answer: `SMTP 250; relayed back ${half.relayed} times at ${seconds / 2} s, ${end.relayed} at ${seconds} s; webhook POSTs ${half.posts}, ${end.posts}; listed in inbox x: ${listed}`,
            figure: `${end.relayed + 1} deliveries (1 + ${end.relayed} relayed back), ${end.posts} webhook POSTs in ${seconds} s (${end.relayed > half.relayed || end.posts > half.posts ? 'still rising' : 'stopped'})`
        };
    })
};

/** What a sink received, as envelope recipients. */
function sunk(sink: SmtpSink): string {
    return sink.received.length === 0 ? 'nothing' : sink.received.map((m) => m.to.join(' ')).join('; ');
}

// 4. Local parts that route onwards (% and !) under a domain the allow-list names.
const routedLocalParts: Probe = {
    item: 4,
    title: 'release to % and ! local parts',
    run: ({ root }) => withParts(async ({ add }) => {
        const sink: SmtpSink = add(await startSmtpSink());
        const service: Standalone = add(await startStandalone({ root, env: { INBOX_CAPTURE_RELAY_URL: sink.url(), INBOX_CAPTURE_RELAY_ALLOW: '*@allowed.test' } }));
        await deliver(service.smtpPort, probeMessage('release-me@shop.test', 'user@allowed.test', 'release me'), 'user@allowed.test');
        const answers: string[] = [];
        const received: string[] = [];
        for (const to of ['evil%evil.test@allowed.test', 'evil!evil.test@allowed.test']) {
            const before = sink.received.length;
            answers.push(`${to}: ${describeAnswer(await request(service, service.apiKey, 'POST', '/v1/emails/release-me%40shop.test/release', { to: [to] }))}`);
            received.push(`${sink.received.length - before} message(s)`);
        }

        // The same address captured over SMTP, released to its own recipient (no `to`).
        const captured = 'evil%evil.test@allowed.test';
        await deliver(service.smtpPort, probeMessage('captured-pct@shop.test', captured, 'captured'), captured);
        answers.push(`captured to ${captured}, release without to: ${describeAnswer(await request(service, service.apiKey, 'POST', '/v1/emails/captured-pct%40shop.test/release'))}`);
        return {
            sent: 'allow-list `*@allowed.test`, an SMTP sink as relay; `POST .../release` with `to` of each shape, then a copy captured to the % address released without `to`',
            answer: answers.join('; '),
            figure: `the sink received ${sunk(sink)}`
        };
    })
};

/** The password in the probe's relay URL: it must never reach the log. */
const RELAY_PASSWORD = 's3cret-Pa55-probe';

// 7. A relay that refuses: is its reply in the service's log (and never the password)?
const refusedRelay: Probe = {
    item: 7,
    title: 'release to a relay that answers 554',
    run: ({ root }) => withParts(async ({ add }) => {
        const sink: SmtpSink = add(await startSmtpSink({ auth: { user: 'relay-user', pass: RELAY_PASSWORD } }));
        sink.refuseNext(554, 1);
        const service: Standalone = add(await startStandalone({ root, env: { INBOX_CAPTURE_RELAY_URL: sink.url('relay-user', RELAY_PASSWORD), INBOX_CAPTURE_RELAY_ALLOW: '*@example.org' } }));
        await deliver(service.smtpPort, probeMessage('refused@shop.test', 'alice@example.org', 'release me'), 'alice@example.org');
        const answer = await request(service, service.apiKey, 'POST', '/v1/emails/refused%40shop.test/release');
        const log = () => `${service.stdout()}\n${service.stderr()}`;
        // The log line may follow the answer by a moment; 3 s is far more than that.
        for (let waited = 0; waited < 3000 && !log().includes('Refused by the test relay'); waited += 100) {
            await sleep(100);
        }

        // The end of the line that holds the relay's reply: the reply, and what the service said before it.
        const line = log().split('\n').find((l) => l.includes('Refused by the test relay'))?.trim();
        return {
            sent: `relay smtp://relay-user:<password>@127.0.0.1:<sink> answering 554 to DATA; \`POST .../release\` of a captured mail`,
            answer: describeAnswer(answer),
            figure: `relay's reply in stdout/stderr: ${line ? `yes ("…${line.slice(-140)}")` : 'no'}; password in them: ${log().includes(RELAY_PASSWORD) ? 'YES' : 'no'}`
        };
    })
};

/** The probes of this file, by item. */
export const RELAY_PROBES: Probe[] = [relayLoop, routedLocalParts, refusedRelay];
