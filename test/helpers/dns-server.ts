import * as Net from 'node:net';

import { createServer, Packet } from 'dns2';

/** A DNS server on loopback UDP (dns2) that answers A, AAAA and TXT questions from tables the test fills. */
export interface DnsServer {
    /** `127.0.0.1:<port>`, for a resolver's servers. */
    address: string;
    /** Name (lowercase, no root dot) → its addresses, IPv4 answering A and IPv6 answering AAAA. */
    addresses: Map<string, string[]>;
    /** Name → its TXT records, each one string (split into 255-byte pieces on the wire). */
    txt: Map<string, string[]>;
    /** Every question asked, as `A name` / `AAAA name` / `TXT name` / `<type number> name`. */
    questions: string[];
    /** True: questions are heard (and counted) but never answered. */
    silent: boolean;
    close(): Promise<void>;
}

/** The records a server starts with; the maps it returns can be changed later. */
export interface DnsTables {
    addresses?: Record<string, string[]>;
    txt?: Record<string, string[]>;
}

const TYPE_NAMES = new Map([[Packet.TYPE.A, 'A'], [Packet.TYPE.AAAA, 'AAAA'], [Packet.TYPE.TXT, 'TXT']]);

/** All eight groups of an IPv6 address: dns2's encoder miscounts a `::` inside an address (`::1`). */
function fullIPv6(address: string): string {
    const groups = new URL(`http://[${address}]/`).hostname.slice(1, -1);
    const [head, tail = ''] = groups.split('::');
    const front = head ? head.split(':') : [];
    const back = tail ? tail.split(':') : [];
    return (groups.includes('::') ? [...front, ...new Array<string>(8 - front.length - back.length).fill('0'), ...back] : front).join(':');
}

/** Starts the server on 127.0.0.1, a port of the OS's choosing. A name in neither table is NXDOMAIN; a known name without the asked type answers no records. */
export async function startDnsServer(tables: DnsTables = {}): Promise<DnsServer> {
    const state = { silent: false };
    const addresses = new Map(Object.entries(tables.addresses ?? {}));
    const txt = new Map(Object.entries(tables.txt ?? {}));
    const questions: string[] = [];
    const server = createServer({
        udp: true,
        handle(request, send) {
            const response = Packet.createResponseFromRequest(request);
            const [question] = request.questions;
            const name = question.name.toLowerCase().replace(/\.$/, '');
            const type = TYPE_NAMES.get(question.type) ?? String(question.type);
            questions.push(`${type} ${name}`);
            if (state.silent) {
                return;
            }

            const answer = { name: question.name, type: question.type, class: Packet.CLASS.IN, ttl: 60 };
            if (!txt.has(name) && !addresses.has(name)) {
                response.header.rcode = 3;
            }
            else if (type === 'TXT') {
                for (const record of txt.get(name) ?? []) {
                    response.answers.push({ ...answer, data: record.match(/[\s\S]{1,255}/g) ?? [''] });
                }
            }
            else if (type === 'A') {
                for (const address of (addresses.get(name) ?? []).filter((a) => Net.isIPv4(a))) {
                    response.answers.push({ ...answer, address });
                }
            }
            else if (type === 'AAAA') {
                for (const address of (addresses.get(name) ?? []).filter((a) => Net.isIPv6(a))) {
                    response.answers.push({ ...answer, address: fullIPv6(address) });
                }
            }

            send(response);
        }
    });
    const { udp } = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
    return {
        address: `127.0.0.1:${udp!.port}`,
        addresses,
        txt,
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
