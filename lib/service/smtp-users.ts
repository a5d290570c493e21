/**
 * SMTP users kept in the store (docs/tenants.md): each logs in with a password made here
 * and shown once, and every copy of the mail it sends goes to an inbox under its prefix.
 */

import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { InboxCaptureError } from '../errors';
import { isTenantPrefix, MAX_TENANT_PREFIX_LENGTH } from '../identity/tenant-prefix';
import type { RecordStore } from '../record-store/record-store';
import type { SmtpUserInfo } from '../types';

/** Longest SMTP user name, characters. */
export const MAX_SMTP_USER_NAME_LENGTH = 64;

/** Printable ASCII without spaces: a name typed into a mail library's settings and a shell. */
const NAME_PATTERN = /^[\x21-\x7e]+$/;

/** scrypt's cost: 16 MiB and some tens of ms a check, paid once per AUTH, never per message. */
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32, saltBytes: 16 };

/** What a login as a stored user answers: its prefix, a wrong password, or no such user. */
export type SmtpUserCheck = { inboxPrefix: string } | 'wrong-password' | 'unknown-user';

/** The service's SMTP user methods. */
export interface SmtpUsers {
    /** Creates an SMTP user whose mail goes under `inboxPrefix`; answers its password (shown once), or null when the name is taken; INVALID_INPUT for a bad name or prefix. */
    createSmtpUser(name: string, inboxPrefix: string): Promise<string | null>;
    /** Checks a login against the store as it is now (a user deleted a moment ago is unknown). */
    verifySmtpUser(name: string, password: string): Promise<SmtpUserCheck>;
    /** Deletes the SMTP user; false when there is none. */
    deleteSmtpUser(name: string): Promise<boolean>;
    /** Every SMTP user, oldest first. */
    listSmtpUsers(): Promise<SmtpUserInfo[]>;
}

function scryptHash(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
        scrypt(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key)));
    });
}

/** The stored form of a password: `scrypt$N$r$p$<salt>$<hash>`, salt and hash in base64url. */
export async function hashSmtpPassword(password: string): Promise<string> {
    const salt = randomBytes(SCRYPT.saltBytes);
    const hash = await scryptHash(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen);
    return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** True when `password` is the one `stored` (hashSmtpPassword()) was made from; compared in constant time. */
export async function checkSmtpPassword(password: string, stored: string): Promise<boolean> {
    const [kind, n, r, p, salt, hash] = stored.split('$');
    const expected = Buffer.from(hash ?? '', 'base64url');
    if (kind !== 'scrypt' || expected.length === 0) {
        return false;
    }

    const given = await scryptHash(password, Buffer.from(salt ?? '', 'base64url'), Number(n), Number(r), Number(p), expected.length);
    return timingSafeEqual(given, expected);
}

/** A hash no password matches, checked for an unknown name so timing does not tell which names exist. */
let unknownUserHash: Promise<string> | undefined;

/** Throws INVALID_INPUT unless `name` and `inboxPrefix` are an SMTP user's (docs/tenants.md). */
export function checkSmtpUser(name: unknown, inboxPrefix: unknown): void {
    if (typeof name !== 'string' || name.length > MAX_SMTP_USER_NAME_LENGTH || !NAME_PATTERN.test(name)) {
        throw new InboxCaptureError('INVALID_INPUT', `an SMTP user name is 1 to ${MAX_SMTP_USER_NAME_LENGTH} printable ASCII characters without spaces`);
    }

    if (!isTenantPrefix(inboxPrefix)) {
        throw new InboxCaptureError('INVALID_INPUT', `an inbox prefix is 1 to ${MAX_TENANT_PREFIX_LENGTH} characters of a-z 0-9 . _ - ending in -, . or _`);
    }
}

/** The SMTP user methods over `recordStore` (one without them refuses every call with INVALID_INPUT). */
export function createSmtpUsers(recordStore: RecordStore): SmtpUsers {
    const store = () => {
        const { createSmtpUser, findSmtpUser, deleteSmtpUser, listSmtpUsers } = recordStore;
        if (!createSmtpUser || !findSmtpUser || !deleteSmtpUser || !listSmtpUsers) {
            throw new InboxCaptureError('INVALID_INPUT', 'this record store keeps no SMTP users');
        }

        return { createSmtpUser: createSmtpUser.bind(recordStore), findSmtpUser: findSmtpUser.bind(recordStore), deleteSmtpUser: deleteSmtpUser.bind(recordStore), listSmtpUsers: listSmtpUsers.bind(recordStore) };
    };

    return {
        async createSmtpUser(name, inboxPrefix) {
            checkSmtpUser(name, inboxPrefix);
            const password = randomBytes(24).toString('base64url');
            const created = await store().createSmtpUser(name, await hashSmtpPassword(password), inboxPrefix);
            return created ? password : null;
        },

        async verifySmtpUser(name, password) {
            if (!recordStore.findSmtpUser) {
                return 'unknown-user';
            }

            const user = await recordStore.findSmtpUser(name);
            const ok = await checkSmtpPassword(password, user?.passwordHash ?? await (unknownUserHash ??= hashSmtpPassword(randomBytes(16).toString('hex'))));
            if (!user) {
                return 'unknown-user';
            }

            return ok ? { inboxPrefix: user.inboxPrefix } : 'wrong-password';
        },

        deleteSmtpUser(name) {
            return store().deleteSmtpUser(name);
        },

        listSmtpUsers() {
            return store().listSmtpUsers();
        }
    };
}
