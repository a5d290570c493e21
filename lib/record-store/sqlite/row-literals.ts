/**
 * The literals of a delivery's rows and staged blobs, written when the delivery joins
 * its batch rather than when the batch runs: a batch waits while the one before it
 * runs on SQLite's thread, and the event loop is mostly idle then, so the escaping and
 * hex of its texts is done by the time its turn comes, which then only joins them
 * (docs/design.md, "SQLite connections").
 */

import type { StagedBlob } from '../../blob-store/blob-store';
import { sha256Hex } from '../../identity/ids';
import type { EmailDraft, StoredAttachment } from '../../types';
import { toInsertRow } from '../sql/rows';
import { recordOfDraft, type PlannedInsert } from '../sql/save-plan';
import { insertValues } from './batch-sql';
import { MAX_TAIL_CHARS, sqlBlob, sqlString, sqlValue } from './sql-literals';

// INSERT_COLUMNS starts with message_id and message_id_hash, the two the plan chooses;
// the rest follow from the draft alone.
const CHOSEN_COLUMNS = 2;

// Each draft's row literal after its chosen columns (`, …)`), null when it has none
// (a value no literal carries, or a text past the bound); each blob's tuple but its
// modification time.
const rowRests = new WeakMap<EmailDraft, string | null>();
const blobHeads = new WeakMap<StagedBlob, string | null>();

/** Writes the literals of `drafts`' rows and of `blobs` ahead of their batch (rowTuple() and blobTuple() read them). */
export function prerenderLiterals(drafts: readonly EmailDraft[], blobs: readonly StagedBlob[]): void {
    // Copies of one message share their texts (the same strings): each is escaped once.
    // Compared by ===, which is immediate for the same string, where a Map would hash it.
    const last: unknown[] = [];
    const lastLiterals: (string | undefined)[] = [];
    const literal = (value: unknown, column: number): string | undefined => {
        if (typeof value !== 'string' || value !== last[column]) {
            last[column] = value;
            lastLiterals[column] = sqlValue(value);
        }

        return lastLiterals[column];
    };

    const json = new Map<StoredAttachment[], string>();
    for (const draft of drafts) {
        if (!rowRests.has(draft) && textChars(draft) >= PRERENDER_CHARS) {
            rowRests.set(draft, textChars(draft) <= MAX_TAIL_CHARS ? rowRest(draft, json, literal) : null);
        }
    }

    for (const blob of blobs) {
        if (!blobHeads.has(blob) && blob.content.length >= PRERENDER_CHARS) {
            blobHeads.set(blob, blobHead(blob));
        }
    }
}

/**
 * A planned insert's row as a `VALUES` tuple, from its draft's prerendered literals when
 * it has them; undefined when a value cannot be a literal (the batch then binds).
 */
export function rowTuple(insert: PlannedInsert, json: Map<StoredAttachment[], string>): string | undefined {
    const rest = rowRests.get(insert.draft);
    if (rest === null) {
        return undefined;
    }

    if (rest !== undefined) {
        const messageId = sqlValue(insert.record.messageId);
        return messageId === undefined ? undefined : `(${messageId}, '${insert.messageHash}'${rest}`;
    }

    if (textChars(insert.draft) > MAX_TAIL_CHARS) {
        return undefined;
    }

    const literals: string[] = [];
    for (const value of insertValues(toInsertRow(insert, json))) {
        const literal = sqlValue(value);
        if (literal === undefined) {
            return undefined;
        }

        literals.push(literal);
    }

    return `(${literals.join(', ')})`;
}

/** A staged blob's upsert tuple, modified at `modifiedAt`; undefined when it cannot be a literal. */
export function blobTuple(blob: StagedBlob, modifiedAt: number): string | undefined {
    const head = blobHeads.get(blob) ?? blobHead(blob);
    return head === null ? undefined : `${head}${modifiedAt})`;
}

/**
 * Characters (or bytes) from which a draft's texts or a blob are written ahead: below it
 * the literals cost less than keeping them until the batch runs (they outlive a young
 * garbage collection or two then), bench/README.md, "literals written ahead".
 */
const PRERENDER_CHARS = 4096;

// The characters of a draft's long texts: too many, and its batch binds them instead.
function textChars(draft: EmailDraft): number {
    return draft.body.length + draft.htmlBody.length + draft.searchText.length;
}

// A blob's tuple but its modification time; null when it is no literal.
function blobHead(blob: StagedBlob): string | null {
    // Bytes past the bound are not written out at all.
    const [key, contentType] = [sqlString(blob.key), sqlString(blob.contentType)];
    return blob.content.length * 2 > MAX_TAIL_CHARS || key === undefined || contentType === undefined
        ? null
        : `(${key}, ${sqlBlob(blob.content)}, ${blob.content.length}, ${contentType}, `;
}

function rowRest(draft: EmailDraft, json: Map<StoredAttachment[], string>, literal: (value: unknown, column: number) => string | undefined): string | null {
    const { record, searchText } = recordOfDraft(draft, '');
    const values = insertValues(toInsertRow({ record, searchText, sourceHash: sha256Hex(draft.sourceId), messageHash: '' }, json));
    let rest = '';
    for (let i = CHOSEN_COLUMNS; i < values.length; i++) {
        const value = literal(values[i], i);
        if (value === undefined) {
            return null;
        }

        rest += `, ${value}`;
    }

    return `${rest})`;
}
