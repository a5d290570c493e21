/** Reading the long texts of an `emails` row from SQLite in pieces. */

import { StringDecoder } from 'node:string_decoder';
import type { Knex } from 'knex';
import type { EmailRow } from '../sql/rows';
import { EMAIL_COLUMNS, EMAILS_TABLE } from '../sql/schema';

/**
 * UTF-8 bytes of `body` or `html_body` read in one go; a longer text is read in pieces
 * of this size. node-sqlite3 turns a TEXT value into a JS string on the main thread
 * in one step, which for a 23 MiB body held the event loop for tens of ms; a piece of
 * 4 MiB takes a few, and other requests are served between pieces.
 * Measured: bench/README.md, "Tuned constants › TEXT_PIECE_BYTES".
 */
export const TEXT_PIECE_BYTES = 4 * 1024 * 1024;

/** The two unbounded texts of a row; every other column is bounded by the ingest. */
const LONG_TEXTS = ['body', 'html_body'] as const;
type LongText = typeof LONG_TEXTS[number];

/** A row read with pieceColumns(): a long text is NULL, its length in bytes beside it. */
export type PiecedRow = Omit<EmailRow, LongText> & Record<LongText, string | null> & Record<`${LongText}_bytes`, number | string>;

/**
 * EMAIL_COLUMNS for SQLite, with `body` and `html_body` NULL when longer than a piece
 * (their lengths in bytes beside them): octet_length() reads the value's header only.
 */
export function pieceColumns(knex: Knex): Array<string | Knex.Raw> {
    return EMAIL_COLUMNS.flatMap((column): Array<string | Knex.Raw> => (LONG_TEXTS as readonly string[]).includes(column)
        ? [
            knex.raw(`CASE WHEN octet_length(${column}) <= ${TEXT_PIECE_BYTES} THEN ${column} END AS ${column}`),
            knex.raw(`octet_length(${column}) AS ${column}_bytes`)
        ]
        : [column]);
}

/** Reads bytes [from, from + length) of one text of the row `seq` (1-based, SQL's substr); null when the row is gone. */
export type PieceReader = (column: LongText, seq: number | string, from: number, length: number) => Promise<Buffer | null>;

/** The SELECT of one piece, as bytes (a cast to BLOB: substr() then counts bytes, not characters). */
export function pieceQuery(knex: Knex, column: LongText, seq: number | string, from: number, length: number): Knex.QueryBuilder {
    return knex(EMAILS_TABLE).select(knex.raw(`substr(CAST(${column} AS BLOB), ?, ?) AS piece`, [from, length])).where('seq', seq);
}

/**
 * The row with its long texts read piece by piece (each piece its own query, so the
 * event loop runs between them); null when the row was deleted meanwhile.
 */
export async function completeRow(row: PiecedRow, readPiece: PieceReader): Promise<EmailRow | null> {
    const texts: Partial<Record<LongText, string>> = {};
    for (const column of LONG_TEXTS) {
        const known = row[column];
        if (known !== null) {
            texts[column] = known;
            continue;
        }

        // A piece may end inside a character: the decoder holds its first bytes for the next piece.
        const decoder = new StringDecoder('utf8');
        const bytes = Number(row[`${column}_bytes`]);
        let text = '';
        for (let from = 1; from <= bytes; from += TEXT_PIECE_BYTES) {
            const piece = await readPiece(column, row.seq, from, TEXT_PIECE_BYTES);
            if (piece === null) {
                return null;
            }

            text += decoder.write(piece);
        }

        texts[column] = text + decoder.end();
    }

    const whole: Record<string, unknown> = { ...row, body: texts.body, html_body: texts.html_body };
    delete whole.body_bytes;
    delete whole.html_body_bytes;
    return whole as unknown as EmailRow;
}
