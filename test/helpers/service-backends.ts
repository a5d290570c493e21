import type * as Lab from '@hapi/lab';
import { startPostgres, type PostgresServer } from './postgres';
import { startS3, type S3Fixture } from './s3';
import { isolatedEnv, postgresS3Env } from './service-env';
import { removeDir, tempDir } from './temp-dir';

/** A backend of the standalone service, by name: a fresh environment for each call. */
export type ServiceBackend = [name: string, env: () => Promise<NodeJS.ProcessEnv>];

/**
 * The two backends an end-to-end test of the standalone service runs on: SQLite and files
 * in a temp data dir, and Postgres (a new database) with S3 (s3rver). Registers the hooks
 * that start Postgres and S3 and remove the data dirs, in the describe() it is called from.
 */
export function serviceBackends(lab: Pick<ReturnType<typeof Lab.script>, 'before' | 'after'>): ServiceBackend[] {
    let postgres: PostgresServer | undefined;
    let s3: S3Fixture | undefined;
    const dirs: string[] = [];
    const dataDir = async () => {
        const dir = await tempDir('service-backend');
        dirs.push(dir);
        return dir;
    };

    lab.before(async () => {
        postgres = await startPostgres();
        s3 = await startS3();
    });

    lab.after(async () => {
        await Promise.all(dirs.map(removeDir));
        await s3?.stop();
        await postgres?.stop();
    });

    return [
        ['SQLite', async () => isolatedEnv({ INBOX_CAPTURE_DATA_DIR: await dataDir() })],
        ['Postgres + S3', async () => postgresS3Env(await postgres!.createDatabase(), s3!, { INBOX_CAPTURE_DATA_DIR: await dataDir() })]
    ];
}
