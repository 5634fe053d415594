"""Regenerate spec/vectors/*.json deterministically from the reference implementation.

    python spec/generate_vectors.py            # write the files
    python spec/generate_vectors.py --check    # exit 1 if the committed files differ

Keys come from fixed seeds, every `jti` from the vector's id, every time from the fixed
clock below, and Ed25519 signatures are deterministic (RFC 8032), so the output is the
same on every run. Each invalid vector breaks exactly one step of the validation
procedure (spec/profile.md, section 5), so its reason is the same in every conforming
implementation. Tokens that the library would never mint (duplicate members, padding,
`alg: none`, ...) are assembled here by hand and signed with the vector keys.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mrtr_state import Key, Keyring, StateSealer, arguments_digest, canonicalize
from mrtr_state._b64 import encode as b64

VECTORS = Path(__file__).resolve().parent / "vectors"
VERSION = 1

NOW = 1_767_225_600  # 2026-01-01T00:00:00Z, the verifier's clock
IAT = NOW - 60  # valid tokens were minted a minute ago
TTL = 600
ISSUER = "https://mcp.example.com"
USER = "alice"
TOOL = "deploy"
ARGUMENTS: dict[str, Any] = {"branch": "release-1.2", "force": False}
STATE: dict[str, Any] = {"step": "confirm", "plan": ["build", "push"], "attempt": 1}
MAX_TOKEN_BYTES = 8192
TYP = "mrtr-state+jwt"


def seed(label: str) -> bytes:
    return hashlib.sha256(f"mrtr-state test vector {label}".encode()).digest()


HS256 = Key.from_secret(seed("HS256 key"))
EDDSA = Key.from_jwk(
    {
        "kty": "OKP",
        "crv": "Ed25519",
        "d": b64(seed("Ed25519 key")),
        "x": b64(Ed25519PrivateKey.from_private_bytes(seed("Ed25519 key")).public_key().public_bytes_raw()),
    }
)
EDDSA_PUBLIC = Key.from_jwk(EDDSA.public_jwk())
UNKNOWN_KEY = Key.from_jwk(
    {
        "kty": "OKP",
        "crv": "Ed25519",
        "d": b64(seed("unknown key")),
        "x": b64(Ed25519PrivateKey.from_private_bytes(seed("unknown key")).public_key().public_bytes_raw()),
    }
)
VERIFIER = Keyring([HS256, EDDSA_PUBLIC])
KEYS = {"HS256": HS256, "EdDSA": EDDSA}


def jti_for(vector_id: str) -> str:
    return b64(hashlib.sha256(vector_id.encode()).digest()[:16])


def claims_for(vector_id: str, **changes: Any) -> dict[str, Any]:
    """The claims of a valid token for the default request; `changes` edits them (None deletes)."""
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": USER,
        "aud": f"tools/call:{TOOL}",
        "iat": IAT,
        "exp": IAT + TTL,
        "jti": jti_for(vector_id),
        "args_sha256": arguments_digest(ARGUMENTS),
        "state": STATE,
    }
    for name, value in changes.items():
        if value is None:
            del claims[name]
        else:
            claims[name] = value
    return claims


def compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class Literal(str):
    """A number written in the vector files exactly as given (e.g. 1e-400, which Python reads as 0.0).

    It is a str so json.dumps writes it as a marked string, which `render` swaps for the literal.
    """

    def __new__(cls, text: str) -> Literal:
        return super().__new__(cls, text)


def literal_marker(text: str) -> str:
    return f"@@literal:{text}@@"


def with_literals(value: Any) -> Any:
    """`value` with each Literal replaced by its marker string (for render)."""
    if isinstance(value, Literal):
        return literal_marker(str(value))
    if isinstance(value, dict):
        return {k: with_literals(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_literals(v) for v in value]
    return value


def parsed(value: Any) -> Any:
    """`value` as a JSON parser reads it: each Literal becomes the number it spells."""
    return json.loads(json.dumps(with_literals(value)).replace('"@@literal:', "").replace('@@"', ""))


def header_for(key: Key, **changes: Any) -> dict[str, Any]:
    header: dict[str, Any] = {"alg": key.alg, "typ": TYP, "kid": key.kid}
    for name, value in changes.items():
        if value is None:
            del header[name]
        else:
            header[name] = value
    return header


def assemble(
    signer: Callable[[bytes], bytes] | Key,
    header: dict[str, Any] | bytes | str,
    payload: dict[str, Any] | bytes | str,
) -> str:
    """Sign header and payload (objects, raw JSON bytes, or ready segments) into a compact JWS."""
    h = header if isinstance(header, str) else b64(header if isinstance(header, bytes) else compact(header))
    p = (
        payload
        if isinstance(payload, str)
        else b64(payload if isinstance(payload, bytes) else compact(payload))
    )
    sign = signer.sign if isinstance(signer, Key) else signer
    return f"{h}.{p}.{b64(sign(f'{h}.{p}'.encode('ascii')))}"


def token(vector_id: str, alg: str = "HS256", **changes: Any) -> str:
    key = KEYS[alg]
    return assemble(key, header_for(key), claims_for(vector_id, **changes))


def vector(vector_id: str, description: str, tok: str, reason: str | None, **inputs: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": vector_id, "description": description, "token": tok, "now": NOW}
    entry["user"] = inputs.pop("user", USER)
    if not ({"tool", "prompt", "resource"} & inputs.keys()):
        entry["tool"] = TOOL
    if "arguments" not in inputs:
        entry["arguments"] = ARGUMENTS
    entry.update((k, v) for k, v in inputs.items() if v is not None)
    state = entry.pop("expected_state", STATE)
    entry["expected"] = (
        {"valid": True, "state": state} if reason is None else {"valid": False, "reason": reason}
    )
    return entry


def flip_char(segment: str, index: int) -> str:
    """Change one base64url character, keeping the segment canonical."""
    c = segment[index]
    return segment[:index] + ("B" if c != "B" else "C") + segment[index + 1 :]


def noncanonical_last(segment: str) -> str:
    """Set an unused low bit in the last character: a lax decoder reads the same bytes."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    value = alphabet.index(segment[-1])
    return segment[:-1] + alphabet[value | 1]


def sized_token(vector_id: str, length: int) -> tuple[str, Any]:
    """A valid HS256 token of exactly `length` characters, and its state.

    A filler string in the state sets the length; base64url never yields a segment
    whose length is 1 modulo 4, so a second, equally valid header spelling (with
    spaces) covers the lengths the compact one cannot reach.
    """
    headers = [compact(header_for(HS256)), json.dumps(header_for(HS256)).encode()]
    for header in headers:
        for filler in range(length):
            state = {"filler": "x" * filler}
            tok = assemble(HS256, header, claims_for(vector_id, state=state))
            if len(tok) == length:
                return tok, state
            if len(tok) > length:
                break
    raise SystemExit(f"cannot size a token to {length} characters")


