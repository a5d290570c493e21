import type { ErrorBody } from './types';

// The client's errors: typed, so a test can tell "the API said no" from "nothing came".

/** The code of an error answer whose body is not the API's `{ "error": CODE }` (a proxy's page, say). */
export const UNEXPECTED_RESPONSE = 'UNEXPECTED_RESPONSE';

/** The header in which the API says what is wrong with a refused request (docs/api.md, "Errors"). */
export const ERROR_DETAIL_HEADER = 'Inbox-Capture-Error-Detail';

/**
 * The API answered an error: `status` is the HTTP status, `code` the body's `error`,
 * `detail` what the server said is wrong (absent on a 401, a 5xx, or from an older server).
 * The message is `CODE: detail`, or just `CODE`.
 */
export class InboxCaptureApiError extends Error {
    readonly status: number;
    /** An `ApiErrorCode`, UNEXPECTED_RESPONSE, or a code of a newer server: kept a string. */
    readonly code: string;
    /** The `Inbox-Capture-Error-Detail` header, e.g. `timeout: must be an integer from 1 to 28`. */
    readonly detail: string | undefined;

    constructor(status: number, code: string, detail?: string) {
        super(detail ? `${code}: ${detail}` : code);
        this.name = 'InboxCaptureApiError';
        this.status = status;
        this.code = code;
        this.detail = detail || undefined;
    }
}

/** `waitForEmail()` saw no matching email within its `timeoutMs`. */
export class WaitTimeoutError extends Error {
    readonly timeoutMs: number;

    constructor(timeoutMs: number) {
        super(`no matching email within ${timeoutMs} ms`);
        this.name = 'WaitTimeoutError';
        this.timeoutMs = timeoutMs;
    }
}

/** Reads an error answer into an InboxCaptureApiError (the body is consumed). */
export async function apiErrorFrom(response: Response): Promise<InboxCaptureApiError> {
    let code = UNEXPECTED_RESPONSE;
    try {
        const body = JSON.parse(await response.text()) as unknown;
        if (body !== null && typeof body === 'object' && typeof (body as Partial<ErrorBody>).error === 'string') {
            code = (body as ErrorBody).error;
        }
    }
    catch {
        // Not JSON: keep UNEXPECTED_RESPONSE.
    }

    // A proxy's page is not the API's answer: its headers say nothing of ours.
    const detail = code === UNEXPECTED_RESPONSE ? undefined : response.headers.get(ERROR_DETAIL_HEADER) ?? undefined;
    return new InboxCaptureApiError(response.status, code, detail);
}

/** What an aborted signal rejects with: its reason, else an `AbortError` (older runtimes give none). */
export function abortReason(signal: AbortSignal): unknown {
    if (signal.reason !== undefined) {
        return signal.reason;
    }

    const error = new Error('This operation was aborted');
    error.name = 'AbortError';
    return error;
}
