/** Where the standalone service's HTTP side listens when nothing says otherwise. */

/** Loopback by default, so a fresh start exposes nothing to the network (docs/design.md). */
export const DEFAULT_HOST = '127.0.0.1';
/** The standalone service's HTTP port, a common unprivileged development port (docs/design.md). */
export const DEFAULT_HTTP_PORT = 3000;