def token_vectors() -> list[dict[str, Any]]:
    v: list[dict[str, Any]] = []
    add = v.append

    # --- valid ---------------------------------------------------------------------------------
    for alg in ("HS256", "EdDSA"):
        a = alg.lower()
        add(
            vector(
                f"valid-{a}-basic",
                f"A token minted by the reference sealer ({alg}).",
                token(f"valid-{a}-basic", alg),
                None,
            )
        )
    add(
        vector(
            "valid-hs256-reference-sealer",
            "The exact output of StateSealer.seal for the default request.",
            StateSealer(
                Keyring([HS256]),
                issuer=ISSUER,
                clock=lambda: IAT + 0.75,
                entropy=lambda n: hashlib.sha256(b"valid-hs256-reference-sealer").digest()[:n],
            ).seal(STATE, user=USER, tool=TOOL, arguments=ARGUMENTS),
            None,
        )
    )
    add(
        vector(
            "valid-hs256-no-argument-binding",
            "No args_sha256 claim: the token opens whatever the arguments.",
            token("valid-hs256-no-argument-binding", args_sha256=None),
            None,
            arguments={"anything": [1, 2]},
        )
    )
    add(
        vector(
            "valid-hs256-retry-without-arguments",
            "No args_sha256 and a retry without arguments.",
            token("valid-hs256-retry-without-arguments", args_sha256=None),
            None,
            arguments=None,
        )
    )
    add(
        vector(
            "valid-eddsa-prompt",
            "A prompt target: aud is prompts/get:<name>.",
            token(
                "valid-eddsa-prompt",
                "EdDSA",
                aud="prompts/get:summarize",
                args_sha256=arguments_digest({"topic": "q3"}),
            ),
            None,
            prompt="summarize",
            arguments={"topic": "q3"},
        )
    )
    add(
        vector(
            "valid-hs256-resource",
            "A resource target: aud is resources/read:<uri>, no arguments.",
            token("valid-hs256-resource", aud="resources/read:file:///reports/q3.csv", args_sha256=None),
            None,
            resource="file:///reports/q3.csv",
            arguments=None,
        )
    )
    unicode_state = {
        "name": "Zoë 😀",
        "escapes": 'tab\tquote"back\\slash',
        "n": -0.5,
        "big": 9007199254740991,
        "small": -9007199254740991,
        "e": 1e-7,
        "nested": {"list": [None, True, False, {}, []]},
    }
    add(
        vector(
            "valid-eddsa-unicode-state",
            "Unicode, escapes, safe-range integers, floats and nesting in the state.",
            token("valid-eddsa-unicode-state", "EdDSA", state=unicode_state),
            None,
            expected_state=unicode_state,
        )
    )
    add(
        vector(
            "valid-hs256-scalar-state",
            "The state may be any JSON value, here a string.",
            token("valid-hs256-scalar-state", state="step-2"),
            None,
            expected_state="step-2",
        )
    )
    deep: Any = "bottom"
    for _ in range(32):
        deep = [deep]
    add(
        vector(
            "valid-eddsa-state-depth-32",
            "The state nests exactly 32 levels: the limit.",
            token("valid-eddsa-state-depth-32", "EdDSA", state=deep),
            None,
            expected_state=deep,
        )
    )
    add(
        vector(
            "valid-hs256-one-second-before-exp",
            "now = exp - 1.",
            token("valid-hs256-one-second-before-exp"),
            None,
            now=IAT + TTL - 1,
        )
    )
    add(
        vector(
            "valid-hs256-exp-within-leeway",
            "now = exp + 5 with a leeway of 10.",
            token("valid-hs256-exp-within-leeway"),
            None,
            now=IAT + TTL + 5,
            leeway=10,
        )
    )
    add(
        vector(
            "valid-eddsa-iat-within-leeway",
            "iat = now + 5 with a leeway of 10.",
            token("valid-eddsa-iat-within-leeway", "EdDSA", iat=NOW + 5, exp=NOW + 5 + TTL),
            None,
            leeway=10,
        )
    )
    add(
        vector(
            "valid-hs256-lifetime-at-maximum",
            "exp - iat equals the maximum lifetime.",
            token("valid-hs256-lifetime-at-maximum", exp=IAT + 600),
            None,
        )
    )
    add(
        vector(
            "valid-hs256-longer-lifetime-allowed",
            "A verifier configured for longer lifetimes accepts 3600 s.",
            token("valid-hs256-longer-lifetime-allowed", exp=IAT + 3600),
            None,
            max_lifetime=3600,
        )
    )
    iat_zero = compact(claims_for("valid-hs256-iat-negative-zero", iat=0, exp=NOW + 300)).replace(
        b'"iat":0,', b'"iat":-0,'
    )
    add(
        vector(
            "valid-hs256-iat-negative-zero",
            "iat written as -0: an integer literal with the value 0 (the verifier allows the long lifetime).",
            assemble(HS256, header_for(HS256), iat_zero),
            None,
            max_lifetime=NOW + 300,
        )
    )
    top = 9007199254740991
    add(
        vector(
            "valid-eddsa-safe-integer-times",
            "iat and exp at the top of the safe integer range.",
            token("valid-eddsa-safe-integer-times", "EdDSA", iat=top - 600, exp=top),
            None,
            now=top - 300,
        )
    )
    reordered = compact({"kid": HS256.kid, "typ": TYP, "alg": "HS256"})
    add(
        vector(
            "valid-hs256-header-member-order",
            "Header members in another order, as other minters write them.",
            assemble(HS256, reordered, claims_for("valid-hs256-header-member-order")),
            None,
        )
    )
    spaced = json.dumps(claims_for("valid-eddsa-json-whitespace"), indent=2).encode()
    add(
        vector(
            "valid-eddsa-json-whitespace",
            "Header and claims JSON with insignificant white space.",
            assemble(EDDSA, json.dumps(header_for(EDDSA), indent=1).encode(), spaced),
            None,
        )
    )
    escaped = compact(claims_for("valid-hs256-escaped-user", sub="x")).replace(
        b'"sub":"x"', b'"sub":"\\u00e9ric"'
    )
    add(
        vector(
            "valid-hs256-escaped-user",
            "sub written with a \\u escape equals the decoded user.",
            assemble(HS256, header_for(HS256), escaped),
            None,
            user="éric",
        )
    )
    number_args_sealed = {"n": 1, "x": 1e15, "list": [0.5, -0]}
    add(
        vector(
            "valid-hs256-argument-number-forms",
            "Arguments equal as JSON numbers digest the same (RFC 8785).",
            token("valid-hs256-argument-number-forms", args_sha256=arguments_digest(number_args_sealed)),
            None,
            arguments={"list": [0.5, 0.0], "x": 1000000000000000, "n": 1.0},
        )
    )
    at_cap, at_cap_state = sized_token("valid-hs256-at-size-cap", MAX_TOKEN_BYTES)
    add(
        vector(
            "valid-hs256-at-size-cap",
            "A token exactly max_token_bytes long.",
            at_cap,
            None,
            expected_state=at_cap_state,
        )
    )

    escaped_typ = b'{"alg":"HS256","typ":"mrtr-state\\u002bjwt","kid":"' + HS256.kid.encode() + b'"}'
    add(
        vector(
            "valid-hs256-typ-escaped",
            'typ written as "mrtr-state\\u002bjwt": the decoded string is compared (step 7), '
            "not the raw bytes.",
            assemble(HS256, escaped_typ, claims_for("valid-hs256-typ-escaped")),
            None,
        )
    )
    add(
        vector(
            "valid-hs256-header-whitespace-outside-object",
            "White space before and after the braces of the decoded header: insignificant JSON white space.",
            assemble(
                HS256,
                b" \n\t\r" + compact(header_for(HS256)) + b"\r\n ",
                claims_for("valid-hs256-header-whitespace-outside-object"),
            ),
            None,
        )
    )
    for length in (22, 64):
        jti_id = f"valid-hs256-jti-{length}-characters"
        add(
            vector(
                jti_id,
                f"A jti of {length} base64url characters: the "
                + (
                    "shortest (128 bits, what a minter writes)."
                    if length == 22
                    else "longest a verifier accepts."
                ),
                token(jti_id, jti=(jti_for(jti_id) * 3)[:length]),
                None,
            )
        )
    underflow_header = compact(header_for(HS256))[:-1] + b',"x":1e-400}'
    add(
        vector(
            "unsupported-header-member-underflows",
            "A header member 1e-400: read as 0, so the header is JSON (step 4) and only the allowlist "
            "(step 5) refuses it.",
            assemble(HS256, underflow_header, claims_for("unsupported-header-member-underflows")),
            "unsupported_header",
        )
    )
    underflow_claims = compact(claims_for("valid-hs256-state-underflow", state={"tiny": 0})).replace(
        b'"tiny":0', b'"tiny":1e-400'
    )
    add(
        vector(
            "valid-hs256-state-underflow",
            "1e-400 in the state underflows a double: it is read as 0 (step 11), "
            "as every JSON parser reads it.",
            assemble(HS256, header_for(HS256), underflow_claims),
            None,
            expected_state={"tiny": 0.0},
        )
    )
    add(
        vector(
            "valid-hs256-argument-underflow",
            'Sealed with {"n": 0}, retried with {"n": 1e-400}: an underflow is read as 0 (section 3.4).',
            token("valid-hs256-argument-underflow", args_sha256=arguments_digest({"n": 0})),
            None,
            arguments={"n": Literal("1e-400")},
        )
    )
    add(
        vector(
            "valid-hs256-no-binding-unbindable-arguments",
            "No args_sha256 and a verifier that does not require it: unbindable arguments do not matter.",
            token("valid-hs256-no-binding-unbindable-arguments", args_sha256=None),
            None,
            arguments={"id": 9007199254740993},
        )
    )
    add(
        vector(
            "valid-eddsa-binding-required",
            "A verifier that requires the argument binding, and a token that has it.",
            token("valid-eddsa-binding-required", "EdDSA"),
            None,
            require_arguments=True,
        )
    )
    add(
        vector(
            "valid-hs256-resource-binding-required",
            "A resource read has no arguments: requiring the binding does not apply to it.",
            token(
                "valid-hs256-resource-binding-required",
                aud="resources/read:file:///reports/q3.csv",
                args_sha256=None,
            ),
            None,
            resource="file:///reports/q3.csv",
            arguments=None,
            require_arguments=True,
        )
    )

    # --- step 1: size ----------------------------------------------------------------------------
    add(
        vector(
            "too-large-over-cap",
            "One character over the size cap.",
            sized_token("too-large-over-cap", MAX_TOKEN_BYTES + 1)[0],
            "too_large",
        )
    )
    ascii_part = "A" * (MAX_TOKEN_BYTES - 2)
    add(
        vector(
            "too-large-counted-in-bytes",
            "8190 ASCII characters and two 'é': 8192 characters but 8194 UTF-8 bytes.",
            ascii_part + "éé",
            "too_large",
        )
    )
    add(
        vector(
            "too-large-smaller-cap",
            "A valid token over a verifier's smaller cap of 512.",
            token("too-large-smaller-cap", state={"filler": "x" * 400}),
            "too_large",
            max_token_bytes=512,
        )
    )

    # --- steps 2 and 3: segments and base64url ----------------------------------------------------
    good = token("malformed-base")
    h, p, s = good.split(".")
    add(vector("malformed-two-segments", "Only two segments.", f"{h}.{p}", "malformed"))
    add(vector("malformed-four-segments", "Four segments.", f"{good}.{s}", "malformed"))
    add(
        vector(
            "malformed-empty-signature",
            "An empty signature segment (the shape of alg none).",
            f"{h}.{p}.",
            "malformed",
        )
    )
    add(vector("malformed-padding", "The signature segment padded with '='.", f"{good}=", "malformed"))
    add(
        vector(
            "malformed-standard-base64",
            "'+' and '/' from the standard alphabet.",
            f"{h}.{p}.{s[:-2]}+/",
            "malformed",
        )
    )
    add(
        vector(
            "malformed-whitespace",
            "A line break inside the payload segment.",
            f"{h}.{p[:20]}\n{p[20:]}.{s}",
            "malformed",
        )
    )
    add(
        vector(
            "malformed-noncanonical-signature",
            "Non-zero unused bits in the signature's last character: "
            "a lax decoder reads the same bytes and the signature would verify.",
            f"{h}.{p}.{noncanonical_last(s)}",
            "malformed",
        )
    )
    # A segment whose length is a multiple of 4 has no unused bits: lengthen the state until it has some.
    padded_claims = claims_for("malformed-noncanonical-payload")
    while len(b64(compact(padded_claims))) % 4 == 0:
        padded_claims["state"] = {
            **padded_claims["state"],
            "pad": padded_claims["state"].get("pad", "") + "x",
        }
    noncanonical_payload = noncanonical_last(b64(compact(padded_claims)))
    add(
        vector(
            "malformed-noncanonical-payload",
            "A payload segment with non-zero unused bits, correctly signed as text by a faulty minter.",
            assemble(HS256, header_for(HS256), noncanonical_payload),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-segment-length",
            "A payload segment whose length modulo 4 is 1.",
            f"{h}.{p + 'A' * ((1 - len(p)) % 4)}.{s}",
            "malformed",
        )
    )
    add(vector("malformed-non-ascii", "A non-ASCII character in the token.", good[:-1] + "é", "malformed"))

    # --- step 4: header JSON -----------------------------------------------------------------------
    claims = claims_for("malformed-header")
    add(
        vector(
            "malformed-header-not-json",
            "The header is not JSON.",
            assemble(HS256, b"{alg:HS256}", claims),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-header-array",
            "The header is a JSON array.",
            assemble(HS256, b'["HS256"]', claims),
            "malformed",
        )
    )
    dup = b'{"alg":"HS256","typ":"mrtr-state+jwt","kid":"%s","alg":"HS256"}' % HS256.kid.encode()
    add(
        vector(
            "malformed-header-duplicate-member",
            "The header repeats alg.",
            assemble(HS256, dup, claims),
            "malformed",
        )
    )
    bom = b"\xef\xbb\xbf" + compact(header_for(HS256))
    add(
        vector(
            "malformed-header-bom",
            "The header starts with a UTF-8 byte order mark.",
            assemble(HS256, bom, claims),
            "malformed",
        )
    )
    bad_utf8 = b'{"alg":"HS256","typ":"mrtr-state+jwt","kid":"\xff"}'
    add(
        vector(
            "malformed-header-invalid-utf8",
            "The header is not valid UTF-8.",
            assemble(HS256, bad_utf8, claims),
            "malformed",
        )
    )
    deep_header = (
        b'{"alg":"HS256","typ":"mrtr-state+jwt","kid":"'
        + HS256.kid.encode()
        + b'","x":'
        + b"[" * 40
        + b"]" * 40
        + b"}"
    )
    add(
        vector(
            "malformed-header-too-deep",
            "A header value nested 41 levels (the limit is 33).",
            assemble(HS256, deep_header, claims),
            "malformed",
        )
    )

    # --- steps 5 and 6: header allowlist and algorithm --------------------------------------------
    for param, value in [
        ("crit", ["exp"]),
        ("b64", False),
        ("jku", "https://attacker.example/jwks.json"),
        ("jwk", EDDSA.public_jwk()),
        ("x5u", "https://attacker.example/cert.pem"),
        ("x5c", ["MIIB"]),
        ("zip", "DEF"),
        ("cty", "JWT"),
        ("nonce", "x"),
    ]:
        add(
            vector(
                f"unsupported-header-{param}",
                f"The header carries {param}.",
                assemble(
                    HS256, header_for(HS256, **{param: value}), claims_for(f"unsupported-header-{param}")
                ),
                "unsupported_header",
            )
        )
    add(
        vector(
            "unsupported-header-alg-none",
            "alg none (with a signature segment present).",
            assemble(HS256, header_for(HS256, alg="none"), claims_for("unsupported-header-alg-none")),
            "unsupported_header",
        )
    )
    add(
        vector(
            "unsupported-header-alg-ed25519",
            "The fully specified Ed25519 identifier (RFC 9864) is not used in version 1.",
            assemble(EDDSA, header_for(EDDSA, alg="Ed25519"), claims_for("unsupported-header-alg-ed25519")),
            "unsupported_header",
        )
    )
    add(
        vector(
            "unsupported-header-alg-hs512",
            "HS512.",
            assemble(
                lambda m: hmac.digest(seed("HS256 key"), m, "sha512"),
                header_for(HS256, alg="HS512"),
                claims_for("unsupported-header-alg-hs512"),
            ),
            "unsupported_header",
        )
    )
    add(
        vector(
            "unsupported-header-alg-missing",
            "No alg.",
            assemble(HS256, header_for(HS256, alg=None), claims_for("unsupported-header-alg-missing")),
            "unsupported_header",
        )
    )

    # --- step 7: typ ----------------------------------------------------------------------------------
    for label, typ in [
        ("jwt", "JWT"),
        ("application-prefix", "application/mrtr-state+jwt"),
        ("uppercase", "MRTR-STATE+JWT"),
        ("missing", None),
    ]:
        add(
            vector(
                f"wrong-type-{label}",
                f"typ is {typ!r}.",
                assemble(HS256, header_for(HS256, typ=typ), claims_for(f"wrong-type-{label}")),
                "wrong_type",
            )
        )

    # --- step 8: kid ----------------------------------------------------------------------------------
    add(
        vector(
            "unknown-key-eddsa",
            "Signed by an Ed25519 key that is not in the ring.",
            assemble(UNKNOWN_KEY, header_for(UNKNOWN_KEY), claims_for("unknown-key-eddsa")),
            "unknown_key",
        )
    )
    add(
        vector(
            "unknown-key-missing-kid",
            "No kid.",
            assemble(HS256, header_for(HS256, kid=None), claims_for("unknown-key-missing-kid")),
            "unknown_key",
        )
    )
    add(
        vector(
            "unknown-key-numeric-kid",
            "kid is a number.",
            assemble(HS256, header_for(HS256, kid=1), claims_for("unknown-key-numeric-kid")),
            "unknown_key",
        )
    )

    # --- step 9: algorithm pinned to the key ---------------------------------------------------------
    public_x = base64.urlsafe_b64decode(EDDSA.public_jwk()["x"] + "=")
    add(
        vector(
            "algorithm-mismatch-hs256-with-ed25519-public-key",
            "HS256 naming the Ed25519 key, MACed with its public key bytes as the secret "
            "(the classic confusion).",
            assemble(
                lambda m: hmac.digest(public_x, m, "sha256"),
                header_for(EDDSA, alg="HS256"),
                claims_for("algorithm-mismatch-hs256-with-ed25519-public-key"),
            ),
            "algorithm_mismatch",
        )
    )
    add(
        vector(
            "algorithm-mismatch-eddsa-with-hs256-kid",
            "EdDSA naming the HS256 key.",
            assemble(
                EDDSA, header_for(HS256, alg="EdDSA"), claims_for("algorithm-mismatch-eddsa-with-hs256-kid")
            ),
            "algorithm_mismatch",
        )
    )

    # --- step 10: signature ---------------------------------------------------------------------------
    for alg in ("HS256", "EdDSA"):
        a = alg.lower()
        t = token(f"bad-signature-{a}-signature-changed", alg)
        h2, p2, s2 = t.split(".")
        add(
            vector(
                f"bad-signature-{a}-signature-changed",
                "One character of the signature changed.",
                f"{h2}.{p2}.{flip_char(s2, 5)}",
                "bad_signature",
            )
        )
        t = token(f"bad-signature-{a}-payload-changed", alg)
        h2, p2, s2 = t.split(".")
        add(
            vector(
                f"bad-signature-{a}-payload-changed",
                "One character of the payload changed (the rule's check).",
                f"{h2}.{flip_char(p2, len(p2) // 2)}.{s2}",
                "bad_signature",
            )
        )
    t = token("bad-signature-hs256-header-changed")
    h2, p2, s2 = t.split(".")
    reencoded = b64(
        json.dumps(json.loads(base64.urlsafe_b64decode(h2 + "==")), separators=(", ", ": ")).encode()
    )
    add(
        vector(
            "bad-signature-hs256-header-changed",
            "The same header re-encoded with spaces: a different signing input.",
            f"{reencoded}.{p2}.{s2}",
            "bad_signature",
        )
    )
    t = token("bad-signature-hs256-short")
    h2, p2, s2 = t.split(".")
    add(
        vector(
            "bad-signature-hs256-short",
            "A 31-byte HS256 signature.",
            f"{h2}.{p2}.{b64(base64.urlsafe_b64decode(s2 + '=')[:31])}",
            "bad_signature",
        )
    )
    t = token("bad-signature-eddsa-zero", "EdDSA")
    h2, p2, _ = t.split(".")
    add(
        vector(
            "bad-signature-eddsa-zero",
            "An all-zero Ed25519 signature.",
            f"{h2}.{p2}.{b64(bytes(64))}",
            "bad_signature",
        )
    )
    t = token("bad-signature-eddsa-signed-by-unknown-key", "EdDSA")
    h2, p2, _ = t.split(".")
    add(
        vector(
            "bad-signature-eddsa-signed-by-unknown-key",
            "Names the ring's Ed25519 key, signed by another key.",
            f"{h2}.{p2}.{b64(UNKNOWN_KEY.sign(f'{h2}.{p2}'.encode()))}",
            "bad_signature",
        )
    )

    # --- step 11: claims JSON -----------------------------------------------------------------------
    def raw(payload: bytes, alg: str = "HS256") -> str:
        return assemble(KEYS[alg], header_for(KEYS[alg]), payload)

    base = compact(claims_for("malformed-claims"))
    add(vector("malformed-claims-not-json", "The payload is not JSON.", raw(base[:-1]), "malformed"))
    add(
        vector("malformed-claims-array", "The payload is a JSON array.", raw(b"[" + base + b"]"), "malformed")
    )
    add(
        vector(
            "malformed-claims-duplicate-sub",
            "sub twice: a last-wins parser would see alice.",
            raw(base.replace(b'"sub":"alice"', b'"sub":"mallory","sub":"alice"')),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-claims-duplicate-in-state",
            "A duplicate member inside the state.",
            raw(base.replace(b'"step":"confirm"', b'"step":"confirm","step":"done"'), "EdDSA"),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-claims-nan",
            "A NaN literal in the state.",
            raw(base.replace(b'"attempt":1', b'"attempt":NaN')),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-claims-number-overflow",
            "1e400 in the state: beyond a double.",
            raw(base.replace(b'"attempt":1', b'"attempt":1e400')),
            "malformed",
        )
    )
    deep_state: Any = 1
    for _ in range(33):
        deep_state = [deep_state]
    add(
        vector(
            "malformed-claims-state-depth-33",
            "The state nests 33 levels (the limit is 32).",
            raw(compact(claims_for("malformed-claims-state-depth-33", state=deep_state)), "EdDSA"),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-claims-invalid-utf8",
            "The payload is not valid UTF-8.",
            raw(base.replace(b'"confirm"', b'"conf\xc3\x28rm"')),
            "malformed",
        )
    )

    add(
        vector(
            "malformed-claims-lone-surrogate",
            "An escaped lone surrogate in a state string: not valid Unicode (I-JSON).",
            raw(base.replace(b'"confirm"', b'"conf\\udc00rm"'), "EdDSA"),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-claims-unsafe-integer-in-state",
            "An integer literal beyond 2**53 - 1 in the state: languages would read different values.",
            raw(base.replace(b'"attempt":1', b'"attempt":12345678901234567890')),
            "malformed",
        )
    )
    add(
        vector(
            "valid-eddsa-surrogate-pair-escape",
            "A correctly paired surrogate escape is valid Unicode.",
            raw(base.replace(b'"confirm"', b'"\\ud83d\\ude00"'), "EdDSA"),
            None,
            expected_state={**STATE, "step": "\U0001f600"},
        )
    )

    # --- step 12: claims -----------------------------------------------------------------------------
    for claim in ("iss", "sub", "aud", "iat", "exp", "jti", "state"):
        add(
            vector(
                f"malformed-missing-{claim}",
                f"No {claim} claim.",
                token(f"malformed-missing-{claim}", **{claim: None}),
                "malformed",
            )
        )
    add(
        vector(
            "malformed-extra-claim-nbf",
            "An nbf claim: the claim set is closed.",
            token("malformed-extra-claim-nbf", nbf=IAT),
            "malformed",
        )
    )
    exp_text = str(IAT + TTL).encode()
    for label, literal in [
        ("string", b'"' + exp_text + b'"'),
        ("fraction", exp_text + b".5"),
        ("zero-fraction", exp_text + b".0"),
        ("exponent", b"1.76722614e9"),
        ("boolean", b"true"),
        ("beyond-safe-range", b"9007199254740992"),
    ]:
        payload = compact(claims_for(f"malformed-exp-{label}")).replace(
            b'"exp":' + exp_text, b'"exp":' + literal
        )
        add(
            vector(
                f"malformed-exp-{label}",
                f"exp written as {literal.decode()}.",
                raw(payload, "EdDSA" if label in ("fraction", "beyond-safe-range") else "HS256"),
                "malformed",
            )
        )
    add(
        vector(
            "malformed-iat-negative", "iat is negative.", token("malformed-iat-negative", iat=-1), "malformed"
        )
    )
    add(
        vector(
            "malformed-exp-not-after-iat",
            "exp equals iat.",
            token("malformed-exp-not-after-iat", exp=IAT),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-aud-array",
            "aud as an array holding the right target.",
            token("malformed-aud-array", "EdDSA", aud=[f"tools/call:{TOOL}"]),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-sub-empty",
            "sub is the empty string.",
            token("malformed-sub-empty", sub=""),
            "malformed",
        )
    )
    add(vector("malformed-sub-number", "sub is a number.", token("malformed-sub-number", sub=7), "malformed"))
    add(
        vector(
            "malformed-jti-short",
            "jti of 8 characters.",
            token("malformed-jti-short", jti="abcdefgh"),
            "malformed",
        )
    )
    add(
        vector(
            "malformed-jti-characters",
            "jti with characters outside base64url.",
            token("malformed-jti-characters", jti="not/base64url+jti=="),
            "malformed",
        )
    )
    for length in (21, 65):
        jti_id = f"malformed-jti-{length}-characters"
        add(
            vector(
                jti_id,
                f"A jti of {length} base64url characters: a verifier accepts 22 to 64.",
                token(jti_id, jti=(jti_for(jti_id) * 3)[:length]),
                "malformed",
            )
        )
    add(
        vector(
            "malformed-args-digest-length",
            "args_sha256 of 42 characters.",
            token("malformed-args-digest-length", args_sha256=arguments_digest(ARGUMENTS)[:42]),
            "malformed",
        )
    )

    args_null = compact(claims_for("malformed-args-digest-null")).replace(
        b'"args_sha256":"' + arguments_digest(ARGUMENTS).encode() + b'"', b'"args_sha256":null'
    )
    add(
        vector(
            "malformed-args-digest-null",
            "args_sha256 is null: a malformed binding, not an absent one.",
            raw(args_null, "EdDSA"),
            "malformed",
        )
    )

    # --- steps 13 to 15: lifetime and time -------------------------------------------------------------
    add(
        vector(
            "lifetime-too-long-hs256",
            "exp - iat = 601 s; the maximum is 600.",
            token("lifetime-too-long-hs256", exp=IAT + 601),
            "lifetime_too_long",
        )
    )
    add(
        vector(
            "lifetime-too-long-eddsa",
            "exp - iat = 3600 s.",
            token("lifetime-too-long-eddsa", "EdDSA", exp=IAT + 3600),
            "lifetime_too_long",
        )
    )
    add(
        vector(
            "issued-in-future",
            "iat = now + 1.",
            token("issued-in-future", iat=NOW + 1, exp=NOW + 1 + TTL),
            "issued_in_future",
        )
    )
    add(
        vector(
            "issued-in-future-beyond-leeway",
            "iat = now + 11 with a leeway of 10.",
            token("issued-in-future-beyond-leeway", "EdDSA", iat=NOW + 11, exp=NOW + 11 + TTL),
            "issued_in_future",
            leeway=10,
        )
    )
    add(
        vector(
            "expired-at-exp", "now = exp exactly: refused.", token("expired-at-exp"), "expired", now=IAT + TTL
        )
    )
    add(
        vector(
            "expired-ten-minutes-later",
            "Presented 10 minutes after it was minted (the rule's check).",
            token("expired-ten-minutes-later", "EdDSA"),
            "expired",
            now=IAT + 600,
        )
    )
    add(
        vector(
            "expired-beyond-leeway",
            "now = exp + 10 with a leeway of 10.",
            token("expired-beyond-leeway"),
            "expired",
            now=IAT + TTL + 10,
            leeway=10,
        )
    )

    # --- steps 16 to 19: bindings ----------------------------------------------------------------------
    add(
        vector(
            "wrong-issuer",
            "Minted by another service.",
            token("wrong-issuer", iss="https://other.example.com"),
            "wrong_issuer",
        )
    )
    add(
        vector(
            "wrong-issuer-trailing-slash",
            "The issuer with a trailing slash: compared exactly.",
            token("wrong-issuer-trailing-slash", "EdDSA", iss=ISSUER + "/"),
            "wrong_issuer",
        )
    )
    add(
        vector(
            "wrong-user",
            "Presented by another user (the rule's check).",
            token("wrong-user"),
            "wrong_user",
            user="mallory",
        )
    )
    add(
        vector(
            "wrong-user-eddsa",
            "Presented by another user, EdDSA.",
            token("wrong-user-eddsa", "EdDSA"),
            "wrong_user",
            user="bob",
        )
    )
    add(
        vector(
            "wrong-user-case",
            "User ids are compared exactly, without case folding.",
            token("wrong-user-case"),
            "wrong_user",
            user="Alice",
        )
    )
    add(
        vector(
            "wrong-user-normalisation",
            "NFC and NFD spellings of one name are different users: no normalisation.",
            token("wrong-user-normalisation", sub="e\u0301ric"),
            "wrong_user",
            user="\u00e9ric",
        )
    )
    add(
        vector(
            "wrong-tool", "Presented to another tool.", token("wrong-tool"), "wrong_tool", tool="delete_repo"
        )
    )
    add(
        vector(
            "wrong-tool-prompt-of-same-name",
            "A tool's state presented to a prompt of the same name.",
            token("wrong-tool-prompt-of-same-name", "EdDSA"),
            "wrong_tool",
            prompt=TOOL,
        )
    )
    add(
        vector(
            "wrong-tool-resource",
            "A resource's state presented to another resource.",
            token("wrong-tool-resource", aud="resources/read:file:///a.txt", args_sha256=None),
            "wrong_tool",
            resource="file:///b.txt",
            arguments=None,
        )
    )
    add(
        vector(
            "wrong-request",
            "Retried with other arguments.",
            token("wrong-request"),
            "wrong_request",
            arguments={"branch": "main", "force": True},
        )
    )
    add(
        vector(
            "wrong-request-eddsa",
            "Retried with one more argument.",
            token("wrong-request-eddsa", "EdDSA"),
            "wrong_request",
            arguments={**ARGUMENTS, "extra": 1},
        )
    )
    add(
        vector(
            "wrong-request-no-arguments",
            "Bound to arguments, retried without any (treated as {}).",
            token("wrong-request-no-arguments"),
            "wrong_request",
            arguments=None,
        )
    )
    add(
        vector(
            "wrong-request-number-value",
            "1 and 1.5 are different numbers.",
            token("wrong-request-number-value", args_sha256=arguments_digest({"n": 1})),
            "wrong_request",
            arguments={"n": 1.5},
        )
    )

    # What a verifier that digested 2**60 + 1 as the double 2**60 would have sealed (the old collision).
    as_double = (
        base64.urlsafe_b64encode(hashlib.sha256(canonicalize({"id": float(2**60)})).digest())
        .decode()
        .rstrip("=")
    )
    add(
        vector(
            "wrong-request-integer-beyond-2-53",
            'Bound to the JCS digest of {"id": 2**60} (a double), retried with 2**60 + 1: '
            "the arguments are unbindable, so no digest matches (section 3.4).",
            token("wrong-request-integer-beyond-2-53", args_sha256=as_double),
            "wrong_request",
            arguments={"id": 2**60 + 1},
        )
    )
    add(
        vector(
            "wrong-request-integer-beyond-2-53-same-value",
            "The same, retried with 2**60 itself: unbindable arguments match no digest, "
            "even their own double's.",
            token("wrong-request-integer-beyond-2-53-same-value", args_sha256=as_double),
            "wrong_request",
            arguments={"id": 2**60},
        )
    )
    add(
        vector(
            "wrong-request-binding-required",
            "No args_sha256, and a verifier that requires the argument binding (step 19).",
            token("wrong-request-binding-required", args_sha256=None),
            "wrong_request",
            require_arguments=True,
        )
    )
    add(
        vector(
            "wrong-request-binding-required-prompt",
            "A prompt's token without args_sha256, and a verifier that requires the binding.",
            token(
                "wrong-request-binding-required-prompt",
                "EdDSA",
                aud="prompts/get:summarize",
                args_sha256=None,
            ),
            "wrong_request",
            prompt="summarize",
            arguments={"topic": "q3"},
            require_arguments=True,
        )
    )

    # --- several faults at once: the first failing step of section 5 decides --------------------------
    v.extend(order_vectors())

    ids = [x["id"] for x in v]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate vector ids")
    return v


