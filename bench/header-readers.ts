/**
 * Readers of one mail with a 1 MiB header section (encoded words, as a hostile sender
 * would write them): 30 concurrent `GET /v1/emails/{id}/headers`, repeated, while /health
 * is asked every 50 ms. Every request used to parse the section again on the event loop.
 *
 * node dist-bench/bench/header-readers.js [--roots /path/a,/path/b] [--readers 30] [--rounds 3]
 */

import { describeHealth, startHealthProbe } from './health-probe';
import { SmtpSession } from './smtp-client';
import { startStandalone } from './standalone';

/** A message whose header section is `bytes` long, all encoded words. */
export function bigHeaderMessage(messageId: string, bytes = 1024 * 1024): Buffer {
    const lines = [`Message-ID: <${messageId}>`, 'From: app@shop.test', 'To: headers@example.test', 'Subject: a big header section'];
    let size = lines.join('\r\n').length;
    for (let i = 0; size < bytes - 200; i++) {
        const line = `X-Filler-${i}: =?utf-8?Q?caf=C3=A9_${'a'.repeat(40)}?= and more`;
        lines.push(line);
        size += line.length + 2;
    }

    return Buffer.from(`${lines.join('\r\n')}\r\n\r\nbody\r\n`);
}

function option(name: string, fallback: string): string {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : process.argv[at + 1]!;
}

async function measure(root: string | undefined, readers: number, rounds: number): Promise<string> {
    const service = await startStandalone(root ? { root } : {});
    try {
        const session = await SmtpSession.open(service.smtpPort);
        const outcome = await session.send('app@shop.test', ['headers@example.test'], [bigHeaderMessage('big-headers@shop.test')]);
        await session.close();
        if (outcome.code !== 250) {
            throw new Error(`the message was refused: ${outcome.code}`);
        }

        const url = `${service.base}/v1/emails/big-headers%40shop.test/headers`;
        const probe = await startHealthProbe(`${service.base}/health`);
        const started = Date.now();
        for (let round = 0; round < rounds; round++) {
            const statuses = await Promise.all(Array.from({ length: readers }, () => fetch(url, { headers: { authorization: `Bearer ${service.apiKey}` } }).then(async (res) => {
                await res.arrayBuffer();
                return res.status;
            })));
            if (statuses.some((s) => s !== 200)) {
                throw new Error(`answers: ${statuses.join(',')}`);
            }
        }

        const took = Date.now() - started;
        return `${readers} readers × ${rounds} rounds in ${took} ms; /health ${describeHealth(await probe.stop())}`;
    }
    finally {
        await service.stop();
    }
}

async function main(): Promise<void> {
    const roots = option('roots', '').split(',').filter((r) => r !== '');
    const readers = Number(option('readers', '30'));
    const rounds = Number(option('rounds', '3'));
    for (const root of roots.length > 0 ? roots : [undefined]) {
        console.log(`${root ?? 'this checkout'}: ${await measure(root, readers, rounds)}`);
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        console.error(err);
        process.exit(1);
    });
}
