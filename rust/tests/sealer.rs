//! The public API: seal and open in both forms, single use, refusals, key sources, and that no
//! secret appears in Debug or Display output.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use mrtr_state::{
    KeyFileOptions, Keyring, MemoryReplayStore, Reason, RedeemFuture, ReplayStore,
    ReplayStoreError, StateSealer, Target, Value,
};
use serde_json::json;

fn vector_keys() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors/keys.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn ring(jwks: Value) -> Keyring {
    Keyring::from_jwks_value(&jwks).unwrap()
}

fn sealer_at(ring: Keyring, now: Arc<AtomicI64>) -> StateSealer {
    StateSealer::builder(ring)
        .issuer("https://mcp.example.com")
        .replay_store(Arc::new(MemoryReplayStore::new()))
        .clock(move || now.load(Ordering::SeqCst))
        .build()
        .unwrap()
}

#[tokio::test]
async fn seals_and_opens_in_every_form() {
    let keys = vector_keys();
    for (name, first) in [
        ("hs256", &keys["hs256"]),
        ("eddsa", &keys["eddsa"]),
        ("a256gcm", &keys["a256gcm"]),
    ] {
        let now = Arc::new(AtomicI64::new(1_767_225_600));
        let sealer = sealer_at(ring(json!({"keys": [first]})), now.clone());
        let target = Target::Tool("deploy".into());
        let args = json!({"env": "staging", "n": 1.5});
        let state = json!({"step": "confirm", "big": 1.152921504606847e18, "list": [1, 2]});
        let token = sealer.seal(&state, "alice", &target, Some(&args)).unwrap();
        assert_eq!(
            token.split('.').count(),
            if name == "a256gcm" { 5 } else { 3 },
            "{name}"
        );
        let opened = sealer
            .open_unconsumed(&token, "alice", &target, Some(&args))
            .unwrap();
        assert_eq!(opened["step"], "confirm");
        assert_eq!(opened["big"].as_f64(), Some(1.152921504606847e18));
        let refuse = |user: &str, target: &Target, args: Option<&Value>| {
            sealer
                .open_unconsumed(&token, user, target, args)
                .unwrap_err()
                .reason
        };
        assert_eq!(
            refuse("bob", &target, Some(&args)),
            Reason::WrongUser,
            "{name}"
        );
        assert_eq!(
            refuse("alice", &Target::Prompt("deploy".into()), Some(&args)),
            Reason::WrongTool
        );
        assert_eq!(
            refuse("alice", &target, Some(&json!({"env": "prod"}))),
            Reason::WrongRequest
        );
        assert_eq!(
            refuse("alice", &target, Some(&Value::Null)),
            Reason::WrongRequest
        );
        assert_eq!(refuse("alice", &target, None), Reason::WrongRequest);
        // Single use: the first redemption opens, the second is replayed.
        assert!(
            sealer
                .open(&token, "alice", &target, Some(&args), true)
                .await
                .is_ok()
        );
        let again = sealer
            .open(&token, "alice", &target, Some(&args), true)
            .await
            .unwrap_err();
        assert_eq!(again.reason, Reason::Replayed);
        // Expired from the second exp itself.
        now.fetch_add(600, Ordering::SeqCst);
        assert_eq!(refuse("alice", &target, Some(&args)), Reason::Expired);
    }
}

#[test]
fn a_public_key_ring_verifies_what_the_private_key_sealed() {
    let keys = vector_keys();
    let now = Arc::new(AtomicI64::new(1_767_225_600));
    let minter = sealer_at(ring(json!({"keys": [keys["eddsa"]]})), now.clone());
    let public = minter.keyring().public_jwks();
    assert!(
        public.to_string().find("\"d\"").is_none(),
        "no private key is published"
    );
    let verifier = sealer_at(Keyring::from_jwks_value(&public).unwrap(), now);
    let target = Target::Resource("file:///a.csv".into());
    let token = minter.seal(&json!(1), "alice", &target, None).unwrap();
    assert_eq!(
        verifier
            .open_unconsumed(&token, "alice", &target, None)
            .unwrap(),
        json!(1)
    );
    assert_eq!(
        verifier
            .seal(&json!(1), "alice", &target, None)
            .unwrap_err()
            .reason,
        Reason::UnknownKey
    );
}

#[test]
fn refuses_to_seal_what_cannot_be_opened() {
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("i")
        .max_token_bytes(600)
        .build()
        .unwrap();
    let tool = Target::Tool("t".into());
    let seal = |state: &Value, args: Option<&Value>| {
        sealer.seal(state, "u", &tool, args).map_err(|e| e.reason)
    };
    assert_eq!(
        seal(&json!(1), Some(&json!({"id": 1u64 << 60}))),
        Err(Reason::WrongRequest)
    );
    assert_eq!(
        seal(&json!(1), Some(&json!([1]))),
        Err(Reason::WrongRequest)
    );
    assert_eq!(
        seal(&json!(1), Some(&Value::Null)),
        Err(Reason::WrongRequest)
    );
    assert_eq!(
        seal(&json!(9007199254740992u64), None),
        Err(Reason::Malformed)
    );
    let mut deep = json!(0);
    for _ in 0..33 {
        deep = json!([deep]);
    }
    assert_eq!(seal(&deep, None), Err(Reason::Malformed));
    assert_eq!(seal(&json!("x".repeat(600)), None), Err(Reason::TooLarge));
    assert!(seal(&json!({"ok": true}), None).is_ok());
}

