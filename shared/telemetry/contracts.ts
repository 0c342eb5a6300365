// What telemetry adds to messages and activity inputs: the W3C trace context of the work that sent them and, for a
// turn's activities, when the turn was posted (its duration). Absent whenever telemetry is off.
import { z } from 'zod';

export const traceCarrierSchema = z.object({
  traceparent: z.string().max(128),
  tracestate: z.string().max(512).optional(),
});
export type TraceCarrier = z.infer<typeof traceCarrierSchema>;

/** The `telemetry` field of the chatTurn orchestration's and its activities' inputs. */
export const turnTelemetrySchema = traceCarrierSchema.extend({
  /** When the front door accepted the turn's message (ISO 8601): the turn's duration is measured from it. */
  turnPostedAt: z.string().max(40).optional(),
});
export type TurnTelemetry = z.infer<typeof turnTelemetrySchema>;
