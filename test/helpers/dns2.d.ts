// The few parts of dns2 (no types of its own) the tests' DNS server uses.
declare module 'dns2' {
    interface Question { name: string; type: number }
    interface Answer { name: string; type: number; class: number; ttl: number; data?: string | string[]; address?: string }
    class Packet {
        static TYPE: Record<string, number>;
        static CLASS: Record<string, number>;
        static createResponseFromRequest(request: Packet): Packet;
        header: { id: number; rcode: number };
        questions: Question[];
        answers: Answer[];
    }
    interface DnsServer {
        listen(options: { udp?: { port: number; address: string } }): Promise<{ udp?: { port: number; address: string } }>;
        close(): Promise<void>;
    }
    function createServer(options: { udp?: boolean; handle(request: Packet, send: (response: Packet) => void): void }): DnsServer;
    export { Packet, createServer };
}
