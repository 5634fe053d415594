//! Strict JSON for the token's header and claims (profile, section 5, steps 4 and 11).
//!
//! `serde_json::from_slice::<Value>` already refuses invalid UTF-8, a byte order mark, `NaN` and
//! `Infinity` (they are not JSON), trailing data, and a number literal beyond the range of a double
//! (`1e400`, a 400-digit integer). What it does not do: it keeps the LAST of two members with the
//! same name, and it nests up to 128 levels. This visitor builds the same `Value` but refuses a
//! duplicate member name at any depth and nesting deeper than the profile allows.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// How deeply a token's header or claims may nest: the claims object plus 32 levels of state.
pub const MAX_DEPTH: usize = 33;

/// Parses one strict JSON text; arrays and objects may nest `max_depth` levels at most.
pub fn parse(bytes: &[u8], max_depth: usize) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = Strict {
        depth: 0,
        max_depth,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?; // nothing but white space after the value
    Ok(value)
}

/// Reads one value found at nesting level `depth` (0 = top level, outside any container).
#[derive(Clone, Copy)]
struct Strict {
    depth: usize,
    max_depth: usize,
}

impl Strict {
    /// The reader for the members or items of a container opened at this level.
    fn enter<E: de::Error>(self) -> Result<Strict, E> {
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

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
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

    // serde_json calls visit_u64 / visit_i64 only for a literal without fraction or exponent that
    // fits 64 bits, and visit_f64 for every other number: so `1.0` and `1e9` stay floats here.
    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
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
        let value = parse(br#"[1, 1.0, 1e9, -1, 9007199254740993]"#, MAX_DEPTH).unwrap();
        let items = value.as_array().unwrap();
        assert_eq!(items[0].as_u64(), Some(1));
        assert_eq!(items[1].as_u64(), None);
        assert_eq!(items[2].as_u64(), None);
        assert_eq!(items[3].as_u64(), None);
        assert_eq!(items[4].as_u64(), Some(9_007_199_254_740_993));
    }
}
