//! The counters against spec/metrics.json: every instrument's name, unit, description and attributes,
//! and what a sealer counts, with attribute values from the listed sets only.

use std::sync::{Arc, Mutex};

use mrtr_state::metrics::EVENTS;
use mrtr_state::{Keyring, MemoryReplayStore, StateSealer, Target, Value};
use serde_json::json;

fn contract() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/metrics.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_instruments_are_the_contracts() {
    let contract = contract();
    assert_eq!(contract["scope"], mrtr_state::metrics::SCOPE);
    let events = contract["events"].as_object().unwrap();
    assert_eq!(events.len(), EVENTS.len());
    for instrument in EVENTS {
        let spec = &events[instrument.event];
        assert_eq!(spec["instrument"], instrument.name, "{}", instrument.event);
        assert_eq!(spec["unit"], instrument.unit);
        assert_eq!(spec["description"], instrument.description);
        let names: Vec<&str> = spec["attributes"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut ours = instrument.attributes.to_vec();
        ours.sort();
        let mut theirs = names.clone();
        theirs.sort();
        assert_eq!(ours, theirs, "{}", instrument.event);
    }
}

type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

#[tokio::test]
async fn a_sealer_counts_with_listed_values_only() {
    let contract = contract();
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("https://mcp.example.com")
        .replay_store(Arc::new(MemoryReplayStore::new()))
        .metrics(move |event, attributes| {
            let attributes = attributes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            sink.lock().unwrap().push((event.to_owned(), attributes));
        })
        .build()
        .unwrap();
    let tool = Target::Tool("secret-tool-name".into());
    let token = sealer.seal(&json!(1), "alice", &tool, None).unwrap();
    sealer
        .open(&token, "alice", &tool, None, true)
        .await
        .unwrap();
    sealer
        .open(&token, "alice", &tool, None, true)
        .await
        .unwrap_err();
    sealer
        .open_unconsumed(&token, "bob", &tool, None)
        .unwrap_err();
    let seen = seen.lock().unwrap().clone();
    let events: Vec<&str> = seen.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        events,
        [
            "seal",
            "open",
            "redemption",
            "open",
            "refusal",
            "open",
            "refusal"
        ],
        "{seen:?}"
    );
    let events_spec = &contract["events"];
    for (event, attributes) in &seen {
        for (name, value) in attributes {
            let set = events_spec[event]["attributes"][name].as_str().unwrap();
            let allowed = contract["attributes"][set].as_array().unwrap();
            assert!(
                allowed.contains(&json!(value)),
                "{event} {name}={value} is not listed"
            );
        }
    }
    assert!(
        seen.iter()
            .any(|(_, a)| a.contains(&("reason".into(), "replayed".into())))
    );
    assert!(
        seen.iter()
            .any(|(_, a)| a.contains(&("reason".into(), "wrong_user".into())))
    );
}

#[test]
fn a_panicking_counter_never_breaks_a_seal() {
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("i")
        .metrics(|_, _| panic!("a broken counter"))
        .build()
        .unwrap();
    let tool = Target::Prompt("p".into());
    let token = sealer.seal(&json!(1), "u", &tool, None).unwrap();
    assert_eq!(
        sealer.open_unconsumed(&token, "u", &tool, None).unwrap(),
        json!(1)
    );
}

#[cfg(feature = "opentelemetry")]
#[test]
fn opentelemetry_counters_read_back_with_the_in_memory_exporter() {
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("i")
        .metrics(mrtr_state::metrics::opentelemetry(&provider))
        .build()
        .unwrap();
    let tool = Target::Tool("t".into());
    let token = sealer.seal(&json!(1), "u", &tool, None).unwrap();
    sealer.open_unconsumed(&token, "u", &tool, None).unwrap();
    sealer
        .open_unconsumed(&token, "v", &tool, None)
        .unwrap_err();
    provider.force_flush().unwrap();
    let contract = contract();
    let mut counts = std::collections::BTreeMap::new();
    for resource in exporter.get_finished_metrics().unwrap() {
        for scope in resource.scope_metrics() {
            assert_eq!(scope.scope().name(), "mrtr_state");
            for metric in scope.metrics() {
                let spec = contract["events"]
                    .as_object()
                    .unwrap()
                    .values()
                    .find(|e| e["instrument"] == metric.name())
                    .unwrap_or_else(|| panic!("{} is not in spec/metrics.json", metric.name()));
                assert_eq!(spec["unit"], metric.unit());
                assert_eq!(spec["description"], metric.description());
                let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
                    panic!("{} is not a u64 sum", metric.name())
                };
                for point in sum.data_points() {
                    let attributes: Vec<String> = point
                        .attributes()
                        .map(|kv| format!("{}={}", kv.key, kv.value))
                        .collect();
                    counts.insert(
                        format!("{} {}", metric.name(), attributes.join(",")),
                        point.value(),
                    );
                }
            }
        }
    }
    let expected = [
        ("mrtr_state.seals method=tools/call", 1),
        ("mrtr_state.opens method=tools/call,outcome=accepted", 1),
        ("mrtr_state.opens method=tools/call,outcome=refused", 1),
        ("mrtr_state.refusals method=tools/call,reason=wrong_user", 1),
    ];
    for (key, value) in expected {
        assert_eq!(counts.get(key), Some(&value), "{counts:?}");
    }
}
