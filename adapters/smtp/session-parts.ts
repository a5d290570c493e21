import type { SMTPServerSession } from 'smtp-server';
import { isClientAddress, isHeloName, isMailFrom } from '../../lib/ingest/smtp-client-option';

/**
 * What the copy keeps of the session for the authentication check's SPF (docs/api.md,
 * "Authentication check"): the client's address, its HELO name and the envelope sender
 * (`''` for `<>`). A part the ingest would refuse is left out rather than failing the message.
 */
export function sessionParts(session: SMTPServerSession): { clientAddress?: string; clientHelo?: string; mailFrom?: string } {
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    return {
        ...(isClientAddress(session.remoteAddress) ? { clientAddress: session.remoteAddress } : {}),
        ...(isHeloName(session.hostNameAppearsAs) ? { clientHelo: session.hostNameAppearsAs } : {}),
        ...(isMailFrom(mailFrom) ? { mailFrom } : {})
    };
}
