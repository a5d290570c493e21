import type { CpuProfile, ProfileWindow } from './cpu-profile';

/**
 * Each sample of `profile` inside `window` (ms after the profile started): its node and its
 * time, µs. timeDeltas[i] is the time since the previous sample, so the time of sample i is
 * timeDeltas[i + 1], the wait until the next one.
 */
export function* samplesInWindow(profile: CpuProfile, window: ProfileWindow): Generator<{ node: number; us: number }> {
    let at = 0;
    for (let i = 0; i < profile.samples.length; i++) {
        at += (profile.timeDeltas[i] ?? 0) / 1000;
        if (at >= window.fromMs && at <= window.toMs) {
            yield { node: profile.samples[i]!, us: profile.timeDeltas[i + 1] ?? 0 };
        }
    }
}
