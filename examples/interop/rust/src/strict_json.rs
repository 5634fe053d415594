//! Strict JSON for the token's header and claims (profile, section 5, steps 4 and 11), and for the
//! state a minter is given.
//!
//! `serde_json::from_slice::<Value>` already refuses invalid UTF-8, a byte order mark, `NaN` and
//! `Infinity` (they are not JSON), an escaped lone surrogate, trailing data, and a number literal
//! beyond the range of a double (`1e400`, a 400-digit integer). What it does not do: it keeps the
//! LAST of two members with the same name, it nests up to 128 levels, and it tells a visitor a
//! number's value but not how it was written: `12345678901234567890` arrives as an exact u64, and
//! `-0` arrives as the float -0.0, exactly like `-0.0`. This visitor builds the same `Value` but
//! refuses a duplicate member name at any depth and nesting deeper than the profile allows, and it
//! reads each number next to its literal (found by [`number_literals`]) to apply the I-JSON rule:
//! an integer literal (no fraction, no exponent) lies within +-(2^53 - 1), and `-0` is the integer 0.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The largest integer every JSON implementation reads exactly (2^53 - 1).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// How deeply a token's header or claims may nest: the claims object plus 32 levels of state.
pub const MAX_DEPTH: usize = 33;

/// Parses one strict JSON text; arrays and objects may nest `max_depth` levels at most.
pub fn parse(bytes: &[u8], max_depth: usize) -> Result<Value, serde_json::Error> {
    let literals = Literals {
        integer: number_literals(bytes)
            .into_iter()
            .map(|literal| !literal.iter().any(|b| matches!(b, b'.' | b'e' | b'E')))
            .collect(),
        next: Cell::new(0),
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = Strict {
        depth: 0,
        max_depth,
        literals: &literals,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?; // nothing but white space after the value
    Ok(value)
}

/// The number literals of a JSON text, as written, in the order they appear. Only what lies
/// outside strings matters, so this needs no full tokenizer: there a number is the only token that
/// starts with `-` or a digit, and it runs up to the next delimiter. (On text that is not JSON the
/// list can be wrong, but serde_json refuses that text anyway.)
fn number_literals(text: &[u8]) -> Vec<&[u8]> {
    let mut literals = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                // Skip the string, up to the first quote that is not escaped.
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < text.len()
                    && matches!(text[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                literals.push(&text[start..i]);
            }
            _ => i += 1,
        }
    }
    literals
}

/// For each number of the text, in order, whether it is written as an integer literal; serde_json
/// reads the numbers in the same order, and each visit takes the next one.
struct Literals {
    integer: Vec<bool>,
    next: Cell<usize>,
}

impl Literals {
    /// Whether the number serde_json has just read is written as an integer literal.
    fn take_is_integer(&self) -> bool {
        let i = self.next.replace(self.next.get() + 1);
        self.integer.get(i).copied().unwrap_or(false)
    }
}

fn unsafe_integer<E: de::Error>() -> E {
    E::custom("an integer literal beyond +-(2^53 - 1)")
}

/// Reads one value found at nesting level `depth` (0 = top level, outside any container).
#[derive(Clone, Copy)]
struct Strict<'a> {
    depth: usize,
    max_depth: usize,
    literals: &'a Literals,
}

