// Re-exports only.
export { plugin, plugin as inboxCapturePlugin, PLUGIN_NAME, type InboxCapturePluginApi } from './plugin';
export type { InboxCapturePluginOptions, PublicRoutesOptions } from './options-schema';
export { AUTH_SCHEME, AUTH_STRATEGY, type ApiKeyCredentials } from './auth-scheme';
export type { ApiErrorCode } from './error-mapping';
export { attachmentUrl, rawUrl, toEmailPage, toEmailView } from './email-view';
export type { AttachmentView, EmailPage, EmailView } from './api-types';
