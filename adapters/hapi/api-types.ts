// The JSON shapes the API answers, built from records by email-view.ts; api-schemas.ts
// describes the same shapes for the OpenAPI document.

/** Attachment as the API shows it: a download URL instead of the blob key. */
export interface AttachmentView {
    filename: string;
    contentType: string;
    /** Decoded size in bytes. */
    size: number;
    /** Relative URL of the download, the plugin's route prefix included. */
    url: string;
    /** The part's Content-ID without angle brackets (`cid:` in the HTML); `''` when none. */
    contentId: string;
}

/** The API's email object (docs/design.md: every field always present). */
export interface EmailView {
    messageId: string;
    inbox: string;
    sender: string;
    /** The display name of the first From mailbox; `''` when none. */
    senderName: string;
    recipient: string;
    subject: string;
    body: string;
    htmlBody: string;
    attachments: AttachmentView[];
    /** Unix milliseconds. */
    receivedAt: number;
    /** Relative URL of the raw .eml, the plugin's route prefix included. */
    rawUrl: string;
    /** Links of the HTML, then the text body (EXTENSIONS §1). */
    links: LinkView[];
    /** Candidate one-time codes of the subject, then the body (EXTENSIONS §1). */
    codes: string[];
    /** At most 20 lowercase tags (docs/api.md, "Tags"). */
    tags: string[];
}

/** A link of an email as the API shows it. */
export interface LinkView {
    href: string;
    text: string;
}

/** The list page envelope: `nextCursor` is present exactly when `hasMore` is true. */
export interface EmailPage {
    emails: EmailView[];
    nextCursor?: string;
    hasMore: boolean;
}

/** An inbox as GET /v1/inboxes lists it (EXTENSIONS §3). */
export interface InboxView {
    name: string;
    count: number;
    /** Unix milliseconds of its newest email. */
    lastReceivedAt: number;
}

/** The inbox list envelope: `nextCursor` is present exactly when `hasMore` is true. */
export interface InboxPageView {
    inboxes: InboxView[];
    hasMore: boolean;
    nextCursor?: string;
}