def order_vectors() -> list[dict[str, Any]]:
    """Tokens with two or more faults; each expects the reason of the earliest failing step."""
    out: list[dict[str, Any]] = []

    def add(vector_id: str, description: str, tok: str, reason: str, **inputs: Any) -> None:
        out.append(vector(vector_id, description, tok, reason, **inputs))

    def claims_of(vector_id: str, **changes: Any) -> dict[str, Any]:
        return claims_for(vector_id, **changes)

    add(
        "order-size-before-segments",
        "Over the cap and not base64url at all.",
        "!" * (MAX_TOKEN_BYTES + 1),
        "too_large",
    )
    add(
        "order-header-allowlist-before-type",
        "A forbidden header parameter and a wrong typ.",
        assemble(
            HS256,
            header_for(HS256, jku="https://attacker.example/jwks.json", typ="JWT"),
            claims_of("order-header-allowlist-before-type"),
        ),
        "unsupported_header",
    )
    add(
        "order-algorithm-before-type",
        "alg none and a wrong typ.",
        assemble(HS256, header_for(HS256, alg="none", typ="JWT"), claims_of("order-algorithm-before-type")),
        "unsupported_header",
    )
    add(
        "order-type-before-key",
        "A wrong typ and an unknown kid.",
        assemble(UNKNOWN_KEY, header_for(UNKNOWN_KEY, typ="JWT"), claims_of("order-type-before-key")),
        "wrong_type",
    )
    add(
        "order-key-before-signature",
        "An unknown kid and a signature that verifies under no key.",
        assemble(lambda m: bytes(64), header_for(UNKNOWN_KEY), claims_of("order-key-before-signature")),
        "unknown_key",
    )
    tampered = token("order-signature-before-claims", exp=IAT + 3600, sub="mallory")
    h, p, s = tampered.split(".")
    add(
        "order-signature-before-claims",
        "A changed payload whose claims also fail (lifetime, user): the signature decides first.",
        f"{h}.{flip_char(p, len(p) // 2)}.{s}",
        "bad_signature",
    )
    add(
        "order-claims-json-before-claims",
        "A duplicate member and a missing claim.",
        assemble(
            HS256,
            header_for(HS256),
            compact(claims_of("order-claims-json-before-claims", jti=None)).replace(
                b'"sub":"alice"', b'"sub":"alice","sub":"alice"'
            ),
        ),
        "malformed",
    )
    add(
        "order-claim-types-before-lifetime",
        "aud as an array and a lifetime of 3600 s.",
        token("order-claim-types-before-lifetime", aud=[f"tools/call:{TOOL}"], exp=IAT + 3600),
        "malformed",
    )
    add(
        "order-lifetime-before-future",
        "A lifetime of 3600 s, issued in the future.",
        token("order-lifetime-before-future", iat=NOW + 60, exp=NOW + 60 + 3600),
        "lifetime_too_long",
    )
    add(
        "order-lifetime-before-expired",
        "A lifetime of 3600 s, and expired.",
        token("order-lifetime-before-expired", "EdDSA", exp=IAT + 3600),
        "lifetime_too_long",
        now=IAT + 4000,
    )
    add(
        "order-expired-before-issuer-user-tool-request",
        "Expired, and for another issuer, user, tool and arguments: expired decides.",
        token("order-expired-before-issuer-user-tool-request", iss="https://other.example.com"),
        "expired",
        now=IAT + TTL,
        user="mallory",
        tool="delete_repo",
        arguments={"branch": "main"},
    )
    add(
        "order-future-before-user",
        "Issued in the future and presented by another user.",
        token("order-future-before-user", "EdDSA", iat=NOW + 30, exp=NOW + 30 + TTL),
        "issued_in_future",
        user="mallory",
    )
    add(
        "order-issuer-before-user",
        "Another issuer and another user.",
        token("order-issuer-before-user", iss="https://other.example.com"),
        "wrong_issuer",
        user="mallory",
    )
    add(
        "order-user-before-tool",
        "Another user and another tool.",
        token("order-user-before-tool", "EdDSA"),
        "wrong_user",
        user="mallory",
        tool="delete_repo",
    )
    add(
        "order-tool-before-request",
        "Another tool and other arguments.",
        token("order-tool-before-request"),
        "wrong_tool",
        tool="delete_repo",
        arguments={"branch": "main"},
    )
    for alg in ("HS256", "EdDSA"):
        a = alg.lower()
        t = assemble(KEYS[alg], header_for(KEYS[alg]), b'{"iss": not JSON')
        h, p, s = t.split(".")
        add(
            f"order-signature-before-unparseable-claims-{a}",
            "Claims that are not JSON under a changed signature: the signature (step 10) is checked "
            "before the claims are parsed (step 11).",
            f"{h}.{p}.{flip_char(s, 5)}",
            "bad_signature",
        )
    overflow_header = compact(header_for(HS256))[:-1] + b',"x":1e400}'
    add(
        "order-header-json-before-allowlist",
        "A header member that overflows a double (1e400) and is not allowed: step 4 refuses it first.",
        assemble(HS256, overflow_header, claims_of("order-header-json-before-allowlist")),
        "malformed",
    )
    return out


