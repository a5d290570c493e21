import * as Fs from 'node:fs';
import * as Net from 'node:net';
import * as Nodemailer from 'nodemailer';
import * as Nodemailer10 from 'nodemailer10';
import { startMailDev, type MailDev } from './maildev';
import { runBench, type BenchArgs, type TargetCheck } from './report';
import { startStandalone, type Standalone } from './standalone';
import { fmt, median, quantile } from './stats';

/**
 * What a test suite feels: nodemailer's default transport (a new
 * connection per mail), one mail at a time, `sendMail()` called → resolved; and the test
 * author's loop on ours: a long-poll waiting on the inbox, then `sendMail()`, until the
 * long-poll answers with the mail. Ours (the standalone, embedded default), MailDev 3.0.0
 * and 2.2.1, alternating, rounds in another order each time; each with the current
 * nodemailer (10.6.0) and with 6.10.1, whose second write of a message waits for the
 * server's delayed acknowledgement (Nagle's algorithm).
 */

/** Mails per server and round. */
const MAILS = 200;
const ROUNDS = 3;
/**
 * Targets, with the current nodemailer: send latency p50 no worse than before the small-mail
 * fast path (ms), and as a share of each MailDev's; the loop's p50 (ms).
 */
const SEND_P50_MS = 3.7;
const SEND_VS_MAILDEV = 0.05;
const LOOP_P50_MS = 5;

