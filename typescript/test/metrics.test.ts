/**
 * The counters against their one contract, spec/metrics.json: read back through OpenTelemetry's own
 * SDK (a MeterProvider with an in-memory MetricReader) and through the plain callback. About 0.2 s.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, it, mock } from "node:test";

import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type MetricData } from "@opentelemetry/sdk-metrics";

import {
  EVENTS,
  INSTRUMENTS,
  InvalidRequestState,
  Keyring,
  MemoryReplayStore,
  METRICS_SCOPE,
  ReplayStoreError,
  StateSealer,
  type MetricAttributes,
  type MetricEvent,
  type ReplayStore,
  type SealerOptions,
} from "../src/index.js";
import { openTelemetryMetrics } from "../src/metrics/opentelemetry.js";
import { readVectors } from "./vectors.js";

interface Contract {
  scope: string;
  attributes: Record<string, string[]>;
  events: Record<string, { instrument: string; unit: string; description: string; attributes: Record<string, string> }>;
}

const CONTRACT: Contract = JSON.parse(
  readFileSync(process.env.MRTR_STATE_METRICS ?? fileURLToPath(new URL("../../../spec/metrics.json", import.meta.url)), "utf8"),
);
const keys = readVectors("keys.json");
const RING = Keyring.fromJwks({ keys: [keys.eddsa, keys.hs256] });
const ISSUER = "https://mcp.example.com";
const NOW = 1_767_225_600;
const USER = "alice@example.com";
const TOOL = "deploy-prod";
const ARGS = { env: "prod" };

/** A reader that only collects when asked: OpenTelemetry's in-memory way to read counts back. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

async function collected(reader: CollectingReader): Promise<MetricData[]> {
  const { resourceMetrics, errors } = await reader.collect();
  assert.deepEqual(errors, []);
  const scopes = resourceMetrics.scopeMetrics.filter((scope) => scope.scope.name === CONTRACT.scope);
  assert.equal(scopes.length, 1, "one instrumentation scope named as the contract says");
  return scopes[0]!.metrics;
}

/** A store that cannot answer, as Redis away. */
const DOWN: ReplayStore = {
  redeem(): boolean {
    throw new ReplayStoreError("the test store is down");
  },
};

function sealer(metrics: SealerOptions["metrics"], replayStore: ReplayStore = new MemoryReplayStore({ clock: () => NOW })): StateSealer {
  return new StateSealer(RING, { issuer: ISSUER, clock: () => NOW, replayStore, metrics });
}

/** One token of each outcome: what a server sees in a short day. Returns nothing; the counters tell. */
async function exercise(metrics: SealerOptions["metrics"]): Promise<void> {
  const tools = sealer(metrics);
  const token = await tools.seal({ step: 1 }, { user: USER, tool: TOOL, arguments: ARGS });
  await tools.open(token, { user: USER, tool: TOOL, arguments: ARGS, consume: true });
  await assert.rejects(tools.open(token, { user: USER, tool: TOOL, arguments: ARGS, consume: true }), { reason: "replayed" });
  await assert.rejects(tools.open(token, { user: "mallory", tool: TOOL, arguments: ARGS }), { reason: "wrong_user" });
  await assert.rejects(tools.open("not a token", { user: USER, prompt: "greet" }), { reason: "malformed" });
  const prompt = await tools.seal({ step: 1 }, { user: USER, prompt: "greet", arguments: {} });
  await tools.open(prompt, { user: USER, prompt: "greet", arguments: {} });
  const down = sealer(metrics, DOWN);
  const resource = await down.seal(null, { user: USER, resource: "file:///etc/motd" });
  await assert.rejects(down.open(resource, { user: USER, resource: "file:///etc/motd", consume: true }), { reason: "store_unavailable" });
}

/** What {@link exercise} must count, as `instrument {attributes}` lines. */
const EXPECTED = new Map<string, number>([
  ['mrtr_state.seals {"method":"tools/call"}', 1],
  ['mrtr_state.seals {"method":"prompts/get"}', 1],
  ['mrtr_state.seals {"method":"resources/read"}', 1],
  ['mrtr_state.opens {"method":"tools/call","outcome":"accepted"}', 1],
  ['mrtr_state.opens {"method":"tools/call","outcome":"refused"}', 2],
  ['mrtr_state.opens {"method":"prompts/get","outcome":"accepted"}', 1],
  ['mrtr_state.opens {"method":"prompts/get","outcome":"refused"}', 1],
  ['mrtr_state.opens {"method":"resources/read","outcome":"refused"}', 1],
  ['mrtr_state.refusals {"method":"tools/call","reason":"replayed"}', 1],
  ['mrtr_state.refusals {"method":"tools/call","reason":"wrong_user"}', 1],
  ['mrtr_state.refusals {"method":"prompts/get","reason":"malformed"}', 1],
  ['mrtr_state.refusals {"method":"resources/read","reason":"store_unavailable"}', 1],
  ['mrtr_state.redemptions {"method":"tools/call"}', 1],
  ['mrtr_state.store_outages {"method":"resources/read"}', 1],
]);