def argument_vectors() -> list[dict[str, Any]]:
    cases: list[tuple[str, Any]] = [
        ("empty", {}),
        ("simple", {"env": "prod"}),
        ("ascii-order", {"b": 1, "a": 2, "aa": 3, "A": 4, "_": 5, "": 6}),
        (
            "rfc8785-sorting",
            {
                "\u20ac": "Euro Sign",
                "\r": "Carriage Return",
                "\ufb33": "Hebrew Letter Dalet With Dagesh",
                "1": "One",
                "\U0001f600": "Emoji: Grinning Face",
                "\u0080": "Control",
                "\u00f6": "Latin Small Letter O With Diaeresis",
            },
        ),
        ("utf16-order-beyond-bmp", {"\ufffd": 1, "\U00010000": 2, "\ue000": 3}),
        ("string-escapes", {"s": '\u0000\u0001\u001f"\\/\b\f\n\r\t\u007f\u2028\u2029 é 😀'}),
        (
            "nested",
            {"outer": {"z": [3, 2, 1], "a": {"b": None, "a": True}}, "list": [{"y": 1, "x": 2}, [], {}]},
        ),
        ("literals", {"t": True, "f": False, "n": None}),
        (
            "integers",
            {"zero": 0, "one": 1, "minus": -1, "max-safe": 9007199254740991, "min-safe": -9007199254740991},
        ),
        ("negative-zero", {"z": -0.0}),
        (
            "rfc8785-numbers",
            {
                "c": 1e-6,
                "d": 1e-7,
                "f": 4.5,
                "g": 0.1,
                "h": 5e-324,
                "j": 333333333.33333329,
                "l": -1.5e-7,
                "m": 0.000001234,
                "o": 4503599627370495.5,
                "p": 123456789.125,
                "q": -2.2250738585072014e-308,
            },
        ),
        ("float-integers", {"a": 1.0, "b": 100.0, "c": -2.0, "d": 1e15}),
        (
            "safe-range-written-as-doubles",
            {"top": Literal("9007199254740991.0"), "bottom": Literal("-9.007199254740991e15")},
        ),
        ("underflow-reads-as-zero", {"tiny": Literal("1e-400"), "negative": Literal("-1e-400")}),
        ("unicode-values", {"name": "Zoë", "emoji": "😀", "cjk": "日本語", "rtl": "שלום"}),
    ]
    # Unbindable (section 3.4): a number whose value is an integer beyond +-(2**53 - 1),
    # however it is written. Every implementation must report these as unbindable.
    unbindable: list[tuple[str, Any]] = [
        (
            "integers-beyond-2-53",
            {"a": 9007199254740993, "b": 18014398509481985, "c": 100000000000000000000000},
        ),
        ("integer-2-53", {"id": 9007199254740992}),
        ("negative-integer-beyond-2-53-nested", {"items": [{"id": -9007199254740992}]}),
        ("exponent-integer-1e23", {"id": Literal("1e23")}),
        ("double-2-60", {"id": Literal("1.152921504606847e+18")}),
        ("large-double-1e21", {"x": Literal("1e21")}),
    ]
    out: list[dict[str, Any]] = []
    for case_id, arguments in cases:
        value = parsed(arguments)
        canonical = canonicalize(value).decode("utf-8")
        out.append(
            {
                "id": case_id,
                "arguments": arguments,
                "canonical": canonical,
                "digest": arguments_digest(value),
            }
        )
    for case_id, arguments in unbindable:
        try:
            arguments_digest(parsed(arguments))
        except ValueError:
            pass
        else:
            raise SystemExit(f"argument vector {case_id} should be unbindable")
        out.append({"id": case_id, "arguments": arguments, "unbindable": True})
    return out


