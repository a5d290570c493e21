/** Codes the core raises; adapters map them to their protocol (HTTP, SMTP, exit codes). */
export type InboxCaptureErrorCode =
    | 'TOO_LARGE'
    | 'NO_RECIPIENT'
    | 'TOO_MANY_RECIPIENTS'
    | 'OUT_OF_SCOPE'
    | 'BUSY'
    | 'NOT_FOUND'
    | 'DUPLICATE_KEY'
    | 'UNKNOWN_KEY'
    | 'INVALID_INPUT'
    | 'LIMIT_REACHED'
    | 'BLOB_STORE_FAILED'
    | 'RECIPIENT_NOT_ALLOWED'
    | 'RELAY_FAILED'
    | 'TOO_MANY_HOPS'
    | 'RECORD_STORE_UNAVAILABLE';

/** A failure with a stable code; `message` is for logs, never for clients. */
export class InboxCaptureError extends Error {
    readonly code: InboxCaptureErrorCode;

    constructor(code: InboxCaptureErrorCode, message: string, options?: { cause?: unknown }) {
        super(message, options);
        this.name = 'InboxCaptureError';
        this.code = code;
    }
}

/** True when `err` is an InboxCaptureError, optionally with the given code. */
export function isInboxCaptureError(err: unknown, code?: InboxCaptureErrorCode): err is InboxCaptureError {
    return err instanceof InboxCaptureError && (code === undefined || err.code === code);
}
