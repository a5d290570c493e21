import { ToolError } from './mail-access';

// How get_attachment hands an attachment to an agent (docs/api.md, "MCP tools"): text an
// agent reads as it is, else the bytes as an embedded resource, within bounds a model's
// context and the JSON-RPC message can carry.

/** Largest attachment given as text, bytes: 1 MiB of text is already far more than a model reads at once. */
export const MAX_TEXT_ATTACHMENT_BYTES = 1024 * 1024;
/** Largest attachment given at all, bytes: 10 MiB is about 13.4 MiB of base64 in one JSON-RPC message. */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

/** text/*, JSON and XML, with or without a `+json`/`+xml` suffix type. */
export function isTextual(contentType: string): boolean {
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    return type.startsWith('text/') || /^application\/(?:json|xml)$/.test(type) || /\+(?:json|xml)$/.test(type);
}

/** A text block, or a resource block with the bytes in base64. */
export type AttachmentBlock =
    | { type: 'text'; text: string }
    | { type: 'resource'; resource: { uri: string; mimeType: string; blob: string } };

/** The URI an attachment's resource block carries: names it, not a way to fetch it. */
export function attachmentUri(messageId: string, filename: string): string {
    return `inbox-capture://emails/${encodeURIComponent(messageId)}/attachments/${encodeURIComponent(filename)}`;
}

/**
 * Throws ATTACHMENT_TOO_LARGE for an attachment over MAX_ATTACHMENT_BYTES, before anything
 * is downloaded.
 */
export function checkAttachmentSize(size: number): void {
    if (size > MAX_ATTACHMENT_BYTES) {
        throw new ToolError('ATTACHMENT_TOO_LARGE', `the attachment has ${size} bytes; get_attachment gives at most ${MAX_ATTACHMENT_BYTES} (download it over the HTTP API instead)`);
    }
}

/**
 * Text for a textual attachment of at most MAX_TEXT_ATTACHMENT_BYTES that is valid UTF-8,
 * else an embedded resource with the bytes in base64.
 */
export function attachmentBlock(meta: { messageId: string; filename: string; contentType: string }, bytes: Uint8Array): AttachmentBlock {
    if (isTextual(meta.contentType) && bytes.length <= MAX_TEXT_ATTACHMENT_BYTES) {
        try {
            return { type: 'text', text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes) };
        }
        catch {
            // Another charset: the agent gets the bytes as they are.
        }
    }

    return {
        type: 'resource',
        resource: { uri: attachmentUri(meta.messageId, meta.filename), mimeType: meta.contentType, blob: Buffer.from(bytes).toString('base64') }
    };
}