# --- invalid Ed25519 public keys (section 7.2) ------------------------------------------------------
# Plain integer arithmetic on the curve (RFC 8032, section 5.1), written here independently of the
# library's check, to find the encodings every implementation must refuse at load.
P = 2**255 - 19
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
L = 2**252 + 27742317777372353535851937790883648493  # the order of the base point


def recover_x(y: int, sign: int) -> int | None:
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P != 0:
        return None
    return P - x if (x & 1) != sign else x


def edwards_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, P - 2, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P
    return x3, y3


def edwards_mul(k: int, point: tuple[int, int]) -> tuple[int, int]:
    result, addend = (0, 1), point
    while k:
        if k & 1:
            result = edwards_add(result, addend)
        addend = edwards_add(addend, addend)
        k >>= 1
    return result


def point_order(point: tuple[int, int]) -> int:
    order, q = 1, point
    while q != (0, 1):
        q, order = edwards_add(q, point), order + 1
    return order


def encode_point(y: int, sign: int) -> bytes:
    return (y | (sign << 255)).to_bytes(32, "little")


def torsion_points() -> list[tuple[int, int]]:
    """The 8 points of small order: [L]Q for points Q until all 8 have appeared."""
    found: set[tuple[int, int]] = set()
    y = 2
    while len(found) < 8:
        x = recover_x(y, 0)
        if x is not None:
            found.add(edwards_mul(L, (x, y)))
        y += 1
    return sorted(found, key=lambda q: (point_order(q), q[1], q[0] & 1))


