/**
 * The settings `inbox-capture serve` also takes as flags. A flag is another name for its
 * environment variable, not a second setting: the flags are laid over the environment and
 * readEnvConfig reads the result, so each default and each check stays in one place
 * (docs/api.md, "Environment variables").
 */

/** One flag of `serve` and the variable it sets. */
export interface ServeFlag {
    /** The long option without its dashes, e.g. `port`. */
    flag: string;
    variable: string;
    /** Its value in help, e.g. `<port>`. */
    value: string;
}

/** The flags, in the order help lists them. */
export const SERVE_FLAGS: readonly ServeFlag[] = [
    { flag: 'port', variable: 'PORT', value: '<port>' },
    { flag: 'smtp-port', variable: 'SMTP_PORT', value: '<port>' },
    { flag: 'host', variable: 'HOST', value: '<address>' },
    { flag: 'data-dir', variable: 'INBOX_CAPTURE_DATA_DIR', value: '<dir>' }
];

/** A setting's names for messages: `PORT / --port` when a flag sets it too, else the variable alone. */
export function settingName(variable: string): string {
    const found = SERVE_FLAGS.find((f) => f.variable === variable);
    return found ? `${variable} / --${found.flag}` : variable;
}

/** `env` with the flags given laid over it: a flag wins over its variable. */
export function withServeFlags(env: NodeJS.ProcessEnv, values: Record<string, unknown>): NodeJS.ProcessEnv {
    const result = { ...env };
    for (const { flag, variable } of SERVE_FLAGS) {
        const value = values[flag];
        if (typeof value === 'string') {
            result[variable] = value;
        }
    }

    return result;
}
