// Re-exports only. Store drivers have their own subpath exports so that an app
// using one driver never loads the others' dependencies.
export * from './types';
export * from './errors';
export * from './cursor';
export * from './ids';
export * from './keys';
export * from './recipients';
export * from './notifier';
export * from './long-poll/poller';
export { FIRST_CHECK_MS, MAX_CHECK_MS } from './long-poll/waiters';
export { MAX_PROBES_IN_FLIGHT, VERSION_SHARE_MS } from './long-poll/probe-limiter';
export * from './long-poll/wait-canceller';
export * from './ingest';
export * from './inbox-capture';
export type { RecordStore, SaveResult } from './record-store/record-store';
export type { BlobStore, DownloadLink, LinkOptions, SelfServedBlobStore, UrlLink } from './blob-store/blob-store';
export type { SignedLinkQuery, SignedLinkTarget } from './blob-store/signed-links';
