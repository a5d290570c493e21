import * as Dgram from 'node:dgram';
import * as Net from 'node:net';

/** A DNS server on loopback UDP that answers A and AAAA queries from a table the test fills. */
export interface DnsServer {
    /** `127.0.0.1:<port>`, for a resolver's servers. */
    address: string;
    /** Name (lowercase, no root dot) → its addresses; a name not here is NXDOMAIN. */
    records: Map<string, string[]>;
    /** Every question asked, as `A name` / `AAAA name`. */
    questions: string[];
    close(): Promise<void>;
}

const A = 1;
const AAAA = 28;

function readName(packet: Buffer, offset: number): { name: string; end: number } {
    const labels: string[] = [];
    let at = offset;
    while (packet[at] !== 0) {
        labels.push(packet.subarray(at + 1, at + 1 + packet[at]).toString('latin1'));
        at += 1 + packet[at];
    }

    return { name: labels.join('.').toLowerCase(), end: at + 1 };
}

function rdata(address: string): Buffer {
    if (Net.isIPv4(address)) {
        return Buffer.from(address.split('.').map(Number));
    }

    // The short form (Node's URL parser's), its :: filled with zero groups.
    const groups = new URL(`http://[${address}]/`).hostname.slice(1, -1);
    const [head, tail = ''] = groups.split('::');
    const front = head ? head.split(':') : [];
    const back = tail ? tail.split(':') : [];
    const all = groups.includes('::') ? [...front, ...new Array<string>(8 - front.length - back.length).fill('0'), ...back] : front;
    const bytes = Buffer.alloc(16);
    all.forEach((g, i) => bytes.writeUInt16BE(parseInt(g, 16), i * 2));
    return bytes;
}

/** Answers one query packet: the records of the name of the asked type, or NXDOMAIN for an unknown name. */
function answer(query: Buffer, records: Map<string, string[]>, questions: string[]): Buffer {
    const { name, end } = readName(query, 12);
    const type = query.readUInt16BE(end);
    questions.push(`${type === A ? 'A' : type === AAAA ? 'AAAA' : type} ${name}`);
    const known = records.get(name);
    const matching = (known ?? []).filter((a) => (type === A ? Net.isIPv4(a) : type === AAAA && Net.isIPv6(a)));
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
    // A response, recursion desired and available; NXDOMAIN (3) for an unknown name.
    header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(matching.length, 6);
    const answers = matching.map((address) => {
        const data = rdata(address);
        const record = Buffer.alloc(12);
        record.writeUInt16BE(0xc00c, 0);
        record.writeUInt16BE(type, 2);
        record.writeUInt16BE(1, 4);
        record.writeUInt32BE(0, 6);
        record.writeUInt16BE(data.length, 10);
        return Buffer.concat([record, data]);
    });
    return Buffer.concat([header, query.subarray(12, end + 4), ...answers]);
}

/** Starts the server on 127.0.0.1, a port of the OS's choosing. */
export async function startDnsServer(records: Record<string, string[]> = {}): Promise<DnsServer> {
    const socket = Dgram.createSocket('udp4');
    const table = new Map(Object.entries(records));
    const questions: string[] = [];
    socket.on('message', (query, peer) => {
        socket.send(answer(query, table, questions), peer.port, peer.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return {
        address: `127.0.0.1:${socket.address().port}`,
        records: table,
        questions,
        close: () => new Promise<void>((resolve) => socket.close(() => resolve()))
    };
}
