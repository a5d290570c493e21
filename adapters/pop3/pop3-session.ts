import { setTimeout as sleep } from 'node:timers/promises';
import { inboxInScope } from '../../lib/identity/key-scope';
import type { KeyScope } from '../../lib/types';
import type { AuthLockout } from '../smtp/auth-lockout';
import type { Pop3Command } from './command-lines';
import { dotStuffed } from './dot-stuffing';
import { commitDeletes, takeMaildrop, type MaildropMessage, type Pop3Service } from './maildrop';
import type { CommandOutcome, Pop3Transport } from './pop3-connection';

/** What a session needs from its listener. */
export interface SessionOptions {
    service: Pop3Service;
    /** True when STLS is offered (a certificate, and the connection not already in TLS). */
    stls: boolean;
    lockout: AuthLockout;
    authFailureDelayMs: number;
    log: (message: string, error?: unknown) => void;
}

/** A session's greeting and its command handler (RFC 1939's states). */
export interface Pop3Session {
    greet(transport: Pop3Transport): Promise<void>;
    handle(command: Pop3Command, transport: Pop3Transport): Promise<CommandOutcome>;
}

/** A message number as RFC 1939 writes it: no sign, no leading zero. */
const MESSAGE_NUMBER = /^[1-9][0-9]{0,8}$/;
const LINE_COUNT = /^(0|[1-9][0-9]{0,8})$/;

/** The commands of each state; any other known one is answered as out of place. */
const AUTHORIZATION = new Set(['CAPA', 'USER', 'PASS', 'STLS', 'QUIT']);
const TRANSACTION = new Set(['CAPA', 'STAT', 'LIST', 'UIDL', 'RETR', 'TOP', 'DELE', 'RSET', 'NOOP', 'QUIT']);

