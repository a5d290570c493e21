// inbox-capture/client: the typed HTTP client. No runtime dependencies
// and no Node modules: global fetch and Web Crypto only, so it runs in browsers too.

export { InboxCaptureClient } from './client';
export { InboxCaptureApiError, WaitTimeoutError, UNEXPECTED_RESPONSE } from './errors';
export { DEFAULT_MAIL_DOMAIN } from './new-inbox';
export type {
    ApiErrorCode, Attachment, CheckHtmlOptions, CurrentKey, Email, EmailFilter, EmailPage, EmailsQuery, ErrorBody, FaultMatch, FaultReply, FaultRule, FaultRuleInput,
    FetchFunction, Header, HtmlCheck, HtmlFinding, Inbox, DeleteInboxOptions, InboxCaptureClientOptions, InboxPage, Link, LinkCheck, LinkChecks, AuthCheck, AuthSpf, AuthDkim, AuthDmarc, AuthArc, AuthResult, ListEmailsQuery, ListInboxesQuery, NewInbox,
    RequestOptions, SeenBody, SentEmail, SentEmails, TagsBody, TimeBound, WaitForEmailOptions
} from './types';
export type { SendAttachment, SendEmailInput } from './send-types';
