// The public API of the core, listed name by name: what is not here is internal and may
// change without notice. Store drivers have their own subpath exports (package.json), so
// an app using one driver never loads the others' dependencies; the Hapi plugin is
// `inbox-capture/hapi`, the SMTP listener `inbox-capture/smtp`.

// The service.
export { createInboxCapture, type InboxCapture, type InboxCaptureOptions } from './service/inbox-capture';
export type { IngestOptions } from './ingest/ingest';
export { createMessageBudget, type MessageBudget, type MessageReservation } from './util/message-budget';
export { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_BUDGET_BYTES } from './defaults';
export type { RetentionOptions, RetentionPolicy } from './service/retention';
export type { OrphanSweepOptions } from './service/background-sweeps';

// Records and queries.
export type { ApiKeyInfo, CursorPosition, KeyScope, EmailDraft, EmailRecord, Link, ListQuery, RecordPage, StoredAttachment } from './types';
export { encodeCursor, decodeCursor } from './cursor/email-cursor';
export type { HeaderField } from './mime/header-fields';

// Links and codes of an email (docs/api.md, "Links and codes"), as ingest works them out.
export { extractLinks } from './extract/links';
export { extractCodes } from './extract/codes';
export type { InboxPage, InboxPosition, InboxQuery, InboxSummary } from './types';
export { encodeInboxCursor, decodeInboxCursor } from './cursor/inbox-cursor';

// Search and tags (docs/api.md, "Search"): a `q` parsed into the terms ListQuery takes.
export { parseSearchQuery } from './search/parse-query';
export { SearchSyntaxError, isSearchSyntaxError } from './search/search-syntax-error';
export type { HasWhat, SearchTerm, TextField } from './types';
export { isValidTag } from './identity/tags';

// Errors.
export { InboxCaptureError, isInboxCaptureError, type InboxCaptureErrorCode } from './errors';

// Inboxes, ids and keys.
export { defaultInboxFromAddress, isValidInbox, MAX_INBOX_LENGTH, MAX_RECIPIENTS, type InboxFromAddress } from './identity/recipients';
export { deriveMessageId, generateMessageId } from './identity/ids';
export { generateApiKey, hashApiKey } from './service/keys';

// Waiting for mail.
export { createNotifier, type Notifier } from './long-poll/notifier';
export { createLongPoller, type LongPoller, type WaitOptions } from './long-poll/poller';
export { WaitCanceller } from './long-poll/wait-canceller';

// The store interfaces a driver implements.
export type { RecordStore, SaveResult } from './record-store/record-store';
export type { BlobStore, DownloadLink, LinkOptions, SelfServedBlobStore, SignedLinkQuery, SignedLinkTarget, UrlLink } from './blob-store/blob-store';
