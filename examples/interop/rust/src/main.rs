//! mrtr-state interop example for Rust: verifies and mints `requestState` tokens of the profile
//! (spec/profile.md) with the `jsonwebtoken` crate.
//!
//! ```text
//! interop vectors <dir>   check spec/vectors/{tokens,arguments,invalid-keys}.json; one line per vector, then "N passed, M failed"
//! interop verify          stdin {"jobs": [...]}  ->  stdout {"results": [{"valid": true, "state": ...} | {"valid": false, "reason": ...}]}
//! interop mint            stdin {"jobs": [...]}  ->  stdout {"results": [{"token": ...}]}
//! interop conformance     the JSON-lines protocol of `mrtr-state conformance` (docs/conformance.md)
//! ```
//!
//! The job format is described in tests/interop/harness.py. A job that cannot be read (bad JSON, a
//! missing field, an unusable key) stops the program with a message on stderr and exit status 2.

mod digest;
mod jwe;
mod keys;
mod mint;
mod strict_json;
mod verify;

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::keys::Ring;
use crate::verify::Request;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["vectors", dir] => vectors(Path::new(dir)),
        ["verify"] => jobs(|job| verify_job(&object(job)?)).map(|()| true),
        ["mint"] => jobs(mint_job).map(|()| true),
        ["conformance"] => conformance().map(|()| true),
        _ => Err(
            "usage: interop vectors <dir> | interop verify | interop mint (jobs on stdin) | interop conformance".into(),
        ),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("interop: {message}");
            ExitCode::from(2)
        }
    }
}

/// Reads `{"jobs": [...]}` from stdin, runs each, writes `{"results": [...]}` to stdout. Each job
/// is handed over as its JSON text, so that a mint job's state can be read as written.
fn jobs(run: fn(&RawValue) -> Result<Value, String>) -> Result<(), String> {
    #[derive(Deserialize)]
    struct Input<'a> {
        #[serde(borrow)]
        jobs: Vec<&'a RawValue>,
    }
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let input: Input = serde_json::from_slice(&input)
        .map_err(|e| format!("stdin is not {{\"jobs\": [...]}}: {e}"))?;
    let mut results = Vec::with_capacity(input.jobs.len());
    for (i, job) in input.jobs.into_iter().enumerate() {
        results.push(run(job).map_err(|e| format!("job {i}: {e}"))?);
    }
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, &json!({ "results": results }))
        .map_err(|e| e.to_string())?;
    writeln!(stdout).map_err(|e| e.to_string())
}

/// `conformance`: one request per line on stdin, one answer per line on stdout, in order, flushed
/// after each (the protocol of `mrtr-state conformance`).
fn conformance() -> Result<(), String> {
    let (mut stdin, mut stdout) = (std::io::stdin().lock(), std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = stdin.read_until(b'\n', &mut line);
        if read.map_err(|e| format!("cannot read stdin: {e}"))? == 0 {
            return Ok(());
        }
        serde_json::to_writer(&mut stdout, &answer(&line)).map_err(|e| e.to_string())?;
        writeln!(stdout)
            .and_then(|()| stdout.flush())
            .map_err(|e| e.to_string())?;
    }
}

/// The answer to one request: the verify job, the argument digest and the key loader, as for the
/// jobs and the vectors.
fn answer(line: &[u8]) -> Value {
    let Ok(request) = read_deep::<Map<String, Value>>(line) else {
        return json!({ "id": null, "error": "a request must be one JSON object per line" });
    };
    let outcome = match request.get("op").and_then(Value::as_str) {
        Some("verify") => verify_job(&request),
        Some("digest") => match arguments(&request) {
            Ok(Some(arguments)) => Ok(match digest::arguments_digest(&arguments) {
                Ok(digest) => json!({ "digest": digest }),
                Err(_) => json!({ "unbindable": true }),
            }),
            // Absent arguments are {} (profile 8.2); null is present, and unbindable.
            Ok(None) => {
                digest::arguments_digest(&json!({})).map(|digest| json!({ "digest": digest }))
            }
            Err(problem) => Err(problem),
        },
        Some("load_key") => {
            // One key ("jwk"), or a ring ("jwks"), whose keys must also keep their secrets apart.
            let ring = match request.get("jwks") {
                Some(jwks) => jwks.clone(),
                None => json!({ "keys": [request.get("jwk").cloned().unwrap_or(Value::Null)] }),
            };
            Ok(json!({ "loaded": Ring::from_jwks(&ring).is_ok() }))
        }
        _ => Ok(json!({ "unsupported": true })),
    };
    let mut reply = outcome.unwrap_or_else(|problem| json!({ "error": problem }));
    reply["id"] = request.get("id").cloned().unwrap_or(Value::Null);
    reply
}

