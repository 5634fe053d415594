//! The reloading key ring: a changed key file is picked up by the sealer; a world-writable file, a
//! FIFO or a bad file is refused without blocking, the last good keys stay, and one warning names
//! the file and the rule, never key material.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mrtr_state::{
    KeyFileOptions, KeySource, Reason, ReloadingKeyring, ReloadingOptions, StateSealer, Target,
};
use serde_json::json;

mod support;
use support::logs::{capture_logs, logged};

/// The warnings logged about this path.
fn warnings_about(path: &Path) -> Vec<String> {
    let path = path.display().to_string();
    logged(&path, log::Level::Warn)
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mrtr-reloading-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An HS256 secret of 32 distinct bytes starting at `first`, in base64url.
fn secret(first: u8) -> String {
    let bytes: Vec<u8> = (0..32u8).map(|i| first.wrapping_add(i * 7)).collect();
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Writes `text` at `path` with mode 0600 and a modification time `tick` seconds ahead, so the
/// change is seen whatever the file system's time granularity.
fn write(path: &Path, text: &str, tick: u64) {
    std::fs::write(path, text).unwrap();
    set_mode(path, 0o600);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(tick))
        .unwrap();
}

fn set_mode(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

fn every_look() -> ReloadingOptions {
    ReloadingOptions {
        interval: Duration::ZERO,
        ..ReloadingOptions::default()
    }
}

fn first_kid(ring: &ReloadingKeyring) -> String {
    ring.keyring().first().kid().to_owned()
}

#[test]
fn the_defaults_are_the_other_languages() {
    let options = ReloadingOptions::default();
    assert_eq!(options.interval, Duration::from_secs(1));
    assert_eq!(options.cooldown, Duration::from_secs(5));
    assert!(!options.file.allow_world_writable);
}

#[tokio::test]
async fn a_changed_file_is_picked_up_by_the_sealer() {
    let dir = scratch("changed");
    let path = dir.join("keys");
    write(&path, &secret(1), 1);
    let ring = Arc::new(ReloadingKeyring::load_with(&path, every_look()).unwrap());
    let old_kid = first_kid(&ring);
    let sealer = StateSealer::builder_with_source(ring.clone())
        .issuer("https://mcp.example.com")
        .build()
        .unwrap();
    let tool = Target::Tool("pay".into());
    let old = sealer.seal(&json!(1), "alice", &tool, None).unwrap();
    assert!(sealer.open_unconsumed(&old, "alice", &tool, None).is_ok());

    write(&path, &secret(2), 2);
    let new_kid = sealer.keyring().first().kid().to_owned();
    assert_ne!(new_kid, old_kid, "the new key is in use");
    let new = sealer.seal(&json!(2), "alice", &tool, None).unwrap();
    assert!(sealer.open_unconsumed(&new, "alice", &tool, None).is_ok());
    // The old key left the file: its tokens no longer open.
    assert_eq!(
        sealer
            .open_unconsumed(&old, "alice", &tool, None)
            .unwrap_err()
            .reason,
        Reason::UnknownKey
    );
    // Debug names the file, never a secret.
    let shown = format!("{ring:?} {sealer:?}");
    assert!(
        shown.contains(&path.display().to_string()) && !shown.contains(&secret(2)),
        "{shown}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_file_is_looked_at_once_per_interval() {
    let dir = scratch("interval");
    let path = dir.join("keys");
    write(&path, &secret(3), 1);
    let ring = ReloadingKeyring::load_with(
        &path,
        ReloadingOptions {
            interval: Duration::from_secs(3600),
            ..ReloadingOptions::default()
        },
    )
    .unwrap();
    let old_kid = first_kid(&ring);
    write(&path, &secret(4), 2);
    assert_eq!(
        first_kid(&ring),
        old_kid,
        "not looked at before the interval"
    );
    assert_eq!(ring.reload(), Ok(true), "reload looks at once");
    assert_ne!(first_kid(&ring), old_kid);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_world_writable_file_is_refused_and_the_old_keys_kept() {
    capture_logs();
    let dir = scratch("world-writable");
    let path = dir.join("keys");
    write(&path, &secret(5), 1);
    let ring = ReloadingKeyring::load_with(&path, every_look()).unwrap();
    let old_kid = first_kid(&ring);

    write(&path, &secret(6), 2);
    set_mode(&path, 0o666);
    assert_eq!(first_kid(&ring), old_kid, "the old keys stay");
    assert_eq!(first_kid(&ring), old_kid);
    let refused = ring.reload().unwrap_err();
    assert!(
        refused.message().contains("anyone may write it"),
        "{refused}"
    );
    assert_eq!(first_kid(&ring), old_kid);
    let warnings = warnings_about(&path);
    assert_eq!(warnings.len(), 1, "one warning: {warnings:?}");
    assert!(
        warnings[0].contains("anyone may write it") && !warnings[0].contains(&secret(6)),
        "{warnings:?}"
    );

    // Allowed, the same file loads.
    let allowed = ReloadingKeyring::load_with(
        &path,
        ReloadingOptions {
            file: KeyFileOptions {
                allow_world_writable: true,
            },
            ..every_look()
        },
    )
    .unwrap();
    assert_ne!(first_kid(&allowed), old_kid);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_fifo_at_the_path_does_not_block() {
    capture_logs();
    let dir = scratch("fifo");
    let path = dir.join("keys");
    write(&path, &secret(7), 1);
    let ring = Arc::new(ReloadingKeyring::load_with(&path, every_look()).unwrap());
    let old_kid = first_kid(&ring);
    std::fs::remove_file(&path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());

    // No writer ever opens the FIFO: a blocking open would never return.
    let (done, finished) = std::sync::mpsc::channel();
    let (looking, fifo) = (ring.clone(), path.clone());
    std::thread::spawn(move || {
        let kid = first_kid(&looking);
        let reload = looking.reload();
        let load = ReloadingKeyring::load(&fifo);
        done.send((kid, reload, load.map(|_| ()))).unwrap();
    });
    let (kid, reload, load) = finished
        .recv_timeout(Duration::from_secs(10))
        .expect("a FIFO at the key file's path blocked the ring");
    assert_eq!(kid, old_kid, "the old keys stay");
    let refused = reload.unwrap_err();
    assert!(
        refused.message().contains("not a regular file"),
        "{refused}"
    );
    assert!(load.is_err(), "a FIFO is no key file at start-up either");
    let warnings = warnings_about(&path);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("not a regular file"), "{warnings:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_file_keeps_the_old_keys_and_warns_once() {
    capture_logs();
    let dir = scratch("bad");
    let path = dir.join("keys");
    write(&path, &secret(9), 1);
    let ring = ReloadingKeyring::load_with(&path, every_look()).unwrap();
    let old_kid = first_kid(&ring);

    // A secret too short for HS256: refused by the rules of a key loaded at start-up.
    let weak = URL_SAFE_NO_PAD.encode(b"a weak sixteen b");
    write(&path, &weak, 2);
    for _ in 0..5 {
        assert_eq!(first_kid(&ring), old_kid, "the old keys stay");
    }
    assert!(ring.reload().is_err());
    assert_eq!(first_kid(&ring), old_kid);
    let warnings = warnings_about(&path);
    assert_eq!(
        warnings.len(),
        1,
        "one warning per bad content: {warnings:?}"
    );
    assert!(
        warnings[0].contains("HS256 needs at least 32") && !warnings[0].contains(&weak),
        "{warnings:?}"
    );

    // A missing file is refused the same way.
    std::fs::remove_file(&path).unwrap();
    assert_eq!(first_kid(&ring), old_kid);

    // A good file replaces the bad one at once, cooldown or not.
    write(&path, &secret(10), 3);
    let fixed = first_kid(&ring);
    assert_ne!(fixed, old_kid, "the good file is picked up");
    assert_eq!(
        warnings_about(&path).len(),
        2,
        "the missing file warned once"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_token_of_an_unknown_kid_makes_the_ring_look_at_once() {
    let dir = scratch("unknown-kid");
    let path = dir.join("keys");
    write(&path, &secret(11), 1);
    // A long interval: only the unknown kid can make this replica look before it passes.
    let ring = Arc::new(
        ReloadingKeyring::load_with(
            &path,
            ReloadingOptions {
                interval: Duration::from_secs(3600),
                ..ReloadingOptions::default()
            },
        )
        .unwrap(),
    );
    let verifier = StateSealer::builder_with_source(ring.clone())
        .issuer("https://mcp.example.com")
        .build()
        .unwrap();
    // Another replica already signs with the new key.
    let new_ring = mrtr_state::Keyring::parse(&secret(12), "the new key").unwrap();
    let minter = StateSealer::builder(new_ring)
        .issuer("https://mcp.example.com")
        .build()
        .unwrap();
    let tool = Target::Tool("pay".into());
    let token = minter.seal(&json!(1), "alice", &tool, None).unwrap();
    assert_eq!(
        verifier
            .open_unconsumed(&token, "alice", &tool, None)
            .unwrap_err()
            .reason,
        Reason::UnknownKey,
        "the file still holds the old key"
    );
    write(&path, &secret(12), 2);
    assert!(
        verifier
            .open_unconsumed(&token, "alice", &tool, None)
            .is_ok(),
        "the unknown kid made the ring reread the changed file"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_file_its_group_or_others_may_read_is_used_with_one_warning_per_mode() {
    capture_logs();
    let dir = scratch("readable");
    let path = dir.join("keys");
    write(&path, &secret(20), 1);
    set_mode(&path, 0o644);
    let ring = ReloadingKeyring::load_with(&path, every_look()).unwrap();
    let warnings = warnings_about(&path);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("may be read by its group or others (mode 0644)")
            && warnings[0].contains("chmod 600")
            && !warnings[0].contains(&secret(20)),
        "{warnings:?}"
    );

    // New keys in a file of the same mode: used, not warned about again.
    let old_kid = first_kid(&ring);
    write(&path, &secret(21), 2);
    set_mode(&path, 0o644);
    assert_ne!(first_kid(&ring), old_kid, "new keys loaded");
    assert_eq!(warnings_about(&path).len(), 1, "once per mode");

    // Another readable mode warns again; a private file never does.
    write(&path, &secret(22), 3);
    set_mode(&path, 0o640);
    assert!(ring.reload().unwrap());
    assert_eq!(warnings_about(&path).len(), 2);
    let private = dir.join("private");
    write(&private, &secret(23), 1);
    ReloadingKeyring::load_with(&private, every_look()).unwrap();
    assert_eq!(warnings_about(&private), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_read_of_the_file_is_counted_as_a_key_refresh() {
    let dir = scratch("metrics");
    let path = dir.join("keys");
    write(&path, &secret(30), 1);
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&events);
    let ring = ReloadingKeyring::load_with(&path, every_look())
        .unwrap()
        .metrics(move |event, attributes| {
            let attributes: Vec<String> =
                attributes.iter().map(|(k, v)| format!("{k}={v}")).collect();
            seen.lock()
                .unwrap()
                .push(format!("{event} {}", attributes.join(" ")));
        });
    let counted = || std::mem::take(&mut *events.lock().unwrap());

    first_kid(&ring);
    assert_eq!(
        counted(),
        Vec::<String>::new(),
        "an unchanged identity reads nothing"
    );
    write(&path, &secret(31), 2);
    first_kid(&ring);
    assert_eq!(counted(), ["key_refresh source=key_file outcome=updated"]);
    write(&path, &secret(31), 3); // the same keys, written again
    first_kid(&ring);
    assert_eq!(counted(), ["key_refresh source=key_file outcome=unchanged"]);
    write(&path, "not a key", 4);
    for _ in 0..3 {
        first_kid(&ring);
    }
    assert!(ring.reload().is_err());
    assert_eq!(
        counted(),
        ["key_refresh source=key_file outcome=failed"],
        "once per distinct bad content, as the warning"
    );
    // The names and attributes are those of spec/metrics.json's key_refresh.
    let instrument = mrtr_state::metrics::EVENTS
        .iter()
        .find(|instrument| instrument.event == mrtr_state::metrics::KEY_REFRESH)
        .unwrap();
    assert_eq!(instrument.attributes, ["source", "outcome"]);
    let _ = std::fs::remove_dir_all(&dir);
}
