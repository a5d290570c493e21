/** Creating a SQLite database file private before SQLite opens it. */

import { closeSync, constants as fsConstants, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorCode } from './error-code';
import { O_NOFOLLOW, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './node-fs';

/**
 * Creates `filename` as an empty file of mode 0600 (and its missing directories 0700)
 * unless it exists. SQLite would create a new database 0644 less the umask, and it
 * gives the -wal, -shm and -journal files it makes later exactly the database file's
 * mode: a database made private here keeps all of them private, whatever the umask
 * or the directory's mode, without touching the process-wide umask. An empty file is
 * a valid empty database. An existing file keeps the mode it has (an operator's choice).
 */
export function createPrivateDatabaseFile(filename: string): void {
    mkdirSync(dirname(filename), { recursive: true, mode: PRIVATE_DIR_MODE });
    let fd: number;
    try {
        fd = openSync(filename, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
    }
    catch (err) {
        if (errorCode(err) === 'EEXIST') {
            return;
        }

        throw err;
    }

    try {
        // The mode given to open() passes through the umask (0277 would leave it unwritable); this does not.
        fchmodSync(fd, PRIVATE_FILE_MODE);
    }
    finally {
        closeSync(fd);
    }
}
