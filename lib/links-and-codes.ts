/**
 * `links` and `codes` of an email, worked out from its stored fields: at ingest, for a
 * draft saved without them, and for rows stored before they existed (back-fill, read).
 */

import { extractCodes } from './codes';
import { extractLinks } from './links';
import type { EmailDraft, EmailRecord, Link } from './types';

/** The two fields, as an email record holds them. */
export interface LinksAndCodes {
    links: Link[];
    codes: string[];
}

/** The links and codes of an email with this subject and these bodies. */
export function linksAndCodesOf(fields: { subject: string; body: string; htmlBody: string }): LinksAndCodes {
    return { links: extractLinks(fields.htmlBody, fields.body), codes: extractCodes(fields.subject, fields.body) };
}

/** The draft with its links and codes: kept when given, worked out when absent. */
export function completeDraft(draft: EmailDraft): Omit<EmailRecord, 'messageId'> {
    if (draft.links !== undefined && draft.codes !== undefined) {
        return { ...draft, links: draft.links, codes: draft.codes };
    }

    return { ...draft, ...linksAndCodesOf(draft) };
}
