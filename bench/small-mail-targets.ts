/**
 * The small-mail targets (1 KB and 10 KB over a reused connection, every `250` durable and
 * indexed), judged the same way by our generator's cells and smtp-source's: against our own
 * floor measured in the same run (bench/floor-server.ts) and against MailDev 3.0.0.
 */

import type { TargetCheck } from './report';
import { fmt } from './stats';

/** Ours ÷ the floor, msg/s, at every C of a small-mail target. */
export const FLOOR_SHARE_TARGET = 0.9;
/** Our server CPU per message ÷ the floor's, at most. */
export const FLOOR_CPU_FACTOR = 1.2;
/** Ours ÷ MailDev 3.0.0, msg/s, at each C with a target. */
export const VS_MAILDEV3_TARGET: Readonly<Record<number, number>> = { 4: 0.9, 16: 1.3 };

/** What one small-mail cell measured: ratios (NaN when a server did not run) and CPU per message, ms. */
export interface SmallMailCell {
    /** e.g. `text-1k C=16` or `smtp-source -d, 1 KB C=16`. */
    where: string;
    concurrency: number;
    vsFloor: number;
    vsMaildev3: number;
    oursCpuMs: number;
    floorCpuMs: number;
    /** The msg/s behind the ratios, for the reader. */
    rates: string;
    /**
     * The floor with our storage obligations in the same cell (floor-store.ts), when it ran:
     * its msg/s ÷ the floor's and ours ÷ its; its CPU per message, ms. Read beside the
     * targets, not judged: the targets stay the issue's.
     */
    obligations?: { vsFloor: number; oursVs: number; cpuMs: number };
}

/** The target checks of one cell; none at a C without a target. */
export function smallMailChecks(cell: SmallMailCell, smoke: boolean): TargetCheck[] {
    const vsMaildev3 = VS_MAILDEV3_TARGET[cell.concurrency];
    if (vsMaildev3 === undefined) {
        return [];
    }

    // A server that did not run (--refs without the floor) makes its target unmeasured, not failed.
    const judge = (value: number, met: boolean) => (smoke || Number.isNaN(value) ? null : met);
    const cpuRatio = cell.oursCpuMs / cell.floorCpuMs;
    const o = cell.obligations;
    const rateBeside = o ? `; the floor with our storage obligations: ${fmt(o.vsFloor * 100)} % of the floor, ours ${fmt(o.oursVs * 100)} % of it` : '';
    const cpuBeside = o ? `; the floor with our storage obligations: ${fmt(o.cpuMs / cell.floorCpuMs)}× the floor, ours ${fmt(cell.oursCpuMs / o.cpuMs)}× it` : '';
    return [
        {
            target: `${cell.where}: ours (SQLite, every 250 durable and indexed) ≥ ${FLOOR_SHARE_TARGET * 100} % of the floor's msg/s`,
            measured: `${fmt(cell.vsFloor * 100)} % ${cell.rates}${rateBeside}`,
            met: judge(cell.vsFloor, cell.vsFloor >= FLOOR_SHARE_TARGET)
        },
        {
            target: `${cell.where}: our server CPU per message ≤ ${FLOOR_CPU_FACTOR}× the floor's`,
            measured: `${fmt(cpuRatio)}× (${fmt(cell.oursCpuMs)} vs ${fmt(cell.floorCpuMs)} ms/msg)${cpuBeside}`,
            met: judge(cpuRatio, cpuRatio <= FLOOR_CPU_FACTOR)
        },
        {
            target: `${cell.where}: ours ≥ ${vsMaildev3}× MailDev 3.0.0 msg/s`,
            measured: `${fmt(cell.vsMaildev3)}×`,
            met: judge(cell.vsMaildev3, cell.vsMaildev3 >= vsMaildev3)
        }
    ];
}
