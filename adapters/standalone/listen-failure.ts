/**
 * A listener that cannot bind, said in the operator's terms: which port or address, and
 * which setting chose it (docs/api.md, "Environment variables"), instead of Node's
 * `listen EADDRINUSE` and a stack.
 */

import { settingName } from './serve-flags';

/** A start-up failure whose message is complete in one line: nothing else is worth printing. */
export class StartError extends Error {
    constructor(message: string, options?: { cause?: unknown }) {
        super(message, options);
        this.name = 'StartError';
    }
}

/**
 * `err` from listening on `host`:`port`, chosen by the variable `portVariable`, as a
 * StartError when it is a bind failure an operator fixes by a setting; otherwise `err`.
 */
export function explainListenFailure(err: unknown, host: string, port: number, portVariable: string): unknown {
    const code = (err as NodeJS.ErrnoException | null)?.code;
    const portName = `port ${port} (${settingName(portVariable)})`;
    switch (code) {
        case 'EADDRINUSE':
            return new StartError(`${portName} is already in use on ${host}`, { cause: err });
        case 'EACCES':
            return new StartError(`${portName} needs privileges this process does not have on ${host} (ports below 1024 usually do)`, { cause: err });
        case 'EADDRNOTAVAIL':
            return new StartError(`${host} (${settingName('HOST')}) is not an address of this machine`, { cause: err });
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
            return new StartError(`${host} (${settingName('HOST')}) is not a known host name`, { cause: err });
        default:
            return err;
    }
}