function line(instrument: string, attributes: MetricAttributes | DataPoint<number>["attributes"]): string {
  const sorted = Object.fromEntries(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
  return `${instrument} ${JSON.stringify(sorted)}`;
}

/** Every attribute is one the contract names for that event, with one of its allowed values. */
function assertAllowed(event: string, attributes: Readonly<Record<string, unknown>>): void {
  const declared = CONTRACT.events[event]!.attributes;
  assert.deepEqual(Object.keys(attributes).sort(), Object.keys(declared).sort(), `attribute names of ${event}`);
  for (const [name, value] of Object.entries(attributes)) {
    assert.ok(CONTRACT.attributes[declared[name]!]!.includes(String(value)), `${event}.${name}=${String(value)} is not an allowed value`);
  }
}

describe("counters (spec/metrics.json)", () => {
  afterEach(() => mock.restoreAll());

  it("every event and instrument is the contract's: names, units, descriptions, attribute names", () => {
    assert.equal(METRICS_SCOPE, CONTRACT.scope);
    assert.deepEqual(Object.keys(EVENTS).sort(), Object.keys(CONTRACT.events).sort());
    for (const [event, spec] of Object.entries(CONTRACT.events)) {
      const instrument = INSTRUMENTS[event as MetricEvent];
      assert.deepEqual({ ...instrument }, { name: spec.instrument, unit: spec.unit, description: spec.description }, event);
      assert.deepEqual([...EVENTS[event as MetricEvent]].sort(), Object.keys(spec.attributes).sort(), event);
    }
  });

  it("OpenTelemetry counts seals, opens, refusals by reason, redemptions and store outages as Python does", async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    try {
      await exercise(openTelemetryMetrics({ meterProvider: provider }));
      const counted = new Map<string, number>();
      for (const metric of await collected(reader)) {
        const event = Object.entries(CONTRACT.events).find(([, spec]) => spec.instrument === metric.descriptor.name)?.[0];
        assert.ok(event !== undefined, `${metric.descriptor.name} is not in the contract`);
        const spec = CONTRACT.events[event]!;
        assert.equal(metric.descriptor.unit, spec.unit);
        assert.equal(metric.descriptor.description, spec.description);
        for (const point of metric.dataPoints as DataPoint<number>[]) {
          assertAllowed(event, point.attributes);
          counted.set(line(metric.descriptor.name, point.attributes), point.value);
        }
      }
      assert.deepEqual(Object.fromEntries([...counted].sort()), Object.fromEntries([...EXPECTED].sort()));
    } finally {
      await provider.shutdown();
    }
  });

  it("the plain callback receives the same events, with the same attributes", async () => {
    const counted = new Map<string, number>();
    await exercise((event, attributes) => {
      assertAllowed(event, attributes);
      const key = line(INSTRUMENTS[event].name, attributes);
      counted.set(key, (counted.get(key) ?? 0) + 1);
    });
    assert.deepEqual(Object.fromEntries([...counted].sort()), Object.fromEntries([...EXPECTED].sort()));
  });

  it("no attribute value is a token, a user, a tool name, a jti or a kid", async () => {
    const values = new Set<string>();
    await exercise((_event, attributes) => Object.values(attributes).forEach((value) => values.add(value)));
    const kids = [...RING].map((key) => key.kid);
    for (const secret of [USER, "mallory", TOOL, "greet", "file:///etc/motd", ISSUER, ...kids]) {
      assert.ok(![...values].some((value) => value.includes(secret)), `an attribute holds ${secret}`);
    }
    const allowed = new Set(Object.values(CONTRACT.attributes).flat());
    assert.deepEqual([...values].filter((value) => !allowed.has(value)), []);
  });

  it("a metrics function that throws never breaks a seal or an open, and is reported once without the error's text", async () => {
    const errors = mock.method(console, "error", () => {});
    const throwing = (): void => {
      throw new Error(`counter exploded with ${USER}`);
    };
    const tools = sealer(throwing);
    const token = await tools.seal({ step: 1 }, { user: USER, tool: TOOL, arguments: ARGS });
    assert.deepEqual(await tools.open(token, { user: USER, tool: TOOL, arguments: ARGS, consume: true }), { step: 1 });
    const refused = await tools.open(token, { user: USER, tool: TOOL, arguments: ARGS, consume: true }).catch((error: unknown) => error);
    assert.ok(refused instanceof InvalidRequestState && refused.reason === "replayed");
    assert.equal(errors.mock.callCount(), 1);
    const message = String(errors.mock.calls[0]!.arguments[0]);
    assert.match(message, /metrics function threw Error on seal/);
    assert.ok(!message.includes(USER));
  });

  it("without an SDK, counting through the API no-op meter leaves every seal and open as it is", async () => {
    await exercise(openTelemetryMetrics());
  });

  it("metrics must be a function", () => {
    assert.throws(() => sealer({} as unknown as SealerOptions["metrics"]), TypeError);
  });
});
