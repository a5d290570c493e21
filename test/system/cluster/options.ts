import type { ClusterOptions } from './cluster-run';

/** The suite's run: three instances, one kill -9, about 25 s. */
export const SHORT_CLUSTER_OPTIONS: ClusterOptions = {
    instances: 3,
    messages: 200,
    senders: 6,
    inboxes: 12,
    retainedEvery: 4,
    retentionMaxPerInbox: 20,
    attachmentEvery: 5,
    faultAttempts: 30,
    faultTimes: 10,
    wakeEveryMs: 400,
    kills: [0.4],
    restartAfterMs: 500,
    webhookDelayMs: 1000,
    webhookTimeoutMs: 2000,
    deliveryLimitMs: 30_000
};

/** The long run (`npm run soak:cluster`): a kill of each instance in turn under a steady load. */
export const LONG_CLUSTER_OPTIONS: ClusterOptions = {
    instances: 3,
    messages: 10_000,
    senders: 12,
    inboxes: 200,
    retainedEvery: 10,
    retentionMaxPerInbox: 100,
    attachmentEvery: 5,
    faultAttempts: 120,
    faultTimes: 40,
    wakeEveryMs: 500,
    kills: [0.15, 0.3, 0.45, 0.6, 0.75, 0.9],
    restartAfterMs: 2000,
    webhookDelayMs: 200,
    webhookTimeoutMs: 1000,
    deliveryLimitMs: 120_000
};
