// Package base64url is the canonical unpadded base64url of the profile
// (spec/profile.md, section 5, steps 2 and 3; RFC 7515, section 2): only the
// alphabet A-Z a-z 0-9 - _, no padding, no white space, and zero unused bits, so
// that one byte string has exactly one encoding.
//
// The standard library's decoder skips CR and LF even in Strict mode, so the
// alphabet is checked here before it decodes.
package base64url
