// inbox-capture/client: the typed HTTP client (EXTENSIONS §4). No runtime dependencies
// and no Node modules: global fetch and Web Crypto only, so it runs in browsers too.

export { InboxCaptureClient } from './client';
export { InboxCaptureApiError, WaitTimeoutError, UNEXPECTED_RESPONSE } from './errors';
export type {
    Attachment, CurrentKey, Email, EmailFilter, EmailPage, EmailsQuery, FetchFunction, Header, Inbox, InboxCaptureClientOptions,
    InboxPage, Link, ListEmailsQuery, ListInboxesQuery, NewInbox, RequestOptions, TimeBound, WaitForEmailOptions
} from './types';
