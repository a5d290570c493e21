/** Port `createPop3Listener()` listens on when none is given (the program leaves POP3 off unless its port is set). */
export const DEFAULT_POP3_PORT = 1110;
/**
 * Longest command line, octets, its CRLF included: RFC 2449's limit for clients, which
 * keeps what a session buffers before a line ends small.
 */
export const MAX_POP3_LINE_BYTES = 255;
/**
 * Commands one session may send. Enough for a client to LIST, UIDL, TOP, RETR and DELE
 * every message of a full maildrop; a session past it is answered and closed.
 */
export const DEFAULT_MAX_POP3_COMMANDS = 10_000;
/** Emails in a maildrop: the inbox's newest, taken at PASS. */
export const MAILDROP_SIZE = 1_000;
/** Concurrent connections; more are answered `-ERR` and closed. */
export const DEFAULT_MAX_POP3_CONNECTIONS = 100;
/** Milliseconds of client silence before a session is closed (RFC 1939 asks for at least ten minutes). */
export const DEFAULT_POP3_IDLE_TIMEOUT_MS = 600_000;
/** Milliseconds a wrong USER/PASS waits before its `-ERR`, so that guesses come slowly even from many addresses. */
export const DEFAULT_POP3_AUTH_FAILURE_DELAY_MS = 1_000;
