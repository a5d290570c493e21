import { EXIT_OK, write, type Command } from '../command';

/** `migrate`: creates or upgrades the schema, for deploy steps that migrate before starting. */
export const migrate: Command = {
    name: 'migrate',
    summary: 'create or upgrade the database schema',
    usage: 'migrate',
    details: [
        'Creates or upgrades the record store schema (SQLite in the data dir, or',
        'Postgres with DATABASE_URL). Safe to run any number of times. The service',
        'and every other command also migrate on start; this is for deploy steps.',
        'After an upgrade that fills in what stored emails lack, that can take',
        'minutes over a million emails: on a terminal, stderr shows how far it is.'
    ],
    positionals: [0, 0],
    run({ io, withCapture }) {
        // withCapture migrates before calling us: nothing else to do.
        return withCapture(async () => {
            await write(io.stdout, 'schema is up to date\n');
            return EXIT_OK;
        });
    }
};
