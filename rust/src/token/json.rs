//! The strict JSON reader (profile 3.3, section 5 steps 4 and 11; section 3.4 for arguments).
//!
//! One reader for every JSON text the crate reads: the token's header and claims, key files and
//! JWKS, and (in the conformance adapter) request lines. It reads RFC 8259 exactly (no BOM, no
//! `NaN`, no comments, valid UTF-8) into a `serde_json::Value` and records what the caller may
//! refuse: a repeated member name (the last member wins in the value), an escaped lone surrogate
//! (read as U+FFFD in the value), a number literal beyond the range of a double, an integer literal
//! beyond ±(2^53 − 1), and the deepest nesting. A number literal that underflows a double reads as 0.

use serde_json::{Map, Number, Value};

/// 2^53 − 1, the largest integer every language reads exactly (I-JSON, RFC 7493).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// What a text held that a strict reader refuses, besides syntax errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// A member name appeared twice in one object.
    pub duplicate_member: bool,
    /// A `\u` escape of a lone surrogate.
    pub lone_surrogate: bool,
    /// A number literal beyond the range of a double (`1e400`); read as `null` in the value.
    pub number_overflow: bool,
    /// An integer literal (no fraction, no exponent) beyond ±(2^53 − 1).
    pub unsafe_integer: bool,
    /// The deepest nesting of arrays and objects (a scalar is 0, `[]` is 1).
    pub depth: usize,
}

/// Where each member of a top-level object lies in the text: its name and the byte range of its
/// value, so that one member can be read again on its own (the conformance adapter reads the
/// request's arguments so).
pub type MemberSpans = Vec<(String, std::ops::Range<usize>)>;

/// Reads one JSON text as `read` does, and returns the spans of the top-level object's members.
pub fn read_with_spans(
    bytes: &[u8],
    max_depth: usize,
) -> Result<(Value, Findings, MemberSpans), NotJson> {
    let text = std::str::from_utf8(bytes).map_err(|_| NotJson)?;
    let mut reader = Reader {
        source: text,
        text: text.as_bytes(),
        pos: 0,
        max_depth,
        findings: Findings::default(),
        spans: Some(Vec::new()),
    };
    reader.skip_ws();
    let value = reader.value(0)?;
    reader.skip_ws();
    if reader.pos != reader.text.len() {
        return Err(NotJson);
    }
    Ok((value, reader.findings, reader.spans.unwrap_or_default()))
}

impl Findings {
    /// Whether the text is I-JSON as the token's header and claims must be (steps 4 and 11):
    /// no duplicate member, no lone surrogate, no overflow, no unsafe integer literal.
    pub fn is_strict(&self) -> bool {
        !(self.duplicate_member
            || self.lone_surrogate
            || self.number_overflow
            || self.unsafe_integer)
    }
}

/// A text that is not JSON at all, or nests past the reader's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotJson;

/// Reads one JSON text (white space allowed around it) of at most `max_depth` levels of nesting.
pub fn read(bytes: &[u8], max_depth: usize) -> Result<(Value, Findings), NotJson> {
    let text = std::str::from_utf8(bytes).map_err(|_| NotJson)?;
    let mut reader = Reader {
        source: text,
        text: text.as_bytes(),
        pos: 0,
        max_depth,
        findings: Findings::default(),
        spans: None,
    };
    reader.skip_ws();
    let value = reader.value(0)?;
    reader.skip_ws();
    if reader.pos != reader.text.len() {
        return Err(NotJson);
    }
    Ok((value, reader.findings))
}

/// Reads a text that must be strict I-JSON (steps 4 and 11), nesting at most `max_depth` levels.
pub fn read_strict(bytes: &[u8], max_depth: usize) -> Option<Value> {
    match read(bytes, max_depth) {
        Ok((value, findings)) if findings.is_strict() => Some(value),
        _ => None,
    }
}

