// The shapes of the send API (docs/api.md, "Send an email"), as the client sends and reads them.

/** One attachment of an email to send: its bytes in base64. */
export interface SendAttachment {
    filename: string;
    contentType?: string;
    contentBase64: string;
}

/** The JSON body of `POST /v1/emails` (docs/api.md, "Send an email"): the server builds the message from it. */
export interface SendEmailInput {
    /** `a@x.test` or `Name <a@x.test>`. */
    from: string;
    /** One address, a comma-separated list, or an array; with `cc`, each maps to an inbox. */
    to: string | string[];
    cc?: string | string[];
    subject: string;
    text?: string;
    html?: string;
    /** More header fields, name to value. */
    headers?: Record<string, string>;
    attachments?: SendAttachment[];
}
