/**
 * Sends one message per inbox to an SMTP server, from a process of its own so that
 * the time its 250 arrives is not delayed by the serving instance's work (the
 * long-poll fan-out across instances). argv: <smtpPort> <prefix> <inboxes> <sessions>.
 * IPC: `{ go: true }` starts; answers `{ sent: [inbox, dataEndAt, ackedAt, code][] }`.
 */
import { profiles } from './profiles';
import { SmtpSession } from './smtp-client';
import { wallMs } from './stats';

const [portText, prefix, inboxesText, sessionsText] = process.argv.slice(2);
const inboxes = Number(inboxesText);

async function send(): Promise<Array<[number, number, number, number]>> {
    const profile = profiles()['text-1k'];
    const sent: Array<[number, number, number, number]> = [];
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(Number(sessionsText), inboxes) }, async () => {
        const smtp = await SmtpSession.open(Number(portText));
        while (next < inboxes) {
            const k = next++;
            const to = `${prefix}-${k}@bench.test`;
            const outcome = await smtp.send('sender@bench.test', [to], profile.parts(k, to, prefix));
            const ackedAt = wallMs();
            sent.push([k, ackedAt - outcome.latencyMs, ackedAt, outcome.code]);
            await smtp.reset();
        }

        await smtp.close();
    }));
    return sent;
}

process.on('message', (message: { go?: boolean }) => {
    if (message.go) {
        send().then((sent) => process.send!({ sent }), (err: unknown) => {
            console.error(err);
            process.exit(1);
        });
    }
});
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