/** One connection's POP3 session: AUTHORIZATION until PASS succeeds, then TRANSACTION, UPDATE at QUIT. */
export function createPop3Session(options: SessionOptions): Pop3Session {
    const { service, lockout } = options;
    let user: string | null = null;
    let scope: KeyScope | null = null;
    let maildrop: MaildropMessage[] = [];

    const ok = (t: Pop3Transport, text: string) => t.write(`+OK ${text}\r\n`);
    const err = (t: Pop3Transport, text: string) => t.write(`-ERR ${text}\r\n`);
    const multiLine = (t: Pop3Transport, first: string, lines: string[]) => t.write(`+OK ${first}\r\n${lines.map((l) => `${l}\r\n`).join('')}.\r\n`);

    // The message a number names, or the reply that says why there is none.
    const message = (arg: string | undefined): MaildropMessage | string => {
        const found = arg !== undefined && MESSAGE_NUMBER.test(arg) ? maildrop[Number(arg) - 1] : undefined;
        if (!found) {
            return `no such message${arg === undefined ? '' : ` (${arg.slice(0, 20)})`}`;
        }

        return found.deleted ? `message ${arg} is deleted` : found;
    };

    const live = () => maildrop.map((m, i) => ({ m, n: i + 1 })).filter(({ m }) => !m.deleted);
    const octets = () => live().reduce((sum, { m }) => sum + m.size, 0);

    const capabilities = (t: Pop3Transport) => [
        'TOP', 'UIDL', 'USER', 'RESP-CODES', 'AUTH-RESP-CODE', 'PIPELINING',
        ...(options.stls && !t.secure && !scope ? ['STLS'] : []),
        'IMPLEMENTATION inbox-capture'
    ];

    const pass = async (t: Pop3Transport, key: string): Promise<CommandOutcome> => {
        const address = t.remoteAddress;
        if (lockout.isLocked(address)) {
            await err(t, '[AUTH] too many failed logins from your address, try again later');
            return 'close';
        }

        const inbox = user!;
        user = null;
        const found = key === '' ? null : await service.verifyKey(key);
        if (!found || !inboxInScope(found, inbox)) {
            // The wait and the count per address make guessing slow (docs/operations.md, "POP3").
            await sleep(options.authFailureDelayMs);
            const locked = lockout.fail(address);
            await err(t, '[AUTH] wrong inbox or key');
            return locked ? 'close' : 'continue';
        }

        maildrop = await takeMaildrop(service, inbox);
        scope = { inboxPrefix: found.inboxPrefix, readOnly: found.readOnly };
        await ok(t, `${inbox} has ${maildrop.length} messages (${octets()} octets)`);
        return 'continue';
    };

    const send = async (t: Pop3Transport, target: MaildropMessage, bodyLines?: number): Promise<void> => {
        const raw = await service.blobStore.get(target.rawKey);
        if (!raw) {
            await err(t, 'that message no longer exists (deleted another way)');
            return;
        }

        await ok(t, bodyLines === undefined ? `${target.size} octets` : 'top of message follows');
        for await (const chunk of dotStuffed(raw, bodyLines)) {
            if (!await t.write(chunk)) {
                raw.destroy();
                return;
            }
        }

        await t.write('.\r\n');
    };

    const transaction = async (t: Pop3Transport, { keyword, args }: Pop3Command): Promise<CommandOutcome> => {
        switch (keyword) {
            case 'STAT':
                await ok(t, `${live().length} ${octets()}`);
                break;
            case 'LIST':
            case 'UIDL': {
                const field = (m: MaildropMessage) => keyword === 'LIST' ? String(m.size) : m.uid;
                if (args.length === 0) {
                    await multiLine(t, keyword === 'LIST' ? `${live().length} messages (${octets()} octets)` : 'unique-id listing follows', live().map(({ m, n }) => `${n} ${field(m)}`));
                    break;
                }

                const target = message(args[0]);
                await (typeof target === 'string' ? err(t, target) : ok(t, `${args[0]} ${field(target)}`));
                break;
            }

            case 'RETR':
            case 'TOP': {
                const target = message(args[0]);
                if (typeof target === 'string') {
                    await err(t, target);
                    break;
                }

                if (keyword === 'TOP' && (args[1] === undefined || !LINE_COUNT.test(args[1]))) {
                    await err(t, 'TOP needs a message number and a number of lines');
                    break;
                }

                await send(t, target, keyword === 'TOP' ? Number(args[1]) : undefined);
                break;
            }

            case 'DELE': {
                const target = message(args[0]);
                if (typeof target === 'string') {
                    await err(t, target);
                }
                else if (scope!.readOnly) {
                    await err(t, 'this key is read-only: it cannot delete');
                }
                else {
                    target.deleted = true;
                    await ok(t, `message ${args[0]} deleted`);
                }

                break;
            }

            case 'RSET':
                for (const m of maildrop) {
                    m.deleted = false;
                }

                await ok(t, `${maildrop.length} messages (${octets()} octets)`);
                break;
            case 'NOOP':
                await ok(t, '');
                break;
            case 'QUIT': {
                const failed = await commitDeletes(service, maildrop, scope!, (error) => options.log('pop3: a delete at QUIT failed', error));
                await (failed > 0 ? err(t, `[SYS/TEMP] ${failed} deleted messages not removed`) : ok(t, 'inbox-capture signing off'));
                return 'close';
            }
        }

        return 'continue';
    };

    const authorization = async (t: Pop3Transport, { keyword, args }: Pop3Command): Promise<CommandOutcome> => {
        switch (keyword) {
            case 'USER':
                if (args.length !== 1) {
                    user = null;
                    await err(t, 'USER needs the inbox name');
                    break;
                }

                user = args[0]!;
                await ok(t, 'send the API key with PASS');
                break;
            case 'PASS':
                if (user === null) {
                    await err(t, 'USER first');
                    break;
                }

                return pass(t, args.join(' '));
            case 'STLS':
                if (!options.stls || t.secure) {
                    await err(t, t.secure ? 'already in TLS' : 'STLS is not offered');
                    break;
                }

                await ok(t, 'begin TLS negotiation');
                user = null;
                await t.startTls();
                break;
            case 'QUIT':
                await ok(t, 'inbox-capture signing off');
                return 'close';
        }

        return 'continue';
    };

    return {
        async greet(t) {
            await ok(t, 'inbox-capture POP3 ready');
        },

        async handle(command, t) {
            if (command.keyword === 'CAPA') {
                await multiLine(t, 'capability list follows', capabilities(t));
                return 'continue';
            }

            const inTransaction = scope !== null;
            const allowed = inTransaction ? TRANSACTION : AUTHORIZATION;
            if (!allowed.has(command.keyword)) {
                const known = AUTHORIZATION.has(command.keyword) || TRANSACTION.has(command.keyword);
                await err(t, known ? `${command.keyword} is not valid ${inTransaction ? 'after login' : 'before login'}` : 'unknown command');
                return 'continue';
            }

            return inTransaction ? transaction(t, command) : authorization(t, command);
        }
    };
}
