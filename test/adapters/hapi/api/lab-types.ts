import type * as Lab from '@hapi/lab';

/** The parts of a lab script a shared suite registers with. */
export type SuiteLab = Pick<Lab.script.Script, 'describe' | 'it' | 'before' | 'after'>;