impl<'a> Strict<'a> {
    /// The reader for the members or items of a container opened at this level.
    fn enter<E: de::Error>(self) -> Result<Strict<'a>, E> {
        if self.depth >= self.max_depth {
            return Err(E::custom(format!(
                "JSON nested deeper than {} levels",
                self.max_depth
            )));
        }
        Ok(Strict {
            depth: self.depth + 1,
            ..self
        })
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    // serde_json calls visit_u64 / visit_i64 only for an integer literal that fits 64 bits (and
    // is not `-0`), and visit_f64 for every other number: so `1.0` and `1e9` stay floats here.
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.literals.take_is_integer();
        if value > MAX_SAFE_INTEGER {
            return Err(unsafe_integer());
        }
        Ok(Value::Number(value.into()))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.literals.take_is_integer();
        if value.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(unsafe_integer());
        }
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        if self.literals.take_is_integer() {
            // An integer literal that serde_json read as a float: `-0`, which is the integer 0
            // (profile, section 3.2), or one beyond 64 bits, far outside the safe range.
            return if value == 0.0 {
                Ok(Value::Number(0u64.into()))
            } else {
                Err(unsafe_integer())
            };
        }
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut members = Map::new();
        // Names arrive unescaped, so "a" and "\u0061" are the same name, as they should be.
        while let Some(name) = map.next_key::<String>()? {
            if members.contains_key(&name) {
                return Err(de::Error::custom("duplicate member name"));
            }
            let value = map.next_value_seed(inner)?;
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, MAX_DEPTH};

    fn nested(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn duplicate_member_names_are_refused_at_any_depth() {
        assert!(parse(br#"{"a":1,"a":2}"#, MAX_DEPTH).is_err());
        assert!(parse(br#"{"s":{"k":[{"x":1,"x":1}]}}"#, MAX_DEPTH).is_err());
        assert!(parse(br#"{"a":1,"\u0061":2}"#, MAX_DEPTH).is_err());
        assert!(parse(br#"{"a":{"a":1},"b":{"a":1}}"#, MAX_DEPTH).is_ok());
    }

    #[test]
    fn nesting_is_limited_to_the_given_depth() {
        assert!(parse(nested(33).as_bytes(), MAX_DEPTH).is_ok());
        assert!(parse(nested(34).as_bytes(), MAX_DEPTH).is_err());
        assert!(parse(nested(100_000).as_bytes(), MAX_DEPTH).is_err());
    }

    #[test]
    fn non_json_and_out_of_range_numbers_are_refused() {
        for text in [
            "NaN",
            "[Infinity]",
            "1e400",
            "-1e400",
            "\u{feff}{}",
            "{} x",
            "{'a':1}",
        ] {
            assert!(parse(text.as_bytes(), MAX_DEPTH).is_err(), "{text}");
        }
        assert!(parse(format!("1{}", "0".repeat(400)).as_bytes(), MAX_DEPTH).is_err());
        assert!(parse(b"\xff", MAX_DEPTH).is_err());
    }

    #[test]
    fn integers_and_floats_keep_their_written_form() {
        let value = parse(br#"[1, 1.0, 1e9, -1, 9007199254740991]"#, MAX_DEPTH).unwrap();
        let items = value.as_array().unwrap();
        assert_eq!(items[0].as_u64(), Some(1));
        assert_eq!(items[1].as_u64(), None);
        assert_eq!(items[2].as_u64(), None);
        assert_eq!(items[3].as_i64(), Some(-1));
        assert_eq!(items[4].as_u64(), Some(9_007_199_254_740_991));
    }

    #[test]
    fn minus_zero_is_the_integer_zero_but_minus_zero_point_zero_is_a_float() {
        let value = parse(br#"{"iat": -0, "f": -0.0, "e": -0e0}"#, MAX_DEPTH).unwrap();
        assert_eq!(value["iat"].as_u64(), Some(0));
        assert_eq!(value["f"].as_u64(), None);
        assert!(value["f"].as_f64().unwrap().is_sign_negative());
        assert_eq!(value["e"].as_u64(), None);
    }

    #[test]
    fn integer_literals_beyond_the_safe_range_are_refused_at_any_depth() {
        for text in [
            "9007199254740992",
            "-9007199254740992",
            "12345678901234567890",
            "18446744073709551616",
            "-9223372036854775809",
            r#"{"state": {"a": [1, {"b": 12345678901234567890}]}}"#,
        ] {
            assert!(parse(text.as_bytes(), MAX_DEPTH).is_err(), "{text}");
        }
        // The same values written with a fraction or an exponent are doubles, and in range.
        for text in [
            "-9007199254740991",
            "9007199254740992.0",
            "1.2345678901234567e19",
            "1e300",
        ] {
            assert!(parse(text.as_bytes(), MAX_DEPTH).is_ok(), "{text}");
        }
    }

    #[test]
    fn numbers_inside_strings_are_not_number_literals() {
        // Each number is read with the literal found for it: a scan that looked inside strings
        // would pair `-0` with `1.5` (a float) and `-0.0` with `-0` (an integer).
        let value = parse(br#"{"a\"1.5": "2.5 \"3.5\\", "n": -0}"#, MAX_DEPTH).unwrap();
        assert_eq!(value["n"].as_u64(), Some(0));
        let value = parse(br#"{"-0": "-0", "f": -0.0}"#, MAX_DEPTH).unwrap();
        assert_eq!(value["f"].as_u64(), None);
    }
}
