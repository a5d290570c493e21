/**
 * The literals of a planned insert's row and of a staged blob, for a write tail of SQL
 * text (batch-sql.ts): the careful way's batch that only adds rows, and a batch too large
 * for the save's prepared insert (save-rows.ts), send their writes and the COMMIT as one
 * text (docs/design.md, "SQLite connections").
 */

import type { StagedBlob } from '../../blob-store/blob-store';
import type { StoredAttachment } from '../../types';
import { toInsertRow } from '../sql/rows';
import type { PlannedInsert } from '../sql/save-plan';
import { insertValues } from './batch-sql';
import { MAX_TAIL_CHARS, sqlBlob, sqlString, sqlValue } from './sql-literals';

/** A planned insert's row as a `VALUES` tuple; undefined when a value cannot be a literal (the batch then binds). */
export function rowTuple(insert: PlannedInsert, json: Map<StoredAttachment[], string>): string | undefined {
    const { draft } = insert;
    if (draft.body.length + draft.htmlBody.length + draft.searchText.length > MAX_TAIL_CHARS) {
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
    // Bytes past the bound are not written out at all.
    const [key, contentType] = [sqlString(blob.key), sqlString(blob.contentType)];
    return blob.content.length * 2 > MAX_TAIL_CHARS || key === undefined || contentType === undefined
        ? undefined
        : `(${key}, ${sqlBlob(blob.content)}, ${blob.content.length}, ${contentType}, ${modifiedAt})`;
}
