import * as Fs from 'node:fs/promises';
import * as Path from 'node:path';
import { freePort } from '../test/helpers/net';
import { forkReferenceServer, type ReferenceServer } from './reference-server';
import { tempDir } from '../test/helpers/temp-dir';

/** A running MailDev (npm `maildev` 2.x) to compare with; count() is messages it parsed and stored. */
export type MailDev = ReferenceServer;

/** Starts MailDev in a child process on a free loopback port, mail kept in a fresh temp dir. */
export async function startMailDev(): Promise<MailDev> {
    const dir = await tempDir('bench-maildev');
    const smtpPort = await freePort();
    return forkReferenceServer('MailDev', Path.join(__dirname, 'maildev-child.js'), [String(smtpPort), dir], smtpPort, () => Fs.rm(dir, { recursive: true, force: true }));
}