/// A verify job: `{"keys", "token", "issuer", "user", one of "tool"/"prompt"/"resource",
/// "arguments"?, "now", "max_lifetime"?, "leeway"?, "max_token_bytes"?, "require_arguments"?}`.
fn verify_job(job: &Map<String, Value>) -> Result<Value, String> {
    let ring = Ring::from_jwks(field(job, "keys")?)?;
    let leeway = optional_count(job, "leeway", 0)?;
    if leeway > 300 {
        return Err("\"leeway\" must be at most 300 seconds".into());
    }
    let request = Request {
        issuer: string(job, "issuer")?,
        user: string(job, "user")?,
        audience: audience(job)?,
        arguments: arguments(job)?.unwrap_or_else(|| json!({})),
        now: field(job, "now")?
            .as_i64()
            .ok_or("\"now\" must be an integer")?,
        max_lifetime: optional_count(job, "max_lifetime", 600)?,
        leeway,
        max_token_bytes: usize::try_from(optional_count(job, "max_token_bytes", 8192)?)
            .map_err(|e| e.to_string())?,
        require_arguments: match job.get("require_arguments") {
            None => false,
            Some(flag) => flag
                .as_bool()
                .ok_or("\"require_arguments\" must be true or false")?,
        },
    };
    Ok(
        match verify::verify(&ring, field(job, "token")?, &request) {
            Ok(state) => json!({ "valid": true, "state": state }),
            Err(reason) => json!({ "valid": false, "reason": reason.code() }),
        },
    )
}

/// A mint job: `{"key", "issuer", "user", one of "tool"/"prompt"/"resource", "arguments"?, "now",
/// "ttl", "state", "jti"?}`. The state is passed on as the job wrote it (see `mint`).
fn mint_job(text: &RawValue) -> Result<Value, String> {
    #[derive(Deserialize)]
    struct StateText<'a> {
        #[serde(borrow)]
        state: &'a RawValue,
    }
    let job = &object(text)?;
    let state = serde_json::from_str::<StateText>(text.get())
        .map_err(|e| format!("\"state\": {e}"))?
        .state;
    let key = keys::minting_key(field(job, "key")?)?;
    let count = |name| {
        field(job, name)?
            .as_u64()
            .ok_or(format!("{name:?} must be a non-negative integer"))
    };
    let request = mint::Mint {
        issuer: string(job, "issuer")?,
        user: string(job, "user")?,
        audience: audience(job)?,
        arguments: arguments(job)?,
        now: count("now")?,
        ttl: count("ttl")?,
        state: state.get().to_owned(),
        jti: job.get("jti").map(|_| string(job, "jti")).transpose()?,
    };
    Ok(json!({ "token": mint::mint(&key, &request)? }))
}

