/**
 * The counters of `spec/metrics.json` as OpenTelemetry counters, through `@opentelemetry/api` only
 * (an optional peer dependency: `npm install @opentelemetry/api`). Without a meter provider registered
 * by the application (an SDK with an exporter: Prometheus, OTLP, ...), the API's no-op meter makes
 * every count free.
 *
 * ```ts
 * import { openTelemetryMetrics } from "mrtr-state/opentelemetry";
 * const sealer = new StateSealer(ring, { issuer, metrics: openTelemetryMetrics() });
 * ```
 */

import { metrics as otel, type Counter, type MeterProvider } from "@opentelemetry/api";

import { INSTRUMENTS, METRICS_SCOPE, type MetricAttributes, type MetricEvent, type StateMetrics } from "./events.js";

export { EVENTS, INSTRUMENTS, METRICS_SCOPE, type MetricAttributes, type MetricEvent, type StateMetrics } from "./events.js";

/** The version written as the meter's instrumentation scope version. */
const PACKAGE_VERSION = "0.1.0";

/** Options of {@link openTelemetryMetrics}. */
export interface OpenTelemetryMetricsOptions {
  /** Where the counters are made (default the global provider, `metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
}

/**
 * A {@link StateMetrics} that adds 1 to one OpenTelemetry counter per event of {@link INSTRUMENTS}, on
 * the meter `mrtr_state`; give it to a sealer's or a key source's `metrics` option. The counters are
 * made once, here.
 */
export function openTelemetryMetrics(options: OpenTelemetryMetricsOptions = {}): StateMetrics {
  const provider = options.meterProvider ?? otel.getMeterProvider();
  const meter = provider.getMeter(METRICS_SCOPE, PACKAGE_VERSION);
  const counter = (event: MetricEvent): Counter => {
    const { name, unit, description } = INSTRUMENTS[event];
    return meter.createCounter(name, { unit, description });
  };
  const counters: Readonly<Record<MetricEvent, Counter>> = {
    seal: counter("seal"),
    open: counter("open"),
    refusal: counter("refusal"),
    redemption: counter("redemption"),
    store_outage: counter("store_outage"),
    key_refresh: counter("key_refresh"),
  };
  return (event: MetricEvent, attributes: MetricAttributes): void => {
    counters[event].add(1, { ...attributes });
  };
}
