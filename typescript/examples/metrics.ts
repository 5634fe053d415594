import { Keyring, StateSealer } from "mrtr-state";
import { openTelemetryMetrics } from "mrtr-state/opentelemetry";

const ring = Keyring.fromEnv();
const issuer = "https://files.example.com";

// OpenTelemetry: counted by the meter provider your application registered (Prometheus, OTLP, ...).
export const sealer = new StateSealer(ring, { issuer, metrics: openTelemetryMetrics() });

// Anything else: one plain function, called with the event and its attributes.
const counts = new Map<string, number>();
export const counted = new StateSealer(ring, {
  issuer,
  metrics: (event, attributes) => {
    const series = `${event} ${JSON.stringify(attributes)}`; // {"method":"tools/call","reason":"replayed"}
    counts.set(series, (counts.get(series) ?? 0) + 1);
  },
});
