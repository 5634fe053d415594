/**
 * Counters of seals, opens, refusals, redemptions, store outages and key refreshes: the contract of
 * `spec/metrics.json` (the repository's one list, which the Python, Go and Java libraries count too).
 *
 * A {@link StateSealer} made with `metrics` reports every outcome to a {@link StateMetrics}: a plain
 * function `(event, attributes) => void`. Two kinds come with the package:
 *
 * - any function of your own, for a server that counts with something else (or a test);
 * - `openTelemetryMetrics()` of `mrtr-state/opentelemetry`: counters through `@opentelemetry/api`
 *   (an optional peer dependency), exported by whatever meter provider the application registered. A
 *   server that never imports that entry point never loads the API.
 *
 * An attribute value is always one of a small fixed set: the target method (`tools/call`,
 * `prompts/get`, `resources/read`), a reason code of the profile, an outcome word, or the kind of key
 * source. Never a token, a claim value (user, tool name, `jti`), a `kid` or key material, so the
 * counters are safe to export and have a bounded number of series.
 *
 * A metrics function that throws never breaks a seal or an open: the first failure is reported once
 * (its error's class only) and the count is lost.
 */

/** Every event, with the attribute names it carries (`spec/metrics.json`, `events`). */
export const EVENTS = {
  /** A token was minted. */
  seal: ["method"],
  /** A token was presented to `open`, with `outcome` `accepted` or `refused`. */
  open: ["method", "outcome"],
  /** A token was refused, with `reason`, a reason code of the profile. */
  refusal: ["method", "reason"],
  /** A single-use token was redeemed for the first time. */
  redemption: ["method"],
  /** The replay store could not answer, so the token was refused as `store_unavailable`. */
  store_outage: ["method"],
  /** A key source looked for new keys: `source` `remote_jwks` or `key_file`, `outcome` `updated`, `unchanged` or `failed`. */
  key_refresh: ["source", "outcome"],
} as const;

/** The name of one event. */
export type MetricEvent = keyof typeof EVENTS;

/** The attributes of one event: names from {@link EVENTS}, values from the fixed sets of `spec/metrics.json`. */
export type MetricAttributes = Readonly<Record<string, string>>;

/** Receives one event and its attributes. It should return quickly; it must not keep the object. */
export type StateMetrics = (event: MetricEvent, attributes: MetricAttributes) => void;

/** The OpenTelemetry counter of each event: its name, unit and description (`spec/metrics.json`). */
export const INSTRUMENTS: Readonly<Record<MetricEvent, { readonly name: string; readonly unit: string; readonly description: string }>> = {
  seal: { name: "mrtr_state.seals", unit: "{token}", description: "requestState tokens minted" },
  open: { name: "mrtr_state.opens", unit: "{token}", description: "requestState tokens presented, by outcome" },
  refusal: { name: "mrtr_state.refusals", unit: "{token}", description: "requestState tokens refused, by reason code" },
  redemption: { name: "mrtr_state.redemptions", unit: "{token}", description: "single-use requestState tokens redeemed" },
  store_outage: {
    name: "mrtr_state.store_outages",
    unit: "{token}",
    description: "requestState tokens refused because the replay store could not answer",
  },
  key_refresh: { name: "mrtr_state.key_refreshes", unit: "{refresh}", description: "key source refreshes, by outcome" },
};

/** The instrumentation scope (meter name) of the counters. */
export const METRICS_SCOPE = "mrtr_state";

const failed = new WeakSet<StateMetrics>();

/**
 * Report `event` to `metrics`, if any. A function that throws is reported once (its error's class
 * only, through `console.error`) and never rethrown: a counter never breaks a seal or an open.
 */
export function record(metrics: StateMetrics | undefined, event: MetricEvent, attributes: MetricAttributes): void {
  if (metrics === undefined) return;
  try {
    metrics(event, attributes);
  } catch (error) {
    if (!failed.has(metrics)) {
      failed.add(metrics);
      const name = error instanceof Error ? error.name : typeof error;
      console.error(`mrtr-state: the metrics function threw ${name} on ${event}; counts are being lost`);
    }
  }
}

/** Whether `value` can be a sealer's `metrics` option. */
export function checkMetrics(value: unknown): StateMetrics | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") throw new TypeError("metrics must be a function (event, attributes) => void, such as openTelemetryMetrics() of mrtr-state/opentelemetry");
  return value as StateMetrics;
}
