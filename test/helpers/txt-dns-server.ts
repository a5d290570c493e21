import { createServer, Packet } from 'dns2';

/** A DNS server on loopback UDP (dns2) that answers TXT and A questions from tables the test fills. */
export interface TxtDnsServer {
    /** `127.0.0.1:<port>`, for a resolver's servers. */
    address: string;
    /** Name (lowercase, no root dot) → its TXT records, each one string (split into 255-byte pieces on the wire). */
    txt: Map<string, string[]>;
    /** Name → its IPv4 addresses. */
    a: Map<string, string[]>;
    /** Every question asked, as `TXT name` / `A name` / `<type number> name`. */
    questions: string[];
    /** True: questions are heard (and counted) but never answered. */
    silent: boolean;
    close(): Promise<void>;
}

/** Starts the server on 127.0.0.1, a port of the OS's choosing. A name in neither table is NXDOMAIN; a known name without the asked type answers no records. */
export async function startTxtDnsServer(txt: Record<string, string[]> = {}): Promise<TxtDnsServer> {
    const state = { silent: false };
    const txtTable = new Map(Object.entries(txt));
    const aTable = new Map<string, string[]>();
    const questions: string[] = [];
    const server = createServer({
        udp: true,
        handle(request, send) {
            const response = Packet.createResponseFromRequest(request);
            const [question] = request.questions;
            const name = question.name.toLowerCase().replace(/\.$/, '');
            const type = question.type === Packet.TYPE.TXT ? 'TXT' : question.type === Packet.TYPE.A ? 'A' : String(question.type);
            questions.push(`${type} ${name}`);
            if (state.silent) {
                return;
            }

            if (!txtTable.has(name) && !aTable.has(name)) {
                response.header.rcode = 3;
            }
            else if (type === 'TXT') {
                for (const record of txtTable.get(name) ?? []) {
                    const pieces = record.match(/[\s\S]{1,255}/g) ?? [''];
                    response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: pieces });
                }
            }
            else if (type === 'A') {
                for (const address of aTable.get(name) ?? []) {
                    response.answers.push({ name: question.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 60, address });
                }
            }

            send(response);
        }
    });
    const { udp } = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
    return {
        address: `127.0.0.1:${udp!.port}`,
        txt: txtTable,
        a: aTable,
        questions,
        get silent() {
            return state.silent;
        },
        set silent(value: boolean) {
            state.silent = value;
        },
        close: () => server.close()
    };
}
