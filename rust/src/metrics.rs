//! Counters (spec/metrics.json): seals, opens by outcome, refusals by reason code, redemptions,
//! store outages and key refreshes. A sealer (or a reloading key ring) given `.metrics(f)` calls
//! `f(event, attributes)` for each; the attribute
//! values are always one of a small fixed set (a target method, a reason code, an outcome word),
//! never a token, a claim value, a kid or key material. A function that panics never breaks a seal
//! or an open: the panic is caught and the count is lost.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// A function that receives each event and its attributes (name, value).
pub type MetricsFn = Arc<dyn Fn(&str, &[(&str, &str)]) + Send + Sync>;

/// The instrumentation scope (meter name) of the counters.
pub const SCOPE: &str = "mrtr_state";

/// A token was minted (method).
pub const SEAL: &str = "seal";
/// A token was presented (method; outcome `accepted` or `refused`).
pub const OPEN: &str = "open";
/// A token was refused (method; reason, a code of the profile).
pub const REFUSAL: &str = "refusal";
/// A single-use token was redeemed for the first time (method).
pub const REDEMPTION: &str = "redemption";
/// The replay store could not answer, so the token was refused `store_unavailable` (method).
pub const STORE_OUTAGE: &str = "store_outage";
/// A key source looked for new keys (source `key_file` or `remote_jwks`; outcome `updated`,
/// `unchanged` or `failed`): [`ReloadingKeyring::metrics`](crate::ReloadingKeyring::metrics), and
/// `RemoteJwksOptions::metrics` (feature `remote-jwks`).
pub const KEY_REFRESH: &str = "key_refresh";

/// The counter of one event, as spec/metrics.json writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instrument {
    /// The event name.
    pub event: &'static str,
    /// The OpenTelemetry instrument name.
    pub name: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Its description.
    pub description: &'static str,
    /// The attribute names the event carries.
    pub attributes: &'static [&'static str],
}

/// Every event and its counter.
pub const EVENTS: [Instrument; 6] = [
    Instrument {
        event: SEAL,
        name: "mrtr_state.seals",
        unit: "{token}",
        description: "requestState tokens minted",
        attributes: &["method"],
    },
    Instrument {
        event: OPEN,
        name: "mrtr_state.opens",
        unit: "{token}",
        description: "requestState tokens presented, by outcome",
        attributes: &["method", "outcome"],
    },
    Instrument {
        event: REFUSAL,
        name: "mrtr_state.refusals",
        unit: "{token}",
        description: "requestState tokens refused, by reason code",
        attributes: &["method", "reason"],
    },
    Instrument {
        event: REDEMPTION,
        name: "mrtr_state.redemptions",
        unit: "{token}",
        description: "single-use requestState tokens redeemed",
        attributes: &["method"],
    },
    Instrument {
        event: STORE_OUTAGE,
        name: "mrtr_state.store_outages",
        unit: "{token}",
        description: "requestState tokens refused because the replay store could not answer",
        attributes: &["method"],
    },
    Instrument {
        event: KEY_REFRESH,
        name: "mrtr_state.key_refreshes",
        unit: "{refresh}",
        description: "key source refreshes, by outcome",
        attributes: &["source", "outcome"],
    },
];

/// Calls `f` with one event, catching a panic so that counting never breaks a seal or an open.
pub(crate) fn record(f: &Option<MetricsFn>, event: &str, attributes: &[(&str, &str)]) {
    if let Some(f) = f {
        let _ = catch_unwind(AssertUnwindSafe(|| f(event, attributes)));
    }
}

/// The counters of `EVENTS` as OpenTelemetry counters, made with `provider`'s meter `SCOPE`
/// (feature `opentelemetry`): give the result to `StateSealerBuilder::metrics`. A no-op provider
/// counts nothing and costs next to nothing.
#[cfg(feature = "opentelemetry")]
pub fn opentelemetry<P: opentelemetry::metrics::MeterProvider + ?Sized>(
    provider: &P,
) -> impl Fn(&str, &[(&str, &str)]) + Send + Sync + 'static {
    let meter = provider.meter(SCOPE);
    let counters: Vec<(&'static str, opentelemetry::metrics::Counter<u64>)> = EVENTS
        .iter()
        .map(|instrument| {
            let counter = meter
                .u64_counter(instrument.name)
                .with_unit(instrument.unit)
                .with_description(instrument.description)
                .build();
            (instrument.event, counter)
        })
        .collect();
    move |event: &str, attributes: &[(&str, &str)]| {
        if let Some((_, counter)) = counters.iter().find(|(name, _)| *name == event) {
            let attributes: Vec<opentelemetry::KeyValue> = attributes
                .iter()
                .map(|(k, v)| opentelemetry::KeyValue::new(k.to_string(), v.to_string()))
                .collect();
            counter.add(1, &attributes);
        }
    }
}
