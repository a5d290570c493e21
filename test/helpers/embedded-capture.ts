import { openEmbeddedStores } from '../../lib/service/embedded-stores';
import { createInboxCapture, type InboxCapture } from '../../lib/service/inbox-capture';

/** The service on the embedded stores of `dataDir` (created and migrated if need be) for `fn`, closed after. */
export async function withEmbeddedCapture<T>(dataDir: string, fn: (capture: InboxCapture) => Promise<T>): Promise<T> {
    const capture = createInboxCapture(await openEmbeddedStores({ dataDir }));
    try {
        await capture.recordStore.migrate();
        return await fn(capture);
    }
    finally {
        await capture.close();
    }
}
