import type { S3Fixture } from './s3';

/**
 * The environment of a service or CLI child: this process's, without anything that could
 * redirect its stores or ports (AWS_*, S3_*, DATABASE_URL, INBOX_CAPTURE_*, HOST, PORT,
 * SMTP_*, PG*), then `vars`.
 */
export function isolatedEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
        if (!/^(AWS_|S3_|DATABASE_URL$|INBOX_CAPTURE_|HOST$|PORT$|SMTP_|PG)/.test(name)) {
            env[name] = value;
        }
    }

    return { ...env, ...vars };
}

/** The variables that point a child's blob store at an s3rver fixture. */
export function s3Env(s3: S3Fixture): Record<string, string> {
    return {
        S3_BUCKET: s3.bucket,
        S3_ENDPOINT: s3.endpoint,
        S3_FORCE_PATH_STYLE: 'true',
        S3_REGION: 'us-east-1',
        // s3rver accepts any signature; the SDK's default chain reads these.
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        // Never ask an instance metadata service for anything.
        AWS_EC2_METADATA_DISABLED: 'true'
    };
}

/** isolatedEnv() for records in Postgres and blobs in an s3rver bucket. */
export function postgresS3Env(databaseUrl: string, s3: S3Fixture, vars: Record<string, string> = {}): NodeJS.ProcessEnv {
    return isolatedEnv({ DATABASE_URL: databaseUrl, ...s3Env(s3), ...vars });
}