def invalid_key_vectors() -> list[dict[str, Any]]:
    def entry(vector_id: str, description: str, x: bytes) -> dict[str, Any]:
        jwk = {"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": vector_id, "x": b64(x)}
        return {"id": vector_id, "description": description, "jwk": jwk}

    out: list[dict[str, Any]] = []
    names = {1: "identity", 2: "order-2", 4: "order-4", 8: "order-8"}
    counts: dict[int, int] = {}
    for x, y in torsion_points():
        order = point_order((x, y))
        counts[order] = counts.get(order, 0) + 1
        label = names[order] + ("" if order <= 2 else f"-{counts[order]}")
        out.append(
            entry(
                f"small-order-{label}",
                f"The canonical encoding of a point of order {order}: a constant signature verifies "
                "for many messages under it.",
                encode_point(y, x & 1),
            )
        )
    # The points whose y + p still fits in 255 bits (y = 0, 1) have a second encoding with y >= p.
    for y, what in ((0, "an order-4 point (y = 0)"), (1, "the identity (y = 1)")):
        for sign in (0, 1):
            out.append(
                entry(
                    f"non-canonical-y-{y}-plus-p-sign-{sign}",
                    f"y = p + {y} with sign bit {sign}: a non-canonical encoding (y >= p) of {what}.",
                    encode_point(P + y, sign),
                )
            )
    for y, what in ((1, "identity"), (P - 1, "order-2 point")):
        out.append(
            entry(
                f"sign-bit-set-on-x-zero-{'identity' if y == 1 else 'order-2'}",
                f"The {what} (x = 0) with the sign bit set: RFC 8032 5.1.3 refuses x = 0 with sign 1.",
                encode_point(y, 1),
            )
        )
    for k in range(2, 19):
        x = recover_x(k, 0)
        if x is not None and point_order_is_large((x, k)):
            out.append(
                entry(
                    "non-canonical-large-order",
                    f"y = p + {k}: a non-canonical encoding (y >= p) of a point of large order "
                    f"(y = {k} is its canonical encoding).",
                    encode_point(P + k, 0),
                )
            )
            break
    y = 2
    while recover_x(y, 0) is not None:
        y += 1
    out.append(
        entry(
            "not-on-curve",
            f"y = {y}: no x satisfies the curve equation, so this is not a point.",
            encode_point(y, 0),
        )
    )
    out.append(entry("length-31-bytes", "x of 31 bytes.", b"\x11" * 31))
    out.append(entry("length-33-bytes", "x of 33 bytes.", b"\x11" * 33))
    return out


