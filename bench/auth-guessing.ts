/**
 * SMTP AUTH password guessing against `examples/standalone.js` with `SMTP_AUTH=users`:
 * for `--seconds` (10), `--workers` (20) clients on loopback each open a connection,
 * send `AUTH PLAIN` with wrong passwords until the server closes it, and open the next,
 * from `--addresses` (1) client addresses (127.0.0.1, 127.0.0.2, …). It counts the
 * passwords the server checked (answers 535, or 421 at a connection's last failure) and
 * the attempts it refused unchecked (454, the address locked out), then logs in with the
 * right password from an address that did not guess and from one that did. Not part of
 * `run.ts` (an attack's before/after, not a throughput figure):
 *
 *   node dist-bench/bench/auth-guessing.js [--seconds 10] [--workers 20] [--addresses 1] [--smoke]
 */

import { RawSmtpSession } from '../test/helpers/raw-smtp';
import { runBench } from './report';
import { startStandalone } from './standalone';

const USER = 'app';
const PASSWORD = 'the-right-password';

/** An AUTH PLAIN line for `password`. */
function authPlain(password: string): string {
    return `AUTH PLAIN ${Buffer.from(`\0${USER}\0${password}`).toString('base64')}`;
}

/** Reply codes to the guesses of one client, counted. */
type Tally = Map<number | string, number>;

function count(tally: Tally, key: number | string): void {
    tally.set(key, (tally.get(key) ?? 0) + 1);
}

/** One guessing client: connection after connection until `deadline`; every AUTH reply counted. */
async function guess(port: number, localAddress: string, deadline: number, tally: Tally, worker: number): Promise<number> {
    let connections = 0;
    let n = 0;
    while (Date.now() < deadline) {
        connections++;
        let session: RawSmtpSession;
        try {
            ({ session } = await RawSmtpSession.open(port, localAddress));
        }
        catch (err) {
            count(tally, `connect: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
            continue;
        }

        try {
            await session.command('EHLO guesser.test');
            for (;;) {
                const { code } = await session.command(authPlain(`guess-${worker}-${n++}`));
                count(tally, code);
                if (code !== 535 || Date.now() >= deadline) {
                    break;
                }
            }
        }
        catch {
            // The server closed the connection after its reply (421, 454).
        }
        finally {
            await session.destroy();
        }
    }

    return connections;
}

/** The reply to the right password from `localAddress`. */
async function logIn(port: number, localAddress: string): Promise<number> {
    const { session } = await RawSmtpSession.open(port, localAddress);
    try {
        await session.command('EHLO client.test');
        return (await session.command(authPlain(PASSWORD))).code;
    }
    finally {
        await session.destroy();
    }
}

runBench('SMTP AUTH password guessing', 'auth-guessing', async (args) => {
    const seconds = args.smoke ? 1 : Number(args.values.seconds ?? 10);
    const workers = args.smoke ? 2 : Number(args.values.workers ?? 20);
    const addresses = Array.from({ length: Number(args.values.addresses ?? 1) }, (_, i) => `127.0.0.${i + 1}`);
    const bystander = `127.0.0.${addresses.length + 1}`;
    const server = await startStandalone({ env: { SMTP_AUTH: 'users', SMTP_AUTH_USERS: `${USER}:${PASSWORD}` } });
    const tally: Tally = new Map();
    try {
        const began = Date.now();
        const deadline = began + seconds * 1000;
        const connections = (await Promise.all(Array.from({ length: workers }, (_, i) => guess(server.smtpPort, addresses[i % addresses.length]!, deadline, tally, i))))
            .reduce((a, b) => a + b, 0);
        const elapsed = (Date.now() - began) / 1000;
        const checked = (tally.get(535) ?? 0) + (tally.get(421) ?? 0);
        const fromBystander = await logIn(server.smtpPort, bystander);
        const fromGuesser = await logIn(server.smtpPort, addresses[0]!);
        const replies = [...tally].sort().map(([code, n]) => `${code} × ${n}`).join(', ');
        return {
            tables: [{
                title: 'Wrong passwords over SMTP AUTH PLAIN, as fast as the server answers',
                columns: ['client addresses', 'clients', 's', 'connections', 'replies', 'passwords checked', 'passwords checked per s', 'right password from another address', 'right password from a guessing address'],
                rows: [[addresses.join(' '), String(workers), elapsed.toFixed(1), String(connections), replies, String(checked), (checked / elapsed).toFixed(1), `${fromBystander} (${bystander})`, String(fromGuesser)]]
            }],
            targets: [
                // 5 failures a minute per address (adapters/smtp/auth-lockout.ts).
                { target: `at most 5 passwords checked per address per started minute (${5 * addresses.length * Math.ceil(elapsed / 60)})`, measured: String(checked), met: checked <= 5 * addresses.length * Math.ceil(elapsed / 60) },
                { target: 'the right password from an address that did not guess logs in (235)', measured: String(fromBystander), met: fromBystander === 235 }
            ],
            notes: ['passwords checked: AUTH answered 535 (wrong) or 421 (wrong, and the connection closed); 454 is an attempt refused before its password was looked at']
        };
    }
    finally {
        await server.stop();
    }
}, ['seconds', 'workers', 'addresses']);
