import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { InboxCaptureError } from '../../../../lib/errors';
import { classifyFailures, isOwnFailure, isTransient, isUnavailableError, isUniqueViolation } from '../../../../lib/record-store/sql/db-errors';
import type { RecordStore } from '../../../../lib/record-store/record-store';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** An error as a driver throws it: a message and a string `code`. */
function coded(code: string, message = `failed with ${code}`): Error {
    return Object.assign(new Error(message), { code });
}

/** `inner` under `depth` wrappers that carry it as their cause. */
function wrapped(inner: unknown, depth: number): Error {
    let err = inner;
    for (let i = 0; i < depth; i++) {
        err = new Error(`wrapper ${i}`, { cause: err });
    }

    return err as Error;
}

describe('db-errors', () => {

    describe('isUniqueViolation()', () => {

        it('is true for Postgres 23505', () => {
            expect(isUniqueViolation(coded('23505'))).to.be.true();
        });

        it('is true for a SQLite UNIQUE constraint, not for other constraints', () => {
            expect(isUniqueViolation(coded('SQLITE_CONSTRAINT', 'SQLITE_CONSTRAINT: UNIQUE constraint failed: api_keys.name'))).to.be.true();
            expect(isUniqueViolation(coded('SQLITE_CONSTRAINT', 'SQLITE_CONSTRAINT: NOT NULL constraint failed: emails.inbox'))).to.be.false();
        });

        it('is false for other codes, codeless errors and non-errors', () => {
            expect(isUniqueViolation(coded('23503'))).to.be.false();
            expect(isUniqueViolation(new Error('UNIQUE constraint failed'))).to.be.false();
            expect(isUniqueViolation(null)).to.be.false();
            expect(isUniqueViolation('23505')).to.be.false();
        });
    });

    describe('isTransient()', () => {

        it('is true for unique races, serialization failures, deadlocks and SQLITE_BUSY', () => {
            for (const code of ['23505', '40001', '40P01', 'SQLITE_BUSY']) {
                expect(isTransient(coded(code)), code).to.be.true();
            }
        });

        it('is false for everything else', () => {
            for (const code of ['SQLITE_LOCKED', 'SQLITE_CONSTRAINT', 'ECONNREFUSED', '57P01', '22021']) {
                expect(isTransient(coded(code)), code).to.be.false();
            }

            expect(isTransient(new Error('boom'))).to.be.false();
            expect(isTransient(undefined)).to.be.false();
            expect(isTransient(Object.assign(new Error('numeric'), { code: 23505 }))).to.be.false();
        });
    });

    describe('isUnavailableError()', () => {

        it('is true for network codes of an unreachable database', () => {
            for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']) {
                expect(isUnavailableError(coded(code)), code).to.be.true();
            }
        });

        it('is true for Postgres codes of a server down, starting, full or read-only', () => {
            for (const code of ['57P01', '57P02', '57P03', '57014', '55P03', '53100', '53200', '53300', '25006', '40001', '40P01']) {
                expect(isUnavailableError(coded(code)), code).to.be.true();
            }
        });

        it('is true for every Postgres connection exception (class 08), and only five-character codes', () => {
            expect(isUnavailableError(coded('08006'))).to.be.true();
            expect(isUnavailableError(coded('08P01'))).to.be.true();
            expect(isUnavailableError(coded('080'))).to.be.false();
        });

        it('is true for SQLite codes of a locked or unusable file', () => {
            for (const code of ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_PROTOCOL']) {
                expect(isUnavailableError(coded(code)), code).to.be.true();
            }
        });

        it('is true for node-postgres lost-connection messages and Knex pool timeouts', () => {
            expect(isUnavailableError(new Error('select 1 - Connection terminated unexpectedly'))).to.be.true();
            expect(isUnavailableError(new Error('Client has encountered a connection error and is not queryable'))).to.be.true();
            expect(isUnavailableError(new Error('Client was closed and is not queryable'))).to.be.true();
            expect(isUnavailableError(new Error('Query read timeout'))).to.be.true();
            const timeout = new Error('Knex: Timeout acquiring a connection.');
            timeout.name = 'KnexTimeoutError';
            expect(isUnavailableError(timeout)).to.be.true();
        });

        it('is false for failures of the call itself', () => {
            for (const code of ['23505', '22021', '42P01', 'SQLITE_CONSTRAINT', 'SQLITE_ERROR', 'ENOENT']) {
                expect(isUnavailableError(coded(code)), code).to.be.false();
            }

            expect(isUnavailableError(new Error('syntax error at or near "SELEC"'))).to.be.false();
            expect(isUnavailableError({ code: 'ECONNREFUSED' })).to.be.false();
            expect(isUnavailableError(null)).to.be.false();
        });

        it('finds the driver error under wrappers, up to four causes deep', () => {
            expect(isUnavailableError(wrapped(coded('ECONNREFUSED'), 1))).to.be.true();
            expect(isUnavailableError(wrapped(coded('57P01'), 4))).to.be.true();
            expect(isUnavailableError(wrapped(coded('57P01'), 5))).to.be.false();
            expect(isUnavailableError(wrapped(coded('23505'), 2))).to.be.false();
        });

        it('looks into each error of an AggregateError (dual-stack connect)', () => {
            expect(isUnavailableError(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect failed'))).to.be.true();
            expect(isUnavailableError(wrapped(new AggregateError([new Error('other'), coded('ENETUNREACH')]), 1))).to.be.true();
            expect(isUnavailableError(new AggregateError([new Error('a'), coded('23505')]))).to.be.false();
        });
    });

    describe('isOwnFailure()', () => {

        it('is true for a delivery\'s own failure, false for transient and unavailable ones', () => {
            expect(isOwnFailure(coded('22021', 'invalid byte sequence'))).to.be.true();
            expect(isOwnFailure(new Error('trigger refused'))).to.be.true();
            expect(isOwnFailure(coded('23505'))).to.be.false();
            expect(isOwnFailure(coded('SQLITE_BUSY'))).to.be.false();
            expect(isOwnFailure(coded('ECONNRESET'))).to.be.false();
            expect(isOwnFailure(coded('57P01'))).to.be.false();
        });
    });

    describe('classifyFailures()', () => {

        /** A store whose getEmail() throws `err` and whose close() throws `closeErr`. */
        function failingStore(err: unknown, closeErr: unknown = err): RecordStore {
            return {
                getEmail: () => Promise.reject(err),
                inboxVersion: () => Promise.resolve(3),
                close: () => Promise.reject(closeErr)
            } as unknown as RecordStore;
        }

        it('turns an unavailable database into RECORD_STORE_UNAVAILABLE, keeping the cause', async () => {
            const cause = wrapped(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 1);
            const store = classifyFailures(failingStore(cause));
            const err = await expect(store.getEmail('<m@x>')).to.reject(InboxCaptureError);
            expect(err).to.include({ code: 'RECORD_STORE_UNAVAILABLE' });
            expect(err.message).to.equal('record store unavailable in getEmail(): wrapper 0');
            expect(err.cause).to.shallow.equal(cause);
        });

        it('passes other failures and InboxCaptureErrors unchanged', async () => {
            const own = coded('22021');
            await expect(classifyFailures(failingStore(own)).getEmail('x')).to.reject(Error, 'failed with 22021');
            const invalid = new InboxCaptureError('INVALID_INPUT', 'bad', { cause: coded('ECONNRESET') });
            const err = await expect(classifyFailures(failingStore(invalid)).getEmail('x')).to.reject(InboxCaptureError);
            expect(err).to.shallow.equal(invalid);
        });

        it('passes results through and leaves close() unwrapped', async () => {
            const cause = coded('ECONNRESET');
            const store = classifyFailures(failingStore(new Error('x'), cause));
            expect(await store.inboxVersion('a')).to.equal(3);
            const err = await expect(store.close()).to.reject(Error);
            expect(err).to.shallow.equal(cause);
        });

        it('calls each method with the store as `this` and its arguments', async () => {
            const store = {
                prefix: 'v',
                inboxVersion(this: { prefix: string }, inbox: string) {
                    return Promise.resolve(`${this.prefix}:${inbox}`);
                },
                close: () => Promise.resolve()
            } as unknown as RecordStore;
            expect(await classifyFailures(store).inboxVersion('a')).to.equal('v:a' as unknown as number);
        });
    });
});
