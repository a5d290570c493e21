import type { InboxCapture } from '../../lib/service/inbox-capture';
import type { WaitCanceller } from '../../lib/long-poll/wait-canceller';
import type { EmailJsonSource } from './email-json';

/** What every route module of the plugin needs. */
export interface RouteContext {
    capture: InboxCapture;
    /** hapi `routes.prefix` the plugin was registered with, `''` when none: every URL we hand out carries it. */
    prefix: string;
    /** The JSON of the emails answers carry: shared, within the service's memory budget. */
    emailJson: EmailJsonSource;
    /** Byte budget of one list page's JSON (the `maxPageBytes` option). */
    maxPageBytes: number;
    /** Long-polls in flight: aborted when the server stops, so it drains at once. */
    longPolls: Set<WaitCanceller>;
}

/** Tag on every plugin route the OpenAPI document lists (and on no host route). */
export const API_TAG = 'inbox-capture';

// The route groups of the OpenAPI document (Swagger UI sections), as hapi route tags.
export const GROUP_EMAILS = 'emails';
export const GROUP_INBOXES = 'inboxes';
export const GROUP_DOWNLOADS = 'downloads';
export const GROUP_KEYS = 'keys';
export const GROUP_AGENTS = 'agents';
export const GROUP_FAULTS = 'faults';
export const GROUP_SERVICE = 'service';

/** hapi-swagger `security` of the routes that need an API key. */
export const BEARER_SECURITY = [{ bearerAuth: [] }];

/** hapi-swagger `security` of the routes anyone may call: none, said outright (OpenAPI linters want it said). */
export const PUBLIC_SECURITY: Array<Record<string, string[]>> = [];
