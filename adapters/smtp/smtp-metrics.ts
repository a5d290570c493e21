import { metricsOf, type ServiceMetrics } from '../metrics/service-metrics';

/** Counts a listener's open sessions in its service's metrics (docs/operations.md, "Metrics"). */
export interface SessionMetrics {
    opened(sessionId: string): void;
    closed(sessionId: string): void;
}

/**
 * The open-sessions gauge of `service`'s metrics, kept by one listener. A session is taken
 * off the metrics it was counted in, so metrics turned on while it was open never go below 0.
 */
export function sessionMetrics(service: object): SessionMetrics {
    const counted = new Map<string, ServiceMetrics>();
    return {
        opened(sessionId) {
            const metrics = metricsOf(service);
            if (metrics) {
                metrics.smtpSession(1);
                counted.set(sessionId, metrics);
            }
        },
        closed(sessionId) {
            counted.get(sessionId)?.smtpSession(-1);
            counted.delete(sessionId);
        }
    };
}

/** `callback` for a fault rule's reply in place of a message's: counted as refused for `fault`. */
export function countedRuleRefusal(service: object, callback: (err?: Error | null) => void): (reply: Error) => void {
    return (reply) => {
        metricsOf(service)?.messageRejected('fault');
        callback(reply);
    };
}
