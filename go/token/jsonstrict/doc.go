// Package jsonstrict is the strict JSON reader of the profile (spec/profile.md,
// section 5, steps 4 and 11): RFC 8259 JSON plus the I-JSON rules (RFC 7493),
// so that what passes reads as the same values in every language.
//
// It refuses what encoding/json lets through: invalid UTF-8 (encoding/json
// replaces it with U+FFFD), a byte order mark, duplicate member names at any
// depth (encoding/json keeps the last), an escaped lone surrogate (encoding/json
// turns it into U+FFFD), a number beyond the range of a double, an integer
// literal beyond +/-(2^53 - 1), nesting deeper than a limit, and content after
// the value. A number that underflows a double (1e-400) reads as 0.
//
// AppendMarshal is the minting side: it writes a value as json.Marshal does and
// refuses what Parse would refuse in that text, checking as it writes.
package jsonstrict
