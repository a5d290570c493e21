import * as Http from 'node:http';
import type * as Net from 'node:net';
import { RawSmtpSession, sendRawMessage, type SmtpReply } from '../../helpers/raw-smtp';

/** The domain of every address of the run. */
export const DOMAIN = 'cluster.test';

/** One message the run sends: its id, inbox and exact bytes. */
export interface ClusterMessage {
    messageId: string;
    inbox: string;
    raw: Buffer;
}

/** Message `name` to `inbox`; with `attachment`, a multipart message whose attachment is a second blob. */
export function clusterMessage(name: string, inbox: string, attachment: boolean): ClusterMessage {
    const messageId = `${name}@${DOMAIN}`;
    const head = [`From: Cluster <load@${DOMAIN}>`, `To: ${inbox}@${DOMAIN}`, `Subject: ${name}`, `Message-ID: <${messageId}>`, 'MIME-Version: 1.0'];
    const text = `Message ${name} of the cluster run.`;
    const lines = attachment
        ? [...head, 'Content-Type: multipart/mixed; boundary="c1"', '', '--c1', 'Content-Type: text/plain', '', text, '--c1',
            `Content-Type: application/octet-stream; name="${name}.bin"`, `Content-Disposition: attachment; filename="${name}.bin"`,
            'Content-Transfer-Encoding: base64', '', Buffer.from(`${name} `.repeat(64)).toString('base64'), '--c1--', '']
        : [...head, 'Content-Type: text/plain', '', text, ''];
    return { messageId, inbox, raw: Buffer.from(lines.join('\r\n')) };
}

/**
 * One SMTP client session kept open across messages, as an MTA's connection to a smart
 * host; a failure below SMTP (the instance killed) closes it and says so.
 */
export class ClusterSender {
    private session: RawSmtpSession | undefined;

    constructor(private port: number) {}

    /** The port this sender talks to; a new one takes effect at the next connect. */
    moveTo(port: number): void {
        this.port = port;
    }

    /** Sends one message on the open session (connecting first when needed); the reply, or the error that cut it off. */
    async send(message: ClusterMessage): Promise<SmtpReply | Error> {
        try {
            if (!this.session) {
                const { session, greeting } = await RawSmtpSession.open(this.port);
                this.session = session;
                if (greeting.code !== 220 || (await session.command(`EHLO sender.${DOMAIN}`)).code !== 250) {
                    throw new Error(`greeting ${greeting.code}`);
                }
            }

            return await sendRawMessage(this.session, message.raw, [`${message.inbox}@${DOMAIN}`], `load@${DOMAIN}`);
        }
        catch (err) {
            await this.close();
            return err as Error;
        }
    }

    /** Drops the session. */
    async close(): Promise<void> {
        const session = this.session;
        this.session = undefined;
        await session?.destroy();
    }
}

/** One webhook POST the receiver answered. */
export interface ClusterWebhook {
    webhookId: string;
    messageId: string;
    at: number;
    /** False when the sender was gone (its instance killed) before the 200 went back. */
    answered: boolean;
}

/** A webhook receiver that answers 200 after `delayMs`, so that deliveries are in flight when an instance dies. */
export interface ClusterReceiver {
    url: string;
    received: ClusterWebhook[];
    close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1. */
export async function startClusterReceiver(delayMs: number): Promise<ClusterReceiver> {
    const received: ClusterWebhook[] = [];
    const sockets = new Set<Net.Socket>();
    const timers = new Set<NodeJS.Timeout>();
    const server = Http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const timer = setTimeout(() => {
                timers.delete(timer);
                const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { email: { messageId: string } };
                const answered = !req.socket.destroyed;
                received.push({ webhookId: String(req.headers['webhook-id']), messageId: body.email.messageId, at: Date.now(), answered });
                res.end();
            }, delayMs);
            timers.add(timer);
        });
    });
    server.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as Net.AddressInfo;
    return {
        url: `http://127.0.0.1:${port}/hook`,
        received,
        close: async () => {
            timers.forEach((timer) => clearTimeout(timer));
            sockets.forEach((socket) => socket.destroy());
            await new Promise((resolve) => server.close(resolve));
        }
    };
}
