/**
 * A configuration mistake; its message names the variable and what is wrong, for humans.
 * In a file of its own: the CLI tells it apart from other failures without loading what
 * reads the configuration.
 */
export class ConfigError extends Error {
    constructor(message: string) {
        super(message);
        this.name = 'ConfigError';
    }
}