/** The nodemailer versions measured: the current one (a package alias) and the 6.x the project depends on. */
type NodemailerModule = typeof Nodemailer;
const versionOf = (pkg: string) => (JSON.parse(Fs.readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
const CLIENTS: Array<{ name: string; module: NodemailerModule }> = [
    { name: `nodemailer ${versionOf('nodemailer10')}`, module: Nodemailer10 },
    { name: `nodemailer ${versionOf('nodemailer')}`, module: Nodemailer }
];
/** How long the long-poll is given to reach its waiting state before the mail is sent, ms (not counted). */
const LONG_POLL_SETTLE_MS = 20;

interface Server {
    name: string;
    smtpPort: number;
    client: NodemailerModule;
    /** The client's socket with TCP_NODELAY (nodemailer's `getSocket`): a diagnostic, not what a test suite uses. */
    noDelay?: boolean;
}

/** A nodemailer transport to `server`: the default one, or one whose sockets have Nagle's algorithm off. */
function transportTo(server: Server): Nodemailer.Transporter {
    if (!server.noDelay) {
        return server.client.createTransport({ host: '127.0.0.1', port: server.smtpPort });
    }

    return server.client.createTransport({
        host: '127.0.0.1',
        port: server.smtpPort,
        getSocket(_options: unknown, callback: (err: Error | null, socket?: { connection: Net.Socket }) => void) {
            const socket = Net.connect(server.smtpPort, '127.0.0.1', () => {
                socket.setNoDelay(true);
                callback(null, { connection: socket });
            });
            socket.once('error', (err) => callback(err));
        }
    } as Parameters<typeof Nodemailer.createTransport>[0]);
}

/** ms of each `sendMail()` (called → resolved), one after another; the default transport opens a connection per mail. */
async function sendLatencies(server: Server, count: number, tag: string): Promise<number[]> {
    const transport = transportTo(server);
    const times: number[] = [];
    try {
        for (let i = 0; i < count; i++) {
            const started = process.hrtime.bigint();
            await transport.sendMail({ from: 'suite@bench.test', to: `sl-${tag}@bench.test`, subject: `send ${i}`, text: `mail ${i} of the send latency bench` });
            times.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
    }
    finally {
        transport.close();
    }

    return times;
}

/** ms from `sendMail()` called to the waiting long-poll's answer, a fresh inbox each time (ours only: MailDev has no long-poll). */
async function loopLatencies(service: Standalone, client: NodemailerModule, count: number, tag: string): Promise<number[]> {
    const transport = client.createTransport({ host: '127.0.0.1', port: service.smtpPort });
    const times: number[] = [];
    try {
        for (let i = 0; i < count; i++) {
            const inbox = `loop-${tag}-${i}`;
            const answered = fetch(`${service.base}/v1/emails?inbox=${inbox}&wait=true&timeout=10`, { headers: { authorization: `Bearer ${service.apiKey}` } })
                .then(async (response) => ({ at: process.hrtime.bigint(), body: await response.json() as { emails: unknown[] } }));
            await new Promise((resolve) => setTimeout(resolve, LONG_POLL_SETTLE_MS));
            const started = process.hrtime.bigint();
            await transport.sendMail({ from: 'suite@bench.test', to: `${inbox}@bench.test`, subject: `loop ${i}`, text: 'the code is 123456' });
            const { at, body } = await answered;
            if (body.emails.length !== 1) {
                throw new Error(`the long-poll of ${inbox} answered ${body.emails.length} emails`);
            }

            times.push(Number(at - started) / 1e6);
        }
    }
    finally {
        transport.close();
    }

    return times;
}

const p = (values: number[], q: number) => quantile([...values].sort((a, b) => a - b), q);

async function bench(args: BenchArgs) {
    const mails = args.smoke ? 5 : Number(args.values.mails ?? MAILS);
    const rounds = args.smoke ? 1 : Number(args.values.rounds ?? ROUNDS);
    const tag = Date.now().toString(36);
    const started: Array<{ stop(): Promise<void> }> = [];
    const send = new Map<string, number[][]>();
    const loop = new Map<string, number[][]>();
    try {
        const ours = await startStandalone();
        started.push(ours);
        const maildev3: MailDev = await startMailDev('3.0.0');
        started.push(maildev3);
        const maildev2: MailDev = await startMailDev('2.2.1');
        started.push(maildev2);
        const servers: Server[] = CLIENTS.flatMap(({ name: client, module }) => [
            { name: `ours (SQLite, embedded default), ${client}`, smtpPort: ours.smtpPort, client: module },
            { name: `MailDev 3.0.0, ${client}`, smtpPort: maildev3.smtpPort, client: module },
            { name: `MailDev 2.2.1, ${client}`, smtpPort: maildev2.smtpPort, client: module }
        ]);
        servers.push({ name: `ours, ${CLIENTS[1]!.name} with TCP_NODELAY on its socket (diagnostic)`, smtpPort: ours.smtpPort, client: Nodemailer, noDelay: true });
        // Warm-up: JIT, the service's workers and connections.
        for (const server of servers) {
            await sendLatencies(server, args.smoke ? 1 : 20, `w${tag}`);
        }

        // A fresh inbox per client too: each loop must find only its own mail.
        for (const [i, { module }] of CLIENTS.entries()) {
            await loopLatencies(ours, module, args.smoke ? 1 : 10, `w${tag}c${i}`);
        }

        for (let round = 0; round < rounds; round++) {
            for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
                const times = await sendLatencies(server, mails, `${tag}r${round}`);
                send.set(server.name, [...send.get(server.name) ?? [], times]);
                console.error(`send latency | round ${round} | ${server.name} | p50 ${fmt(p(times, 0.5))} ms`);
            }

            for (const [i, { name, module }] of round % 2 === 0 ? [...CLIENTS.entries()] : [...CLIENTS.entries()].reverse()) {
                const times = await loopLatencies(ours, module, mails, `${tag}r${round}c${i}`);
                loop.set(name, [...loop.get(name) ?? [], times]);
                console.error(`test author's loop | round ${round} | ${name} | p50 ${fmt(p(times, 0.5))} ms`);
            }
        }
    }
    finally {
        for (const server of started.reverse()) {
            await server.stop();
        }
    }

    const names = [...send.keys()];
    const current = CLIENTS[0]!.name;
    const oursName = (client: string) => `ours (SQLite, embedded default), ${client}`;
    const p50s = (name: string) => send.get(name)!.map((times) => p(times, 0.5));
    const ratio = (peer: string, client: string) => median(p50s(oursName(client)).map((ours, i) => ours / p50s(`${peer}, ${client}`)[i]!));
    const rows = names.map((name) => {
        const all = send.get(name)!.flat();
        return [name, fmt(median(p50s(name))), fmt(p(all, 0.9)), fmt(p(all, 0.99)), String(all.length)];
    });
    const loopP50 = (client: string) => median(loop.get(client)!.map((times) => p(times, 0.5)));
    const oursP50 = median(p50s(oursName(current)));
    const judge = (met: boolean) => (args.smoke ? null : met);
    const [md3, md2] = [ratio('MailDev 3.0.0', current), ratio('MailDev 2.2.1', current)];
    const targets: TargetCheck[] = [
        { target: `send latency (${current}'s default transport, sendMail → resolved): ours p50 ≤ ${SEND_P50_MS} ms`, measured: `${fmt(oursP50)} ms`, met: judge(oursP50 <= SEND_P50_MS) },
        { target: `send latency (${current}): ours ≤ ${SEND_VS_MAILDEV}× both MailDevs (p50, median of the rounds' ratios)`, measured: `${fmt(md3)}× MailDev 3.0.0, ${fmt(md2)}× MailDev 2.2.1`, met: judge(md3 <= SEND_VS_MAILDEV && md2 <= SEND_VS_MAILDEV) },
        { target: `the test author's loop (waiting long-poll → ${current}'s sendMail → answered): p50 ≤ ${LOOP_P50_MS} ms`, measured: `${fmt(loopP50(current))} ms`, met: judge(loopP50(current) <= LOOP_P50_MS) }
    ];
    return {
        tables: [
            {
                title: `Send latency: nodemailer's default transport (a connection per mail), one mail at a time, sendMail() → resolved, ms (p50: median of ${rounds} rounds' p50s; p90, p99 over all)`,
                columns: ['server', 'p50 ms', 'p90 ms', 'p99 ms', 'mails'],
                rows
            },
            {
                title: 'Ratios of send latency: ours ÷ each MailDev (p50, median of the rounds\' ratios)',
                columns: ['client', 'ours / MailDev 3.0.0', 'ours / MailDev 2.2.1'],
                rows: CLIENTS.map(({ name }) => [name, fmt(ratio('MailDev 3.0.0', name)), fmt(ratio('MailDev 2.2.1', name))])
            },
            {
                title: 'The test author\'s loop on ours: a long-poll waiting on a fresh inbox, then sendMail(), until the long-poll answers with the mail, ms',
                columns: ['client', 'p50 ms', 'p90 ms', 'p99 ms', 'loops'],
                rows: CLIENTS.map(({ name }) => {
                    const all = loop.get(name)!.flat();
                    return [name, fmt(loopP50(name)), fmt(p(all, 0.9)), fmt(p(all, 0.99)), String(all.length)];
                })
            }
        ],
        targets,
        notes: [
            `${mails} mails per server and round, ${rounds} round${rounds === 1 ? '' : 's'} alternating the servers' order; each server in its own process at its defaults; the client in the bench process.`,
            'nodemailer 6.x writes a message in two writes (the text, then its last bytes with the final dot) and leaves Nagle\'s algorithm on, so the second write waits for the server to acknowledge the first; Linux delays that acknowledgement (about 40 ms) on a connection that has just answered. The diagnostic row gives the client socket TCP_NODELAY through nodemailer\'s getSocket option: what remains is the server\'s own time.',
            `The loop's long-poll (GET /v1/emails?wait=true) is given ${LONG_POLL_SETTLE_MS} ms to start waiting before the mail is sent; the time counted is from sendMail() called to the long-poll's answer. MailDev has no long-poll: its loop is not measured.`
        ]
    };
}

if (require.main === module) {
    runBench('Send latency (what a test suite feels): ours vs MailDev 3.0.0 and 2.2.1', 'send-latency', bench, ['mails', 'rounds']);
}
