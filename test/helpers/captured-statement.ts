import * as Code from '@hapi/code';
import type { Knex } from 'knex';

const { expect } = Code;

/** A statement knex sent, as its driver got it. */
export interface CapturedStatement {
    sql: string;
    bindings: Knex.RawBinding[];
}

/** The one statement `run` sends through `knex` (for plan tests: EXPLAIN what the store really runs). */
export async function capturedStatement(knex: Knex, run: () => Promise<unknown>): Promise<CapturedStatement> {
    const statements: CapturedStatement[] = [];
    const onQuery = (q: CapturedStatement) => statements.push(q);
    knex.on('query', onQuery);
    try {
        await run();
    }
    finally {
        knex.off('query', onQuery);
    }

    expect(statements).to.have.length(1);
    return statements[0]!;
}
