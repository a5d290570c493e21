/** The SMTP listener's defaults and fixed limits, each written once. */

import { MAX_RECIPIENTS } from '../../lib/identity/recipients';

/** Default SMTP port of the standalone service: unprivileged, the usual "submission for tests" port. */
export const DEFAULT_SMTP_PORT = 2525;
/** Recipients per message: the core's cap on copies of one message (RFC 5321 section 4.5.3.1.8: a server must accept at least 100). */
export const DEFAULT_MAX_RECIPIENTS = MAX_RECIPIENTS;
/** Concurrent SMTP connections; beyond it a client gets 421 and retries later. */
export const DEFAULT_MAX_CONNECTIONS = 100;
/** Milliseconds a client may stay silent. RFC 5321 section 4.5.3.2.7 asks servers to wait 5 minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
/**
 * Milliseconds a client may take to send one line, command or message text, from its
 * first byte to its line end. The same 5 minutes as the idle timeout: no real client
 * comes near it (a 25 MiB message in one line still only needs 85 KB/s), but a client
 * trickling a byte every few seconds, which the idle timeout never catches, is cut off.
 */
export const DEFAULT_LINE_TIMEOUT_MS = 5 * 60_000;
/**
 * Longest command line, bytes; a longer one gets 421 and the connection is closed, and
 * nothing past it is buffered. RFC 5321 section 4.5.3.1.4 allows 512 octets for a command, but
 * RFC 4954 section 4 lets an AUTH line reach 12,288: 16 KiB covers both (smtp-server's own default).
 */
export const MAX_COMMAND_LINE_BYTES = 16 * 1024;
/** Text after the host name in the 220 greeting. */
export const SMTP_BANNER = 'inbox-capture: every message is captured, none is relayed';
