import type { StoreFactory } from '../../../helpers/test-stores';
import { authSuite } from './auth-suite';
import { crossProcessSuite } from './cross-process-suite';
import { downloadsSuite } from './downloads-suite';
import { emailsSuite } from './emails-suite';
import { headersSuite } from './headers-suite';
import { inboxesSuite } from './inboxes-suite';
import type { SuiteLab } from './lab-types';
import { listSuite } from './list-suite';
import { longPollSuite } from './long-poll-suite';
import { searchSuite } from './search-suite';

/**
 * The whole HTTP API of the Hapi plugin against one backend: every rule of docs/api.md,
 * "HTTP API" (and its reasons in docs/design.md) that holds for any record store and blob store.
 */
export function hapiApiSuite(lab: SuiteLab, factory: StoreFactory): void {
    lab.describe(`Hapi plugin API (${factory.name})`, () => {
        let release: (() => Promise<void>) | undefined;

        // One embedded PostgreSQL / s3rver for the whole suite, not one per describe().
        lab.before(async () => {
            release = await factory.hold?.();
        });

        lab.after(async () => {
            await release?.();
        });

        authSuite(lab, factory);
        listSuite(lab, factory);
        emailsSuite(lab, factory);
        headersSuite(lab, factory);
        inboxesSuite(lab, factory);
        downloadsSuite(lab, factory);
        longPollSuite(lab, factory);
        crossProcessSuite(lab, factory);
        searchSuite(lab, factory);
    });
}