struct DownStore;

impl ReplayStore for DownStore {
    fn redeem<'a>(&'a self, _jti: &'a str, _expires_at_unix: i64) -> RedeemFuture<'a> {
        Box::pin(async { Err(ReplayStoreError::new("connection refused")) })
    }
}

#[tokio::test]
async fn a_store_without_an_answer_refuses_store_unavailable() {
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("i")
        .replay_store(Arc::new(DownStore))
        .build()
        .unwrap();
    let tool = Target::Tool("t".into());
    let token = sealer.seal(&json!(1), "u", &tool, None).unwrap();
    let refused = sealer
        .open(&token, "u", &tool, None, true)
        .await
        .unwrap_err();
    assert_eq!(refused.reason, Reason::StoreUnavailable);
    assert!(sealer.open(&token, "u", &tool, None, false).await.is_ok());
    let no_store = StateSealer::builder(Keyring::dev_hs256())
        .issuer("i")
        .build()
        .unwrap();
    let token = no_store.seal(&json!(1), "u", &tool, None).unwrap();
    assert_eq!(
        no_store
            .open(&token, "u", &tool, None, true)
            .await
            .unwrap_err()
            .reason,
        Reason::StoreUnavailable
    );
}

#[test]
fn debug_and_display_show_no_secret() {
    let keys = vector_keys();
    let ring = ring(keys["encrypted_verifier_jwks"].clone());
    let sealer = StateSealer::builder(ring).issuer("i").build().unwrap();
    let shown = format!("{sealer:?} {:?}", sealer.keyring());
    for secret in [
        &keys["hs256"]["k"],
        &keys["a256gcm"]["k"],
        &keys["eddsa"]["d"],
    ] {
        assert!(!shown.contains(secret.as_str().unwrap()), "{shown}");
    }
    let refusal = mrtr_state::InvalidRequestState::new(Reason::WrongUser);
    assert_eq!(
        refusal.to_string(),
        "invalid request state (wrong_user): The request state belongs to another user."
    );
    let bad = Keyring::parse(&"A".repeat(43), "the test value").unwrap_err();
    assert!(!bad.to_string().contains("AAAA"), "{bad}");
}

#[test]
fn the_builder_refuses_bad_settings() {
    let build = |b: mrtr_state::StateSealerBuilder| b.build().is_err();
    assert!(build(StateSealer::builder(Keyring::dev_hs256())));
    assert!(build(StateSealer::builder(Keyring::dev_hs256()).issuer("")));
    assert!(build(
        StateSealer::builder(Keyring::dev_hs256())
            .issuer("i")
            .leeway(Duration::from_secs(301))
    ));
    assert!(build(
        StateSealer::builder(Keyring::dev_hs256())
            .issuer("i")
            .ttl(Duration::from_secs(601))
    ));
}

#[test]
fn key_sources_env_and_bare_secret() {
    let keys = vector_keys();
    // A JWKS, a single JWK, and a bare base64url secret.
    for value in [
        keys["verifier_jwks"].to_string(),
        keys["hs256"].to_string(),
        keys["hs256"]["k"].as_str().unwrap().to_owned(),
    ] {
        assert!(Keyring::parse(&value, "test").is_ok(), "{value}");
    }
    assert!(Keyring::parse("c2hvcnQ", "test").is_err(), "short");
    assert!(
        Keyring::parse(&"AAAA".repeat(11), "test").is_err(),
        "all zero"
    );
    assert!(
        Keyring::parse(r#"{"keys": []}"#, "test").is_err(),
        "empty ring"
    );
    assert!(Keyring::from_env("MRTR_STATE_TEST_SURELY_UNSET_VARIABLE").is_err());
}

#[cfg(unix)]
#[test]
fn key_files_regular_only_and_not_world_writable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("mrtr-state-keyfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("keys.json");
    std::fs::write(&file, vector_keys()["verifier_jwks"].to_string()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(Keyring::from_file(&file).unwrap().keys().len(), 2);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let refused = Keyring::from_file(&file).unwrap_err().to_string();
    assert!(refused.contains("anyone may write it"), "{refused}");
    assert!(
        Keyring::from_file_with(
            &file,
            KeyFileOptions {
                allow_world_writable: true
            }
        )
        .is_ok()
    );
    assert!(
        Keyring::from_file(&dir)
            .unwrap_err()
            .to_string()
            .contains("directory")
    );
    // A FIFO with no writer: refused at once, never waited on.
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let started = std::time::Instant::now();
        let refused = Keyring::from_file(&fifo).unwrap_err().to_string();
        assert!(refused.contains("not a regular file"), "{refused}");
        assert!(started.elapsed() < Duration::from_secs(5));
    } else if std::env::var("CI").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "TRUE" | "yes"))
    {
        panic!("mkfifo is needed for this test under CI=true");
    }
    assert!(Keyring::from_file(dir.join("missing")).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
