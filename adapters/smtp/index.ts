// Re-exports only: the SMTP adapter, `inbox-capture/smtp`.
export * from './smtp-listener';
export { replyForIngestError } from './smtp-replies';
