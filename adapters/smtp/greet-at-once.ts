/**
 * The `220` greeting at once. smtp-server holds every new connection 100 ms before it
 * greets (`SMTPConnection#init()`, "a small delay for detecting early talkers": spam
 * engines that send before the greeting). nodemailer's default transport opens a
 * connection per mail, so a test suite waited 100 ms for every message it sent (a
 * `sendMail` took 111 ms at p50 against Postfix's 0.2 ms greeting). A capture service
 * takes mail from test code, not from the Internet's spam engines: the connections of our
 * listener get an `init()` that does what smtp-server's does, the connection cap
 * included, without the timer (docs/operations.md, "SMTP greeting").
 *
 * No fork: this replaces `init` on each connection object of our own server only (other
 * SMTPServer instances in the process keep theirs), and checks at the listener's
 * construction that smtp-server's `init()` is still the one it replaces: a version whose
 * `init()` changed fails loudly there instead of greeting some other way.
 */

import { createRequire } from 'node:module';
import type { SMTPServer } from 'smtp-server';

/** The smtp-server versions whose SMTPConnection#init() this was written against. */
const SUPPORTED_VERSIONS = /^3\.(2[1-9]|[3-9]\d)\./;

/** What smtp-server's init() is, in its own words: the statements this replaces. */
const EXPECTED_INIT = [
    'this._setListeners(',
    'this._server.options.maxClients && this._server.connections.size > this._server.options.maxClients',
    'setTimeout(() => this.connectionReady(), 100)'
];

/** The parts of SMTPConnection used here (smtp-server 3.x, lib/smtp-connection.js). */
interface ConnectionInternals {
    name: string;
    _server: { options: { maxClients?: number }; connections: Set<unknown> };
    _setListeners(callback: () => void): void;
    connectionReady(next?: () => void): void;
    send(code: number, message: string, command?: string | false): void;
    init(): void;
}

const requireFromSmtpServer = createRequire(require.resolve('smtp-server'));

/**
 * Throws unless the installed smtp-server is one this adaptation knows: its version in
 * SUPPORTED_VERSIONS and its `SMTPConnection#init()` the 100 ms one (its source checked).
 */
export function checkSmtpServerInit(): void {
    const version = (requireFromSmtpServer('smtp-server/package.json') as { version: string }).version;
    const { SMTPConnection } = requireFromSmtpServer('smtp-server/lib/smtp-connection') as { SMTPConnection: { prototype: ConnectionInternals } };
    const source = String(SMTPConnection?.prototype?.init);
    const missing = EXPECTED_INIT.filter((statement) => !source.includes(statement));
    if (!SUPPORTED_VERSIONS.test(version) || missing.length > 0 || typeof SMTPConnection.prototype.connectionReady !== 'function') {
        throw new Error(`adapters/smtp/greet-at-once.ts: smtp-server ${version} is not the one whose SMTPConnection#init() it replaces` +
            `${missing.length > 0 ? ` (init() no longer has ${missing.map((m) => JSON.stringify(m)).join(', ')})` : ''}; check it against lib/smtp-connection.js`);
    }
}

/** smtp-server's init() without the 100 ms timer: the connection cap, then the greeting. */
function initAtOnce(this: ConnectionInternals): void {
    this._setListeners(() => {
        const { maxClients } = this._server.options;
        if (maxClients && this._server.connections.size > maxClients) {
            this.send(421, `${this.name} Too many connected clients, try again in a moment`, false);
            return;
        }

        this.connectionReady();
    });
}

/**
 * Makes `server` greet each new connection at once: every connection it adds gets
 * initAtOnce() as its `init()` (SMTPServer#connect() adds the connection to
 * `server.connections`, then calls its init()). Call checkSmtpServerInit() first.
 */
export function greetAtOnce(server: SMTPServer): void {
    const connections = (server as unknown as { connections: Set<ConnectionInternals> }).connections;
    const add = connections.add.bind(connections);
    connections.add = (connection: ConnectionInternals) => {
        connection.init = initAtOnce;
        return add(connection);
    };
}