struct Reader<'a> {
    /// The text, already checked to be UTF-8 (once, for the whole text).
    source: &'a str,
    /// The same text's bytes.
    text: &'a [u8],
    pos: usize,
    max_depth: usize,
    findings: Findings,
    spans: Option<MemberSpans>,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn expect(&mut self, literal: &[u8]) -> Result<(), NotJson> {
        if self.text[self.pos..].starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, NotJson> {
        match self.peek().ok_or(NotJson)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => Ok(Value::String(self.string()?)),
            b't' => self.expect(b"true").map(|()| Value::Bool(true)),
            b'f' => self.expect(b"false").map(|()| Value::Bool(false)),
            b'n' => self.expect(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(NotJson),
        }
    }

    fn enter(&mut self, depth: usize) -> Result<(), NotJson> {
        if depth > self.max_depth {
            return Err(NotJson);
        }
        self.findings.depth = self.findings.depth.max(depth);
        self.pos += 1;
        self.skip_ws();
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Value, NotJson> {
        self.enter(depth)?;
        let mut map = Map::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(NotJson);
            }
            let name = self.string()?;
            self.skip_ws();
            self.expect(b":")?;
            self.skip_ws();
            let start = self.pos;
            let value = self.value(depth)?;
            if depth == 1
                && let Some(spans) = self.spans.as_mut()
            {
                spans.push((name.clone(), start..self.pos));
            }
            // The last member of a name wins in the value; the repetition is recorded.
            if map.insert(name, value).is_some() {
                self.findings.duplicate_member = true;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(NotJson),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, NotJson> {
        self.enter(depth)?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(NotJson),
            }
        }
    }

    fn hex4(&mut self) -> Result<u16, NotJson> {
        let digits = self.text.get(self.pos..self.pos + 4).ok_or(NotJson)?;
        let mut value = 0u16;
        for &d in digits {
            value = value * 16 + (d as char).to_digit(16).ok_or(NotJson)? as u16;
        }
        self.pos += 4;
        Ok(value)
    }

    fn string(&mut self) -> Result<String, NotJson> {
        self.pos += 1; // the opening quote
        let mut out: Option<String> = None;
        loop {
            let start = self.pos;
            while let Some(&b) = self.text.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The text was checked to be UTF-8 as a whole, and both ends of the run are ASCII (a
            // quote, an escape or the string's first byte), so the run is whole characters: a
            // slice of the checked text, not checked again.
            let run = self.source.get(start..self.pos).ok_or(NotJson)?;
            match self.peek().ok_or(NotJson)? {
                b'"' => {
                    self.pos += 1;
                    // Most strings have no escape: one allocation of the exact length.
                    return Ok(match out {
                        None => run.to_owned(),
                        Some(mut out) => {
                            out.push_str(run);
                            out
                        }
                    });
                }
                b'\\' => {
                    let out = out.get_or_insert_with(String::new);
                    out.push_str(run);
                    self.pos += 1;
                    let escape = self.peek().ok_or(NotJson)?;
                    self.pos += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            out.push(self.code_point(unit)?);
                        }
                        _ => return Err(NotJson),
                    }
                }
                _ => return Err(NotJson), // a control character
            }
        }
    }

    fn code_point(&mut self, unit: u16) -> Result<char, NotJson> {
        match unit {
            0xD800..=0xDBFF => {
                if self.text[self.pos..].starts_with(b"\\u") {
                    let save = self.pos;
                    self.pos += 2;
                    let low = self.hex4()?;
                    if (0xDC00..=0xDFFF).contains(&low) {
                        let c = 0x10000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        return char::from_u32(c).ok_or(NotJson);
                    }
                    self.pos = save;
                }
                self.findings.lone_surrogate = true;
                Ok('\u{FFFD}')
            }
            0xDC00..=0xDFFF => {
                self.findings.lone_surrogate = true;
                Ok('\u{FFFD}')
            }
            _ => char::from_u32(u32::from(unit)).ok_or(NotJson),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, NotJson> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(NotJson),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(NotJson);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(NotJson);
            }
        }
        let literal = std::str::from_utf8(&self.text[start..self.pos]).map_err(|_| NotJson)?;
        if integer {
            if let Ok(n) = literal.parse::<i64>() {
                if n.unsigned_abs() > MAX_SAFE_INTEGER as u64 {
                    self.findings.unsafe_integer = true;
                }
                return Ok(Value::Number(n.into())); // "-0" reads as the integer 0
            }
            self.findings.unsafe_integer = true;
            if let Ok(n) = literal.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
        }
        // Rust's float parser rounds to the nearest double, half to even; underflow reads as ±0.
        let double: f64 = literal.parse().map_err(|_| NotJson)?;
        match Number::from_f64(double) {
            Some(n) => Ok(Value::Number(n)),
            None => {
                self.findings.number_overflow = true;
                Ok(Value::Null)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(text: &str) -> Findings {
        read(text.as_bytes(), 1000).unwrap().1
    }

    #[test]
    fn reads_json_and_refuses_what_is_not() {
        assert_eq!(
            read(b" {\"a\": [1, 2.5, \"x\"]} ", 5).unwrap().0,
            serde_json::json!({"a": [1, 2.5, "x"]})
        );
        for bad in [
            "",
            "{",
            "NaN",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "\u{feff}{}",
            "[\"\t\"]",
            "tru",
            "{} {}",
            "\"\\x\"",
        ] {
            assert!(read(bad.as_bytes(), 10).is_err(), "{bad:?} read");
        }
        assert!(read(b"[0x]", 10).is_err());
        assert!(read(&[b'"', 0xff, b'"'], 10).is_err(), "invalid UTF-8");
    }

    #[test]
    fn records_what_strict_readers_refuse() {
        assert!(findings(r#"{"a":1,"a":2}"#).duplicate_member);
        assert_eq!(
            read(br#"{"a":1,"a":2}"#, 5).unwrap().0,
            serde_json::json!({"a": 2})
        );
        assert!(findings(r#""\ud800""#).lone_surrogate);
        assert!(findings(r#""\udc00\ud800""#).lone_surrogate);
        assert!(!findings(r#""\ud83d\ude00""#).lone_surrogate);
        assert!(findings("1e400").number_overflow);
        assert!(!findings("1e-400").number_overflow);
        assert!(findings("9007199254740992").unsafe_integer);
        assert!(findings("-9007199254740992").unsafe_integer);
        assert!(findings("100000000000000000000000").unsafe_integer);
        assert!(!findings("9007199254740991").unsafe_integer);
        assert!(!findings("9007199254740992.0").unsafe_integer);
        assert_eq!(findings("[[1]]").depth, 2);
        assert_eq!(findings("1").depth, 0);
        assert!(read(b"[[[]]]", 2).is_err());
        assert!(read(b"[[]]", 2).is_ok());
    }

    #[test]
    fn underflow_reads_as_zero() {
        assert_eq!(read(b"1e-400", 1).unwrap().0.as_f64(), Some(0.0));
        assert_eq!(read(b"-0", 1).unwrap().0.as_i64(), Some(0));
    }
}
