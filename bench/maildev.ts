import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { forkReferenceServer, type ReferenceServer } from './reference-server';
import { tempDir } from '../test/helpers/temp-dir';

/** The MailDev versions the bench compares with. */
export type MailDevVersion = '2.2.1' | '3.0.0';

/** A running MailDev to compare with; count() is the messages it parsed and stored. */
export interface MailDev extends ReferenceServer {
    version: MailDevVersion;
    /** Its web UI and API, `http://127.0.0.1:<port>`. */
    webBase: string;
    /** The URL of one stored email by its MailDev id (2.2.1: `GET /email/:id`, 3.0.0: `GET /api/email/:id`). */
    emailUrl(id: string): string;
    /** The emails it holds, id and subject (2.2.1: `GET /email`, 3.0.0: `GET /api/email`). */
    listEmails(): Promise<Array<{ id: string; subject?: string }>>;
}

const CHILDREN: Record<MailDevVersion, { module: string; apiPrefix: string }> = {
    '2.2.1': { module: 'maildev-child.js', apiPrefix: '' },
    '3.0.0': { module: 'maildev3-child.js', apiPrefix: '/api' }
};

/** Starts MailDev (`version`) at its defaults in a child process, on free loopback ports, its tmpdir a fresh temp dir. */
export async function startMailDev(version: MailDevVersion): Promise<MailDev> {
    const dir = await tempDir(`bench-maildev-${version}`);
    const { module, apiPrefix } = CHILDREN[version];
    const server = await forkReferenceServer(`MailDev ${version}`, Path.join(__dirname, module), 2, (ports) => [...ports.map(String), dir], () => Fs.rm(dir, { recursive: true, force: true }));
    const webPort = server.ports[1];
    const webBase = `http://127.0.0.1:${webPort}`;
    return {
        ...server,
        version,
        webBase,
        emailUrl: (id) => `${webBase}${apiPrefix}/email/${encodeURIComponent(id)}`,
        async listEmails() {
            const response = await fetch(`${webBase}${apiPrefix}/email`);
            return await response.json() as Array<{ id: string; subject?: string }>;
        }
    };
}