def point_order_is_large(point: tuple[int, int]) -> bool:
    q = point
    for _ in range(3):
        q = edwards_add(q, q)
    return q != (0, 1)


def documents() -> dict[str, Any]:
    keys = {
        "version": VERSION,
        "hs256": HS256.private_jwk(),
        "eddsa": EDDSA.private_jwk(),
        "eddsa_public": EDDSA.public_jwk(),
        "verifier_jwks": {"keys": [HS256.private_jwk(), EDDSA.public_jwk()]},
        "unknown": UNKNOWN_KEY.private_jwk(),
    }
    tokens = {
        "version": VERSION,
        "defaults": {
            "issuer": ISSUER,
            "max_lifetime": 600,
            "leeway": 0,
            "max_token_bytes": MAX_TOKEN_BYTES,
            "require_arguments": False,
        },
        "vectors": token_vectors(),
    }
    arguments = {"version": VERSION, "vectors": argument_vectors()}
    invalid_keys = {"version": VERSION, "vectors": invalid_key_vectors()}
    return {
        "keys.json": keys,
        "tokens.json": tokens,
        "arguments.json": arguments,
        "invalid-keys.json": invalid_keys,
    }


def render(document: Any) -> str:
    text = json.dumps(with_literals(document), indent=2, ensure_ascii=False) + "\n"
    return re.sub(r'"@@literal:([^"@]+)@@"', r"\1", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--check", action="store_true", help="compare with the committed files instead of writing"
    )
    args = parser.parse_args(argv)
    stale = []
    for name, document in documents().items():
        path = VECTORS / name
        text = render(document)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            VECTORS.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale vectors: {', '.join(stale)}; run python spec/generate_vectors.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
