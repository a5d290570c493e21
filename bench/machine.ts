import * as Os from 'node:os';

/** One line on where the figures come from: CPU, cores, memory, Node, load. */
export function describeMachine(): string {
    const cpus = Os.cpus();
    const model = cpus[0]?.model.trim() ?? 'unknown CPU';
    const load = Os.loadavg().map((l) => l.toFixed(2)).join(' ');
    return `machine: ${model}, ${cpus.length} cores, ${(Os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
        `${Os.type()} ${Os.release()}, node ${process.version}, load average ${load}`;
}
