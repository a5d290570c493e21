import { isInboxCaptureError } from '../../lib/errors';

/** An error smtp-server turns into the reply `<responseCode> <message>`. */
export interface SmtpReplyError extends Error {
    responseCode: number;
}

/** Builds the error a smtp-server hook passes to its callback to send that reply. */
export function smtpReply(responseCode: number, message: string): SmtpReplyError {
    return Object.assign(new Error(message), { responseCode });
}

/** The reply for a message over the size cap (RFC 5321 section 4.5.3.1.10: 552, permanent). */
export function tooLargeReply(maxMessageBytes: number): SmtpReplyError {
    return smtpReply(552, `Error: message exceeds fixed maximum message size ${maxMessageBytes}`);
}

/** The reply for a message the memory budget cannot hold now (RFC 5321 section 4.2.2: 452, insufficient system storage, temporary). */
export function busyReply(): SmtpReplyError {
    return smtpReply(452, 'Error: too many messages in flight, try again later');
}

/** The reply for a failure the sender should retry later: nothing was stored. */
export function tempFailReply(): SmtpReplyError {
    return smtpReply(451, 'Error: local storage failure, try again later');
}

/**
 * The one place where an ingest failure becomes an SMTP reply. Refusals of the
 * message itself are permanent (5xx); everything else, storage failures and bugs
 * alike, is temporary (451) so that the sender keeps the message and retries:
 * a capture service must not lose mail because its disk or database hiccupped.
 * The reply never carries the cause; the caller logs it.
 */
export function replyForIngestError(err: unknown, maxMessageBytes: number): SmtpReplyError {
    if (isInboxCaptureError(err, 'TOO_LARGE')) {
        return tooLargeReply(maxMessageBytes);
    }

    if (isInboxCaptureError(err, 'BUSY')) {
        return busyReply();
    }

    if (isInboxCaptureError(err, 'NO_RECIPIENT')) {
        return smtpReply(550, 'Error: no recipient maps to an inbox');
    }

    return tempFailReply();
}