/// `vectors <dir>`: every token vector and argument vector, against its expected outcome, and
/// every invalid key, which must be refused when it is loaded.
fn vectors(dir: &Path) -> Result<bool, String> {
    let read = |name: &str| -> Result<Value, String> {
        let path = dir.join(name);
        let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        read_deep(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let (keys, tokens, encrypted, arguments, invalid_keys) = (
        read("keys.json")?,
        read("tokens.json")?,
        read("encrypted.json")?,
        read("arguments.json")?,
        read("invalid-keys.json")?,
    );
    let list = |file: &Value, name: &str| -> Result<Vec<Value>, String> {
        let vectors = file.get("vectors").and_then(Value::as_array);
        vectors
            .cloned()
            .ok_or(format!("{name}: no \"vectors\" array"))
    };
    let (mut passed, mut failed) = (0, 0);

    // tokens.json against verifier_jwks; encrypted.json (the encrypted form) against
    // encrypted_verifier_jwks.
    for (file, name, jwks) in [
        (&tokens, "tokens.json", "verifier_jwks"),
        (&encrypted, "encrypted.json", "encrypted_verifier_jwks"),
    ] {
        let defaults = file
            .get("defaults")
            .and_then(Value::as_object)
            .ok_or(format!("{name}: no \"defaults\""))?;
        for vector in list(file, name)? {
            let id = vector["id"].as_str().unwrap_or("?").to_owned();
            // A vector is a verify job: the defaults, overridden by the vector, with the verifier's keys.
            let mut job = defaults.clone();
            job.extend(vector.as_object().cloned().unwrap_or_default());
            job.insert("keys".into(), keys[jwks].clone());
            let got = verify_job(&job).map_err(|e| format!("{name} {id}: {e}"))?;
            let expected = &vector["expected"];
            // Compared as RFC 8785 text, so that 0.0 and 0 are the same number, as in every JSON reader.
            let ok = matches!(
                (digest::canonicalize(&got), digest::canonicalize(expected)),
                (Ok(a), Ok(b)) if a == b
            );
            println!(
                "{} token {id}: {}{}",
                mark(ok),
                describe(&got, !ok),
                expected_if(ok, describe(expected, true))
            );
            if ok {
                passed += 1
            } else {
                failed += 1
            }
        }
    }

    for vector in list(&arguments, "arguments.json")? {
        let id = vector["id"].as_str().unwrap_or("?");
        let got = match digest::canonical_arguments(&vector["arguments"]) {
            Ok(canonical) => format!(
                "canonical {}, digest {}",
                String::from_utf8_lossy(&canonical),
                digest::arguments_digest(&vector["arguments"])?
            ),
            Err(_) => "unbindable".to_owned(),
        };
        let want = match vector.get("unbindable") {
            Some(Value::Bool(true)) => "unbindable".to_owned(),
            _ => format!(
                "canonical {}, digest {}",
                vector["canonical"].as_str().unwrap_or("?"),
                vector["digest"].as_str().unwrap_or("?")
            ),
        };
        let ok = got == want;
        println!(
            "{} arguments {id}: {got}{}",
            mark(ok),
            expected_if(ok, want)
        );
        if ok {
            passed += 1
        } else {
            failed += 1
        }
    }

    for vector in list(&invalid_keys, "invalid-keys.json")? {
        let id = vector["id"].as_str().unwrap_or("?");
        let ring = match vector.get("jwks") {
            Some(jwks) => jwks.clone(), // a ring whose keys each load alone (profile 12.4)
            None => json!({ "keys": [vector["jwk"]] }),
        };
        let got = match Ring::from_jwks(&ring) {
            Ok(_) => "loaded".to_owned(),
            Err(problem) => format!("refused: {problem}"),
        };
        let ok = got != "loaded";
        println!(
            "{} invalid key {id}: {got}{}",
            mark(ok),
            expected_if(ok, "refused".into())
        );
        if ok {
            passed += 1
        } else {
            failed += 1
        }
    }

    println!("{passed} passed, {failed} failed");
    Ok(failed == 0)
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "ok  "
    } else {
        "FAIL"
    }
}

fn expected_if(ok: bool, expected: String) -> String {
    if ok {
        String::new()
    } else {
        format!(", expected {expected}")
    }
}

fn describe(verdict: &Value, with_state: bool) -> String {
    match verdict.get("reason") {
        Some(reason) => format!("refused {}", reason.as_str().unwrap_or("?")),
        None if with_state => format!("valid, state {}", verdict["state"]),
        None => "valid".to_owned(),
    }
}

// --- reading jobs --------------------------------------------------------------------------------

/// How deep a request line or a vector file may nest: a guard for the stack, well beyond the 256 levels
/// arguments bind to (profile 3.4), so that deeper arguments are read, and found unbindable.
const MAX_TEXT_DEPTH: usize = 1000;

/// Reads JSON text as serde_json does, without its default nesting limit of 128 levels (arguments nest
/// to 256, issue 32 D3) but refusing text that nests deeper than `MAX_TEXT_DEPTH`. A member name
/// repeated in an object: the last member wins, as serde_json's maps read it (profile 3.4, D2).
fn read_deep<T: serde::de::DeserializeOwned>(text: &[u8]) -> Result<T, serde_json::Error> {
    use serde::de::Error;
    if nesting(text) > MAX_TEXT_DEPTH {
        return Err(serde_json::Error::custom("the JSON text nests too deep"));
    }
    let mut reader = serde_json::Deserializer::from_slice(text);
    reader.disable_recursion_limit();
    let value = T::deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// The deepest nesting of brackets and braces in `text`, outside strings.
fn nesting(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in text {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn object(job: &RawValue) -> Result<Map<String, Value>, String> {
    serde_json::from_str(job.get()).map_err(|_| "not a JSON object".to_owned())
}

fn field<'a>(job: &'a Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    job.get(name).ok_or(format!("missing {name:?}"))
}

fn string(job: &Map<String, Value>, name: &str) -> Result<String, String> {
    field(job, name)?
        .as_str()
        .map(str::to_owned)
        .ok_or(format!("{name:?} must be a string"))
}

fn optional_count(job: &Map<String, Value>, name: &str, default: u64) -> Result<u64, String> {
    match job.get(name) {
        None => Ok(default),
        Some(value) => value
            .as_u64()
            .ok_or(format!("{name:?} must be a non-negative integer")),
    }
}

/// The target as `aud` writes it (profile, section 3.5); exactly one of tool, prompt, resource.
fn audience(job: &Map<String, Value>) -> Result<String, String> {
    let targets = [
        ("tool", "tools/call"),
        ("prompt", "prompts/get"),
        ("resource", "resources/read"),
    ];
    let mut found = targets.iter().filter(|(name, _)| job.contains_key(*name));
    match (found.next(), found.next()) {
        (Some((name, method)), None) => Ok(format!("{method}:{}", string(job, name)?)),
        _ => Err("exactly one of \"tool\", \"prompt\", \"resource\" is needed".into()),
    }
}

fn arguments(job: &Map<String, Value>) -> Result<Option<Value>, String> {
    // Any JSON value: arguments present but not an object (null too) are unbindable (profile 3.4
    // and 8.2), which the digest decides; only absent arguments are {}.
    Ok(job.get("arguments").cloned())
}
