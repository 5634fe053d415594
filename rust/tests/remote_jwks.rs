//! The remote JWKS source (feature `remote-jwks`) against a loopback server of its own: a good JWKS
//! opens tokens minted with its private keys; a rotation is picked up after the refresh interval
//! and at once for an unknown `kid` (at most once per cooldown); every bad answer keeps the last
//! good keys and says why; URLs that are not allowed are refused at load; https is checked against
//! a private CA; no key material reaches an error, a log line or `Debug`.
#![cfg(feature = "remote-jwks")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mrtr_state::keys::check_jwks_url;
use mrtr_state::{KeySource, Keyring, Reason, RemoteJwks, RemoteJwksOptions, StateSealer, Target};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Logs

mod support;
use support::logs::{capture_logs, logged};

// ---------------------------------------------------------------------------------------------
// Keys

/// The seed (private key) of Ed25519 key `n`.
fn seed(n: u8) -> [u8; 32] {
    std::array::from_fn(|i| n.wrapping_mul(31).wrapping_add(i as u8 * 7))
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The private JWK of Ed25519 key `n`, kid `k<n>`.
fn private_jwk(n: u8) -> Value {
    let signing = ed25519_dalek::SigningKey::from_bytes(&seed(n));
    json!({
        "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": format!("k{n}"),
        "x": b64(signing.verifying_key().as_bytes()), "d": b64(&seed(n)),
    })
}

/// A ring of the private keys `ns`, the first minting.
fn private_ring(ns: &[u8]) -> Keyring {
    let keys: Vec<Value> = ns.iter().map(|&n| private_jwk(n)).collect();
    Keyring::from_jwks_value(&json!({ "keys": keys })).unwrap()
}

/// The published JWKS of the keys `ns`.
fn public_jwks(ns: &[u8]) -> String {
    private_ring(ns).public_jwks().to_string()
}

/// A sealer that mints with the private key `n`.
fn minter(n: u8) -> StateSealer {
    StateSealer::builder(private_ring(&[n]))
        .issuer("https://mcp.example.com")
        .build()
        .unwrap()
}

fn verifier(jwks: &Arc<RemoteJwks>) -> StateSealer {
    StateSealer::builder_with_source(jwks.clone())
        .issuer("https://mcp.example.com")
        .build()
        .unwrap()
}

fn tool() -> Target {
    Target::Tool("pay".into())
}

fn token_of(n: u8) -> String {
    minter(n)
        .seal(&json!({"n": n}), "alice", &tool(), None)
        .unwrap()
}

fn opens(sealer: &StateSealer, token: &str) -> Result<(), Reason> {
    sealer
        .open_unconsumed(token, "alice", &tool(), None)
        .map(|_| ())
        .map_err(|e| e.reason)
}

fn kids(jwks: &RemoteJwks) -> Vec<String> {
    jwks.keyring()
        .keys()
        .iter()
        .map(|k| k.kid().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// A loopback server

/// What the server answers.
#[derive(Clone)]
enum Reply {
    /// `200` with this body, its length announced.
    Jwks(String),
    /// This status, these headers and this body, its length announced.
    Raw(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// `200` announcing `content-length` of this many bytes, sending only a few.
    Announce(u64),
    /// `200` without a length, this many bytes of a JSON object, then the connection is closed.
    Stream(usize),
    /// `200` announcing 1000 bytes, sending one every 20 ms until the client hangs up.
    Trickle,
    /// As `Jwks`, once this gate is opened.
    Gated(String, Arc<Gate>),
}

/// A gate a reply waits for.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
    fn wait(&self, stop: &AtomicBool) {
        let mut open = self.open.lock().unwrap();
        while !*open && !stop.load(Ordering::SeqCst) {
            open = self
                .opened
                .wait_timeout(open, Duration::from_millis(20))
                .unwrap()
                .0;
        }
    }
}

struct State {
    reply: Mutex<Reply>,
    /// Requests by path.
    hits: Mutex<HashMap<String, usize>>,
    stop: AtomicBool,
}

/// A loopback HTTP/1.1 server (one thread per connection), stopped when dropped.
struct Server {
    port: u16,
    state: Arc<State>,
    accept: Option<JoinHandle<()>>,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Server {
    fn start(reply: Reply) -> Server {
        Server::start_with(reply, None)
    }

    fn start_with(reply: Reply, tls: Option<Arc<rustls::ServerConfig>>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            reply: Mutex::new(reply),
            hits: Mutex::new(HashMap::new()),
            stop: AtomicBool::new(false),
        });
        let accept = {
            let state = state.clone();
            let tls = tls.clone();
            std::thread::spawn(move || {
                let mut workers = Vec::new();
                for stream in listener.incoming() {
                    if state.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let state = state.clone();
                    let tls = tls.clone();
                    workers.push(std::thread::spawn(move || serve(stream, &state, tls)));
                }
                for worker in workers {
                    let _ = worker.join();
                }
            })
        };
        Server {
            port,
            state,
            accept: Some(accept),
            tls,
        }
    }

    fn url(&self, path: &str) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
    }

    fn set(&self, reply: Reply) {
        *self.state.reply.lock().unwrap() = reply;
    }

    fn hits(&self, path: &str) -> usize {
        self.state
            .hits
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn serve(stream: TcpStream, state: &State, tls: Option<Arc<rustls::ServerConfig>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    match tls {
        Some(config) => {
            let Ok(connection) = rustls::ServerConnection::new(config) else {
                return;
            };
            let mut tls = rustls::StreamOwned::new(connection, stream);
            respond(&mut tls, state);
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
        None => {
            let mut plain = stream;
            respond(&mut plain, state);
            let _ = plain.shutdown(Shutdown::Both);
        }
    }
}

/// Reads one request's head, counts its path, and answers it.
fn respond(stream: &mut (impl Read + Write), state: &State) {
    let mut head = Vec::new();
    {
        let mut reader = BufReader::new(&mut *stream);
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            head.push(line);
        }
    }
    if state.stop.load(Ordering::SeqCst) {
        return;
    }
    let path = head
        .first()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("")
        .to_owned();
    *state.hits.lock().unwrap().entry(path).or_default() += 1;
    let reply = state.reply.lock().unwrap().clone();
    let head_of = |status: u16, headers: &[(&str, String)]| {
        let mut text = format!("HTTP/1.1 {status} X\r\nconnection: close\r\n");
        for (name, value) in headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str("\r\n");
        text
    };
    let json_type = ("content-type", "application/jwk-set+json".to_owned());
    let _ = match reply {
        Reply::Jwks(body) => {
            let headers = [json_type, ("content-length", body.len().to_string())];
            stream.write_all(format!("{}{body}", head_of(200, &headers)).as_bytes())
        }
        Reply::Gated(body, gate) => {
            gate.wait(&state.stop);
            let headers = [json_type, ("content-length", body.len().to_string())];
            stream.write_all(format!("{}{body}", head_of(200, &headers)).as_bytes())
        }
        Reply::Raw(status, mut headers, body) => {
            headers.push(("content-length", body.len().to_string()));
            let _ = stream.write_all(head_of(status, &headers).as_bytes());
            stream.write_all(&body)
        }
        Reply::Announce(length) => {
            let headers = [json_type, ("content-length", length.to_string())];
            let _ = stream.write_all(head_of(200, &headers).as_bytes());
            stream.write_all(b"{\"keys\": [")
        }
        Reply::Stream(length) => {
            let _ = stream.write_all(head_of(200, &[json_type]).as_bytes());
            let _ = stream.write_all(b"{\"keys\": []");
            let chunk = [b' '; 4096];
            let mut sent = 0;
            while sent < length {
                if stream.write_all(&chunk).is_err() {
                    break;
                }
                sent += chunk.len();
            }
            stream.write_all(b"}")
        }
        Reply::Trickle => {
            let headers = [json_type, ("content-length", "1000".to_owned())];
            let _ = stream.write_all(head_of(200, &headers).as_bytes());
            let _ = stream.write_all(b"{");
            let _ = stream.flush();
            // Until the client hangs up (a write fails) or the server stops; 1000 bytes at most.
            for _ in 0..998 {
                if state.stop.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
                if stream
                    .write_all(b" ")
                    .and_then(|()| stream.flush())
                    .is_err()
                {
                    break;
                }
            }
            Ok(())
        }
    };
    let _ = stream.flush();
}

// ---------------------------------------------------------------------------------------------
// A clock the tests move

struct TestClock {
    start: Instant,
    offset_ms: AtomicU64,
}

impl TestClock {
    fn new() -> Arc<TestClock> {
        Arc::new(TestClock {
            start: Instant::now(),
            offset_ms: AtomicU64::new(0),
        })
    }
    fn advance(&self, by: Duration) {
        self.offset_ms
            .fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }
    fn options(self: &Arc<Self>) -> RemoteJwksOptions {
        let clock = self.clone();
        RemoteJwksOptions::default().with_clock(move || {
            clock.start + Duration::from_millis(clock.offset_ms.load(Ordering::SeqCst))
        })
    }
}

/// The `key_refresh` outcomes counted.
fn counted() -> (Arc<Mutex<Vec<String>>>, RemoteJwksOptions) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = RemoteJwksOptions::default().with_metrics(move |event, attributes| {
        assert_eq!(event, mrtr_state::metrics::KEY_REFRESH);
        assert_eq!(attributes[0], ("source", "remote_jwks"));
        assert_eq!(attributes[1].0, "outcome");
        sink.lock().unwrap().push(attributes[1].1.to_owned());
    });
    (seen, options)
}

/// Waits (a bounded number of looks) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("never happened: {what}");
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn the_defaults_are_the_other_languages() {
    let options = RemoteJwksOptions::default();
    assert_eq!(options.refresh_interval, Duration::from_secs(300));
    assert_eq!(options.cooldown, Duration::from_secs(30));
    assert_eq!(options.timeout, Duration::from_secs(5));
    assert_eq!(options.max_bytes, 64 * 1024);
    assert!(options.root_certificates.is_empty());
}

#[test]
fn a_good_jwks_loads_and_opens_a_token_minted_with_its_private_key() {
    capture_logs();
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let (seen, options) = counted();
    let url = server.url("/.well-known/mrtr-state-jwks.json");
    let jwks = Arc::new(RemoteJwks::load_with(&url, options).unwrap());
    assert_eq!(jwks.url(), url);
    assert_eq!(jwks.last_error(), None);
    assert_eq!(kids(&jwks), ["k1"]);
    let sealer = verifier(&jwks);
    assert_eq!(opens(&sealer, &token_of(1)), Ok(()));
    // A token of another key: looked for at once? No: the cooldown since the load forbids it.
    assert_eq!(opens(&sealer, &token_of(2)), Err(Reason::UnknownKey));
    assert_eq!(server.hits("/.well-known/mrtr-state-jwks.json"), 1);
    // A verify-only source cannot mint.
    assert_eq!(
        sealer
            .seal(&json!(1), "alice", &tool(), None)
            .unwrap_err()
            .reason,
        Reason::UnknownKey
    );
    // The same JWKS again: unchanged.
    assert_eq!(jwks.refresh(), Ok(false));
    assert_eq!(*seen.lock().unwrap(), ["updated", "unchanged"]);
    assert_eq!(logged(&url, log::Level::Info).len(), 1, "one line: loaded");
    let shown = format!("{jwks:?}");
    assert!(shown.contains(&url) && shown.contains("k1"), "{shown}");
}

#[test]
fn a_rotation_is_picked_up_after_the_refresh_interval() {
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let clock = TestClock::new();
    let jwks = Arc::new(RemoteJwks::load_with(&server.url("/jwks"), clock.options()).unwrap());
    let sealer = verifier(&jwks);
    server.set(Reply::Jwks(public_jwks(&[2, 1])));
    // Before the interval: no fetch, whatever the seals and opens.
    clock.advance(Duration::from_secs(299));
    assert_eq!(opens(&sealer, &token_of(1)), Ok(()));
    assert_eq!(server.hits("/jwks"), 1);
    assert_eq!(kids(&jwks), ["k1"]);
    // After it: the next look starts a fetch in the background, and the new keys arrive.
    clock.advance(Duration::from_secs(2));
    let _ = sealer.keyring();
    eventually("the new keys are loaded", || kids(&jwks) == ["k2", "k1"]);
    assert_eq!(server.hits("/jwks"), 2);
    assert_eq!(opens(&sealer, &token_of(2)), Ok(()));
    assert_eq!(opens(&sealer, &token_of(1)), Ok(()));
    // The next one is due a whole interval later.
    clock.advance(Duration::from_secs(299));
    let _ = sealer.keyring();
    assert_eq!(server.hits("/jwks"), 2);
}

#[test]
fn an_unknown_kid_fetches_at_once_at_most_once_per_cooldown() {
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let clock = TestClock::new();
    let jwks = Arc::new(RemoteJwks::load_with(&server.url("/jwks"), clock.options()).unwrap());
    let sealer = verifier(&jwks);
    server.set(Reply::Jwks(public_jwks(&[2, 1])));
    clock.advance(Duration::from_secs(31));
    // Another replica already mints with k2: the open fetches at once and succeeds.
    assert_eq!(opens(&sealer, &token_of(2)), Ok(()));
    assert_eq!(server.hits("/jwks"), 2);
    // Within the cooldown, an unknown kid does not fetch again (a flood of random kids costs
    // one fetch per cooldown).
    server.set(Reply::Jwks(public_jwks(&[3, 2])));
    for _ in 0..20 {
        assert_eq!(opens(&sealer, &token_of(3)), Err(Reason::UnknownKey));
    }
    assert_eq!(server.hits("/jwks"), 2);
    clock.advance(Duration::from_secs(31));
    assert_eq!(opens(&sealer, &token_of(3)), Ok(()));
    assert_eq!(server.hits("/jwks"), 3);
    // k1 left the JWKS: its tokens no longer open (and the cooldown holds the fetch back).
    assert_eq!(opens(&sealer, &token_of(1)), Err(Reason::UnknownKey));
    assert_eq!(server.hits("/jwks"), 3);
}

#[test]
fn callers_during_a_fetch_wait_for_that_fetch() {
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let clock = TestClock::new();
    let jwks = Arc::new(RemoteJwks::load_with(&server.url("/jwks"), clock.options()).unwrap());
    let gate = Arc::new(Gate::default());
    server.set(Reply::Gated(public_jwks(&[2, 1]), gate.clone()));
    clock.advance(Duration::from_secs(31));
    let callers = 8;
    let ready = Arc::new(Barrier::new(callers + 1));
    let threads: Vec<_> = (0..callers)
        .map(|_| {
            let (jwks, ready) = (jwks.clone(), ready.clone());
            std::thread::spawn(move || {
                ready.wait();
                jwks.refresh_for_unknown_key()
            })
        })
        .collect();
    ready.wait();
    // The first caller's fetch has reached the server; the others are waiting for it.
    eventually("the fetch reached the server", || server.hits("/jwks") == 2);
    std::thread::sleep(Duration::from_millis(200));
    gate.open();
    let results: Vec<bool> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        results,
        vec![true; callers],
        "every caller saw the new keys"
    );
    assert_eq!(server.hits("/jwks"), 2, "one fetch for all of them");
    assert_eq!(kids(&jwks), ["k2", "k1"]);
}

/// Each bad answer, a phrase of the reason it is refused, and the secret text it must never show.
fn bad_answers() -> Vec<(&'static str, Reply, &'static str)> {
    let private = json!({ "keys": [private_jwk(7)] }).to_string();
    let secret = json!({ "keys": [
        { "kty": "oct", "alg": "HS256", "kid": "s", "k": b64(&seed(9)) },
    ] })
    .to_string();
    let html = ("content-type", "text/html".to_owned());
    vec![
        (
            "an HTML page",
            Reply::Raw(
                200,
                vec![html],
                b"<html><body>Sign in</body></html>".to_vec(),
            ),
            "not a JSON object",
        ),
        ("a private key", Reply::Jwks(private), "private key"),
        ("an oct secret", Reply::Jwks(secret), "secret key"),
        (
            "an empty set",
            Reply::Jwks(r#"{"keys": []}"#.to_owned()),
            "at least one key",
        ),
        (
            "not a JWKS",
            Reply::Jwks(r#"{"issuer": "x"}"#.to_owned()),
            "\"keys\" array",
        ),
        (
            "50 MB announced",
            Reply::Announce(50 * 1024 * 1024),
            "52428800 bytes, over the limit of 65536",
        ),
        (
            "a body streamed past the cap",
            Reply::Stream(200 * 1024),
            "over the limit of 65536 bytes",
        ),
        (
            "a redirect",
            Reply::Raw(302, vec![("location", "/elsewhere".to_owned())], Vec::new()),
            "HTTP 302 (redirects are not followed",
        ),
        (
            "a 404",
            Reply::Raw(404, Vec::new(), b"{}".to_vec()),
            "HTTP 404",
        ),
        (
            "a 500",
            Reply::Raw(500, Vec::new(), b"{}".to_vec()),
            "HTTP 500",
        ),
        (
            "a body that never ends",
            Reply::Trickle,
            "no answer within 2 s",
        ),
    ]
}

#[test]
fn every_bad_answer_keeps_the_last_good_keys_and_says_why() {
    capture_logs();
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let clock = TestClock::new();
    let (seen, counting) = counted();
    let options = RemoteJwksOptions {
        // Room for a loaded machine; the body that never ends is cut here.
        timeout: Duration::from_secs(2),
        metrics: counting.metrics,
        ..clock.options()
    };
    let url = server.url("/jwks");
    let jwks = Arc::new(RemoteJwks::load_with(&url, options).unwrap());
    let sealer = verifier(&jwks);
    let token = token_of(1);
    let never_shown = [b64(&seed(7)), b64(&seed(9))];
    for (what, reply, reason) in bad_answers() {
        server.set(reply);
        let warned = logged(&url, log::Level::Warn).len();
        let error = jwks.refresh().expect_err(what);
        // A caller that gave up at the deadline returns before the fetch's own end is logged.
        eventually("the warning", || {
            logged(&url, log::Level::Warn).len() > warned
        });
        assert!(
            error.message().contains(reason) && error.message().contains(&url),
            "{what}: {}",
            error.message()
        );
        let last = jwks.last_error().expect(what);
        assert!(last.contains(reason), "{what}: {last}");
        assert_eq!(kids(&jwks), ["k1"], "{what}: the last good keys stay");
        assert_eq!(opens(&sealer, &token), Ok(()), "{what}");
        let warning = logged(&url, log::Level::Warn).pop().expect(what);
        assert!(
            warning.contains(reason) && warning.contains("keeping the 1 key(s) fetched"),
            "{what}: {warning}"
        );
        for text in [error.message(), &last, &warning, &format!("{jwks:?}")] {
            for secret in &never_shown {
                assert!(!text.contains(secret.as_str()), "{what}: {text}");
            }
        }
    }
    assert_eq!(
        server.hits("/elsewhere"),
        0,
        "the redirect was not followed"
    );
    let outcomes = seen.lock().unwrap().clone();
    assert_eq!(outcomes[0], "updated");
    assert!(
        outcomes[1..].iter().all(|o| o == "failed") && outcomes.len() == 1 + bad_answers().len(),
        "{outcomes:?}"
    );
    // A good answer again clears the error.
    server.set(Reply::Jwks(public_jwks(&[2, 1])));
    assert_eq!(jwks.refresh(), Ok(true));
    assert_eq!(jwks.last_error(), None);
    assert_eq!(kids(&jwks), ["k2", "k1"]);
}

#[test]
fn a_failed_scheduled_fetch_is_retried_after_the_cooldown() {
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let clock = TestClock::new();
    let jwks = Arc::new(RemoteJwks::load_with(&server.url("/jwks"), clock.options()).unwrap());
    server.set(Reply::Raw(503, Vec::new(), Vec::new()));
    clock.advance(Duration::from_secs(301));
    let _ = jwks.keyring();
    eventually("the failure is known", || jwks.last_error().is_some());
    assert!(jwks.last_error().unwrap().contains("HTTP 503"));
    assert_eq!(server.hits("/jwks"), 2);
    // Not again before the cooldown, then again (not a whole interval later).
    server.set(Reply::Jwks(public_jwks(&[2])));
    clock.advance(Duration::from_secs(29));
    let _ = jwks.keyring();
    assert_eq!(server.hits("/jwks"), 2);
    clock.advance(Duration::from_secs(2));
    let _ = jwks.keyring();
    eventually("the new keys are loaded", || kids(&jwks) == ["k2"]);
    assert_eq!(jwks.last_error(), None);
}

#[test]
fn a_replica_does_not_start_without_keys() {
    let server = Server::start(Reply::Raw(500, Vec::new(), Vec::new()));
    let (seen, options) = counted();
    let error = RemoteJwks::load_with(&server.url("/jwks"), options).unwrap_err();
    assert!(error.message().contains("HTTP 500"), "{}", error.message());
    assert_eq!(*seen.lock().unwrap(), ["failed"]);
    server.set(Reply::Jwks(r#"{"keys": []}"#.to_owned()));
    assert!(RemoteJwks::load(&server.url("/jwks")).is_err());
    // Nobody listening.
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let error = RemoteJwks::load(&format!("http://127.0.0.1:{port}/jwks")).unwrap_err();
    assert!(
        error.message().contains("could not fetch"),
        "{}",
        error.message()
    );
}

#[test]
fn urls_that_are_not_allowed_are_refused_at_load() {
    for (url, why) in [
        ("http://tools.example.com/jwks", "must use https://"),
        ("http://192.0.2.1/jwks", "must use https://"),
        (
            "https://user:hunter2@tools.example.com/jwks",
            "user name or password",
        ),
        (
            "http://127.0.0.1@tools.example.com/jwks",
            "user name or password",
        ),
        ("ftp://tools.example.com/jwks", "must start with https://"),
        ("/jwks", "must start with https://"),
    ] {
        let error = RemoteJwks::load(url).unwrap_err();
        assert!(error.message().contains(why), "{url}: {}", error.message());
        assert!(!error.message().contains("hunter2"), "{}", error.message());
        assert!(check_jwks_url(url).is_err());
    }
    let zero = RemoteJwksOptions {
        timeout: Duration::ZERO,
        ..RemoteJwksOptions::default()
    };
    assert!(RemoteJwks::load_with("http://127.0.0.1:1/jwks", zero).is_err());
    let small = RemoteJwksOptions {
        max_bytes: 100,
        ..RemoteJwksOptions::default()
    };
    assert!(RemoteJwks::load_with("http://127.0.0.1:1/jwks", small).is_err());
}

/// A private CA and a TLS server configuration for 127.0.0.1 and localhost signed by it: the CA's
/// PEM and the configuration.
fn private_ca() -> (String, Arc<rustls::ServerConfig>) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mrtr-state test CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().unwrap())
        .unwrap();
    let server_key = rcgen::KeyPair::generate().unwrap();
    let server_cert =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap()
            .signed_by(&server_key, &ca)
            .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(server_key.serialize_der().into());
    // The process's provider: ring, the only one built.
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![server_cert.der().clone(), ca.der().clone()], key)
        .unwrap();
    (ca.pem(), Arc::new(config))
}

#[test]
fn https_is_checked_against_the_roots_given() {
    let (ca_pem, config) = private_ca();
    let server = Server::start_with(Reply::Jwks(public_jwks(&[1])), Some(config));
    let url = server.url("/jwks");
    // The private CA given: the JWKS loads over TLS.
    let options = RemoteJwksOptions::default()
        .root_certificates_pem(ca_pem.as_bytes())
        .unwrap();
    let jwks = Arc::new(RemoteJwks::load_with(&url, options).unwrap());
    assert_eq!(opens(&verifier(&jwks), &token_of(1)), Ok(()));
    // The Mozilla roots do not know that CA.
    let error = RemoteJwks::load(&url).unwrap_err();
    assert!(
        error.message().contains("TLS") && error.message().contains(&url),
        "{}",
        error.message()
    );
    assert!(
        RemoteJwksOptions::default()
            .root_certificates_pem(b"not a certificate")
            .is_err()
    );
}

#[test]
fn https_to_a_plain_http_server_fails_cleanly() {
    let server = Server::start(Reply::Jwks(public_jwks(&[1])));
    let url = server.url("/jwks").replacen("http://", "https://", 1);
    let options = RemoteJwksOptions {
        timeout: Duration::from_secs(2),
        ..RemoteJwksOptions::default()
    };
    let error = RemoteJwks::load_with(&url, options).unwrap_err();
    assert!(
        error.message().contains("could not fetch"),
        "{}",
        error.message()
    );
}
