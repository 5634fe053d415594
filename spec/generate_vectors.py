"""Regenerate spec/vectors/*.json deterministically from the reference implementation.

    python spec/generate_vectors.py            # write the files
    python spec/generate_vectors.py --check    # exit 1 if the committed files differ
    python spec/generate_vectors.py --coverage # the vectors of each validation step, and their reasons

Keys come from fixed seeds, every `jti` from the vector's id, every time from the fixed
clock below, and Ed25519 signatures are deterministic (RFC 8032), so the output is the
same on every run. The vectors are grouped by the step of the validation procedure they
exercise (spec/profile.md, sections 5 and 5.1). Each invalid vector outside the `order-`
groups breaks exactly one step, so its reason is the same in every conforming implementation;
an `order-` vector breaks several, and pins which step refuses it first. Tokens that the
library would never mint (duplicate members, padding, `alg: none`, ...) are assembled here
by hand and signed with the vector keys.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mrtr_state import (
    REASONS,
    InvalidRequestState,
    Key,
    Keyring,
    StateSealer,
    arguments_digest,
    canonicalize,
)
from mrtr_state.token._b64 import decode as unb64
from mrtr_state.token._b64 import encode as b64

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
EDDSA_PUBLIC_BYTES = base64.urlsafe_b64decode(EDDSA.public_jwk()["x"] + "=")


def jti_for(vector_id: str) -> str:
    return b64(hashlib.sha256(vector_id.encode()).digest()[:16])


def edited(members: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`members` with `changes` applied: a value replaces or adds a member, None deletes it."""
    for name, value in changes.items():
        if value is None:
            del members[name]
        else:
            members[name] = value
    return members


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
    return edited(claims, changes)


def compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class Literal(str):
    """A number written in the vector files exactly as given (e.g. 1e-400, which Python reads as 0.0).

    It is a str so json.dumps writes it as a marked string, which `render` swaps for the literal.
    """

    def __new__(cls, text: str) -> Literal:
        return super().__new__(cls, text)


#: The JSON value `null`, written as such where None would mean "absent" (section 8.2: arguments that are
#: present as null are not the absent arguments {}).
JSON_NULL = Literal("null")


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
    """The header a minter writes with `key`; `changes` edits it (None deletes)."""
    return edited({"alg": key.alg, "typ": TYP, "kid": key.kid}, changes)


def segment(value: dict[str, Any] | bytes | str) -> str:
    """A token segment: an object written compact, raw JSON bytes as they are, then base64url; a str is
    already a segment."""
    if isinstance(value, str):
        return value
    return b64(value if isinstance(value, bytes) else compact(value))


def assemble(
    signer: Callable[[bytes], bytes] | Key,
    header: dict[str, Any] | bytes | str,
    payload: dict[str, Any] | bytes | str,
) -> str:
    """Sign header and payload (objects, raw JSON bytes, or ready segments) into a compact JWS."""
    h, p = segment(header), segment(payload)
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


def sized(
    length: int, header: dict[str, Any], mint: Callable[[bytes, dict[str, Any]], str], what: str
) -> tuple[str, Any]:
    """A valid token of exactly `length` characters, minted by `mint(header JSON, state)`, and its state.

    A filler string in the state sets the length; base64url never yields a segment
    whose length is 1 modulo 4, so a second, equally valid header spelling (with
    spaces) covers the lengths the compact one cannot reach.
    """
    for spelling in (compact(header), json.dumps(header).encode()):
        for filler in range(length):
            state = {"filler": "x" * filler}
            tok = mint(spelling, state)
            if len(tok) == length:
                return tok, state
            if len(tok) > length:
                break
    raise SystemExit(f"cannot size {what} to {length} characters")


def sized_token(vector_id: str, length: int) -> tuple[str, Any]:
    """A valid HS256 token of exactly `length` characters, and its state."""
    return sized(
        length,
        header_for(HS256),
        lambda header, state: assemble(HS256, header, claims_for(vector_id, state=state)),
        "a token",
    )


# --- tokens.json, one group per step of section 5 ---------------------------------------------------
# Each function below makes the vectors of one validation step (or of a small group of steps), named after
# the step; TOKEN_GROUPS lists them in the order of the file. A table is a list of rows, one vector each,
# turned into vectors by the loop of claim_table or header_table; a vector that needs code of its own is
# written out.

#: A row of claim_table: id, description, alg, claim changes (None deletes), verifier inputs.
ClaimRow = tuple[str, str, str, dict[str, Any], dict[str, Any]]


def claim_table(reason: str | None, rows: list[ClaimRow]) -> list[dict[str, Any]]:
    """One vector per row: a token for the default request with its claims changed (reason None: valid)."""
    return [
        vector(vector_id, description, token(vector_id, alg, **changes), reason, **inputs)
        for vector_id, description, alg, changes, inputs in rows
    ]


def token_table(reason: str, rows: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """One vector per row (id, description, token): a token written out for the default request."""
    return [vector(vector_id, description, tok, reason) for vector_id, description, tok in rows]


def header_table(
    reason: str,
    rows: list[tuple[str, str, Callable[[bytes], bytes] | Key, dict[str, Any] | bytes]],
    claims: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One vector per row (id, description, signer, header): the default claims under that header
    (`claims`, when given, are the claims of every row instead)."""
    return [
        vector(
            vector_id,
            description,
            assemble(signer, header, claims_for(vector_id) if claims is None else claims),
            reason,
        )
        for vector_id, description, signer, header in rows
    ]


def raw_token(payload: bytes, alg: str = "HS256") -> str:
    """A token whose claims are exactly the JSON text `payload`, signed with the vector key of `alg`."""
    return assemble(KEYS[alg], header_for(KEYS[alg]), payload)


def reference_seal(key: Key, entropy_seed: bytes) -> str:
    """StateSealer.seal's output with `key` for the default request, sealed at IAT + 0.75 s, its jti
    drawn from an entropy hook fed by `entropy_seed`."""
    return StateSealer(
        Keyring([key]),
        issuer=ISSUER,
        clock=lambda: IAT + 0.75,
        entropy=lambda n: hashlib.sha256(entropy_seed).digest()[:n],
    ).seal(STATE, user=USER, tool=TOOL, arguments=ARGUMENTS)


def valid_minted() -> list[dict[str, Any]]:
    """Valid: tokens as a minter writes them, for each algorithm, kind of target and kind of state."""
    sealed = reference_seal(HS256, b"valid-hs256-reference-sealer")
    unicode_state = {
        "name": "Zoë 😀",
        "escapes": 'tab\tquote"back\\slash',
        "n": -0.5,
        "big": 9007199254740991,
        "small": -9007199254740991,
        "e": 1e-7,
        "nested": {"list": [None, True, False, {}, []]},
    }
    deep: Any = "bottom"
    for _ in range(32):
        deep = [deep]
    return [
        *claim_table(
            None,
            [
                ("valid-hs256-basic", "A token minted by the reference sealer (HS256).", "HS256", {}, {}),
                ("valid-eddsa-basic", "A token minted by the reference sealer (EdDSA).", "EdDSA", {}, {}),
            ],
        ),
        vector(
            "valid-hs256-reference-sealer",
            "The exact output of StateSealer.seal for the default request.",
            sealed,
            None,
        ),
        *claim_table(
            None,
            [
                (
                    "valid-hs256-no-argument-binding",
                    "No args_sha256 claim: the token opens whatever the arguments.",
                    "HS256",
                    {"args_sha256": None},
                    {"arguments": {"anything": [1, 2]}},
                ),
                (
                    "valid-hs256-retry-without-arguments",
                    "No args_sha256 and a retry without arguments.",
                    "HS256",
                    {"args_sha256": None},
                    {"arguments": None},
                ),
                (
                    "valid-eddsa-prompt",
                    "A prompt target: aud is prompts/get:<name>.",
                    "EdDSA",
                    {"aud": "prompts/get:summarize", "args_sha256": arguments_digest({"topic": "q3"})},
                    {"prompt": "summarize", "arguments": {"topic": "q3"}},
                ),
                (
                    "valid-hs256-resource",
                    "A resource target: aud is resources/read:<uri>, no arguments.",
                    "HS256",
                    {"aud": "resources/read:file:///reports/q3.csv", "args_sha256": None},
                    {"resource": "file:///reports/q3.csv", "arguments": None},
                ),
                (
                    "valid-eddsa-unicode-state",
                    "Unicode, escapes, safe-range integers, floats and nesting in the state.",
                    "EdDSA",
                    {"state": unicode_state},
                    {"expected_state": unicode_state},
                ),
                (
                    "valid-hs256-scalar-state",
                    "The state may be any JSON value, here a string.",
                    "HS256",
                    {"state": "step-2"},
                    {"expected_state": "step-2"},
                ),
                (
                    "valid-eddsa-state-depth-32",
                    "The state nests exactly 32 levels: the limit.",
                    "EdDSA",
                    {"state": deep},
                    {"expected_state": deep},
                ),
            ],
        ),
    ]


def valid_times() -> list[dict[str, Any]]:
    """Valid: iat and exp at the limits of steps 12 to 15 (integers, lifetime, leeway)."""
    iat_zero = compact(claims_for("valid-hs256-iat-negative-zero", iat=0, exp=NOW + 300)).replace(
        b'"iat":0,', b'"iat":-0,'
    )
    top = 9007199254740991
    return [
        *claim_table(
            None,
            [
                ("valid-hs256-one-second-before-exp", "now = exp - 1.", "HS256", {}, {"now": IAT + TTL - 1}),
                (
                    "valid-hs256-exp-within-leeway",
                    "now = exp + 5 with a leeway of 10.",
                    "HS256",
                    {},
                    {"now": IAT + TTL + 5, "leeway": 10},
                ),
                (
                    "valid-eddsa-iat-within-leeway",
                    "iat = now + 5 with a leeway of 10.",
                    "EdDSA",
                    {"iat": NOW + 5, "exp": NOW + 5 + TTL},
                    {"leeway": 10},
                ),
                (
                    "valid-hs256-lifetime-at-maximum",
                    "exp - iat equals the maximum lifetime.",
                    "HS256",
                    {"exp": IAT + 600},
                    {},
                ),
                (
                    "valid-hs256-longer-lifetime-allowed",
                    "A verifier configured for longer lifetimes accepts 3600 s.",
                    "HS256",
                    {"exp": IAT + 3600},
                    {"max_lifetime": 3600},
                ),
            ],
        ),
        vector(
            "valid-hs256-iat-negative-zero",
            "iat written as -0: an integer literal with the value 0 (the verifier allows the long lifetime).",
            raw_token(iat_zero),
            None,
            max_lifetime=NOW + 300,
        ),
        *claim_table(
            None,
            [
                (
                    "valid-eddsa-safe-integer-times",
                    "iat and exp at the top of the safe integer range.",
                    "EdDSA",
                    {"iat": top - 600, "exp": top},
                    {"now": top - 300},
                ),
            ],
        ),
    ]


def valid_spellings() -> list[dict[str, Any]]:
    """Valid: what other minters may write (member order, white space, escapes, number forms), the size cap
    of step 1 and the jti lengths of step 12."""
    reordered = compact({"kid": HS256.kid, "typ": TYP, "alg": "HS256"})
    spaced = json.dumps(claims_for("valid-eddsa-json-whitespace"), indent=2).encode()
    escaped = compact(claims_for("valid-hs256-escaped-user", sub="x")).replace(
        b'"sub":"x"', b'"sub":"\\u00e9ric"'
    )
    number_args_sealed = {"n": 1, "x": 1e15, "list": [0.5, -0]}
    at_cap, at_cap_state = sized_token("valid-hs256-at-size-cap", MAX_TOKEN_BYTES)
    escaped_typ = b'{"alg":"HS256","typ":"mrtr-state\\u002bjwt","kid":"' + HS256.kid.encode() + b'"}'
    return [
        vector(
            "valid-hs256-header-member-order",
            "Header members in another order, as other minters write them.",
            assemble(HS256, reordered, claims_for("valid-hs256-header-member-order")),
            None,
        ),
        vector(
            "valid-eddsa-json-whitespace",
            "Header and claims JSON with insignificant white space.",
            assemble(EDDSA, json.dumps(header_for(EDDSA), indent=1).encode(), spaced),
            None,
        ),
        vector(
            "valid-hs256-escaped-user",
            "sub written with a \\u escape equals the decoded user.",
            raw_token(escaped),
            None,
            user="éric",
        ),
        *claim_table(
            None,
            [
                (
                    "valid-hs256-argument-number-forms",
                    "Arguments equal as JSON numbers digest the same (RFC 8785).",
                    "HS256",
                    {"args_sha256": arguments_digest(number_args_sealed)},
                    {"arguments": {"list": [0.5, 0.0], "x": 1000000000000000, "n": 1.0}},
                ),
            ],
        ),
        vector(
            "valid-hs256-at-size-cap",
            "A token exactly max_token_bytes long.",
            at_cap,
            None,
            expected_state=at_cap_state,
        ),
        vector(
            "valid-hs256-typ-escaped",
            'typ written as "mrtr-state\\u002bjwt": the decoded string is compared (step 7), '
            "not the raw bytes.",
            assemble(HS256, escaped_typ, claims_for("valid-hs256-typ-escaped")),
            None,
        ),
        vector(
            "valid-hs256-header-whitespace-outside-object",
            "White space before and after the braces of the decoded header: insignificant JSON white space.",
            assemble(
                HS256,
                b" \n\t\r" + compact(header_for(HS256)) + b"\r\n ",
                claims_for("valid-hs256-header-whitespace-outside-object"),
            ),
            None,
        ),
        *claim_table(
            None,
            [
                (
                    f"valid-hs256-jti-{length}-characters",
                    f"A jti of {length} base64url characters: the {limit}",
                    "HS256",
                    {"jti": (jti_for(f"valid-hs256-jti-{length}-characters") * 3)[:length]},
                    {},
                )
                for length, limit in [
                    (22, "shortest (128 bits, what a minter writes)."),
                    (64, "longest a verifier accepts."),
                ]
            ],
        ),
    ]


def underflow() -> list[dict[str, Any]]:
    """A number that underflows a double (1e-400) is read as 0: in the header (step 4 passes, step 5 refuses
    the member), in the state (step 11) and in the retry's arguments (section 3.4)."""
    underflow_header = compact(header_for(HS256))[:-1] + b',"x":1e-400}'
    underflow_claims = compact(claims_for("valid-hs256-state-underflow", state={"tiny": 0})).replace(
        b'"tiny":0', b'"tiny":1e-400'
    )
    return [
        vector(
            "unsupported-header-member-underflows",
            "A header member 1e-400: read as 0, so the header is JSON (step 4) and only the allowlist "
            "(step 5) refuses it.",
            assemble(HS256, underflow_header, claims_for("unsupported-header-member-underflows")),
            "unsupported_header",
        ),
        vector(
            "valid-hs256-state-underflow",
            "1e-400 in the state underflows a double: it is read as 0 (step 11), "
            "as every JSON parser reads it.",
            raw_token(underflow_claims),
            None,
            expected_state={"tiny": 0.0},
        ),
        *claim_table(
            None,
            [
                (
                    "valid-hs256-argument-underflow",
                    'Sealed with {"n": 0}, retried with {"n": 1e-400}: an underflow is read as 0 '
                    "(section 3.4).",
                    "HS256",
                    {"args_sha256": arguments_digest({"n": 0})},
                    {"arguments": {"n": Literal("1e-400")}},
                ),
            ],
        ),
    ]


def valid_binding() -> list[dict[str, Any]]:
    """Valid: the argument binding of step 19, absent where it is not required, present where it is."""
    return claim_table(
        None,
        [
            (
                "valid-hs256-no-binding-unbindable-arguments",
                "No args_sha256 and a verifier that does not require it: unbindable arguments do not matter.",
                "HS256",
                {"args_sha256": None},
                {"arguments": {"id": 9007199254740993}},
            ),
            (
                "valid-eddsa-binding-required",
                "A verifier that requires the argument binding, and a token that has it.",
                "EdDSA",
                {},
                {"require_arguments": True},
            ),
            (
                "valid-hs256-no-binding-arguments-null",
                'No args_sha256 and a verifier that does not require it: "arguments": null (not an object, '
                "so unbindable, section 3.4) does not matter.",
                "HS256",
                {"args_sha256": None},
                {"arguments": JSON_NULL},
            ),
            (
                "valid-hs256-resource-binding-required",
                "A resource read has no arguments: requiring the binding does not apply to it.",
                "HS256",
                {"aud": "resources/read:file:///reports/q3.csv", "args_sha256": None},
                {"resource": "file:///reports/q3.csv", "arguments": None, "require_arguments": True},
            ),
        ],
    )


def step_01_size() -> list[dict[str, Any]]:
    """Step 1, size: longer than the size cap in UTF-8 bytes is `too_large`."""
    return [
        vector(
            "too-large-over-cap",
            "One character over the size cap.",
            sized_token("too-large-over-cap", MAX_TOKEN_BYTES + 1)[0],
            "too_large",
        ),
        vector(
            "too-large-counted-in-bytes",
            "8190 ASCII characters and two 'é': 8192 characters but 8194 UTF-8 bytes.",
            "A" * (MAX_TOKEN_BYTES - 2) + "éé",
            "too_large",
        ),
        *claim_table(
            "too_large",
            [
                (
                    "too-large-smaller-cap",
                    "A valid token over a verifier's smaller cap of 512.",
                    "HS256",
                    {"state": {"filler": "x" * 400}},
                    {"max_token_bytes": 512},
                ),
            ],
        ),
    ]


def step_02_03_segments() -> list[dict[str, Any]]:
    """Steps 2 and 3, segments and canonical base64url: three non-empty canonical segments, else
    `malformed`."""
    good = token("malformed-base")
    h, p, s = good.split(".")
    # A segment whose length is a multiple of 4 has no unused bits: lengthen the state until it has some.
    padded_claims = claims_for("malformed-noncanonical-payload")
    while len(b64(compact(padded_claims))) % 4 == 0:
        padded_claims["state"] = {
            **padded_claims["state"],
            "pad": padded_claims["state"].get("pad", "") + "x",
        }
    noncanonical_payload = noncanonical_last(b64(compact(padded_claims)))
    rows = [
        ("malformed-two-segments", "Only two segments.", f"{h}.{p}"),
        ("malformed-four-segments", "Four segments.", f"{good}.{s}"),
        ("malformed-empty-signature", "An empty signature segment (the shape of alg none).", f"{h}.{p}."),
        ("malformed-padding", "The signature segment padded with '='.", f"{good}="),
        ("malformed-standard-base64", "'+' and '/' from the standard alphabet.", f"{h}.{p}.{s[:-2]}+/"),
        ("malformed-whitespace", "A line break inside the payload segment.", f"{h}.{p[:20]}\n{p[20:]}.{s}"),
        (
            "malformed-noncanonical-signature",
            "Non-zero unused bits in the signature's last character: "
            "a lax decoder reads the same bytes and the signature would verify.",
            f"{h}.{p}.{noncanonical_last(s)}",
        ),
        (
            "malformed-noncanonical-payload",
            "A payload segment with non-zero unused bits, correctly signed as text by a faulty minter.",
            assemble(HS256, header_for(HS256), noncanonical_payload),
        ),
        (
            "malformed-segment-length",
            "A payload segment whose length modulo 4 is 1.",
            f"{h}.{p + 'A' * ((1 - len(p)) % 4)}.{s}",
        ),
        ("malformed-non-ascii", "A non-ASCII character in the token.", good[:-1] + "é"),
    ]
    return token_table("malformed", rows)


def step_04_header_json() -> list[dict[str, Any]]:
    """Step 4, header JSON: a header that is not one strict JSON object is `malformed`."""
    kid = HS256.kid.encode()
    return header_table(
        "malformed",
        [
            ("malformed-header-not-json", "The header is not JSON.", HS256, b"{alg:HS256}"),
            ("malformed-header-array", "The header is a JSON array.", HS256, b'["HS256"]'),
            (
                "malformed-header-duplicate-member",
                "The header repeats alg.",
                HS256,
                b'{"alg":"HS256","typ":"mrtr-state+jwt","kid":"%s","alg":"HS256"}' % kid,
            ),
            (
                "malformed-header-bom",
                "The header starts with a UTF-8 byte order mark.",
                HS256,
                b"\xef\xbb\xbf" + compact(header_for(HS256)),
            ),
            (
                "malformed-header-invalid-utf8",
                "The header is not valid UTF-8.",
                HS256,
                b'{"alg":"HS256","typ":"mrtr-state+jwt","kid":"\xff"}',
            ),
            (
                "malformed-header-too-deep",
                "A header value nested 41 levels (the limit is 33).",
                HS256,
                b'{"alg":"HS256","typ":"mrtr-state+jwt","kid":"'
                + kid
                + b'","x":'
                + b"[" * 40
                + b"]" * 40
                + b"}",
            ),
        ],
        claims=claims_for("malformed-header"),
    )


def step_05_header_allowlist() -> list[dict[str, Any]]:
    """Step 5, header allowlist: a header member other than alg, typ and kid is `unsupported_header`."""
    members = [
        ("crit", ["exp"]),
        ("b64", False),
        ("jku", "https://attacker.example/jwks.json"),
        ("jwk", EDDSA.public_jwk()),
        ("x5u", "https://attacker.example/cert.pem"),
        ("x5c", ["MIIB"]),
        ("zip", "DEF"),
        ("cty", "JWT"),
        ("nonce", "x"),
    ]
    return header_table(
        "unsupported_header",
        [
            (
                f"unsupported-header-{name}",
                f"The header carries {name}.",
                HS256,
                header_for(HS256, **{name: value}),
            )
            for name, value in members
        ],
    )


def step_06_algorithm() -> list[dict[str, Any]]:
    """Step 6, algorithm: an alg other than HS256 and EdDSA, or none, is `unsupported_header`."""
    return header_table(
        "unsupported_header",
        [
            (
                "unsupported-header-alg-none",
                "alg none (with a signature segment present).",
                HS256,
                header_for(HS256, alg="none"),
            ),
            (
                "unsupported-header-alg-ed25519",
                "The fully specified Ed25519 identifier (RFC 9864) is not used in version 1.",
                EDDSA,
                header_for(EDDSA, alg="Ed25519"),
            ),
            (
                "unsupported-header-alg-hs512",
                "HS512.",
                lambda m: hmac.digest(seed("HS256 key"), m, "sha512"),
                header_for(HS256, alg="HS512"),
            ),
            ("unsupported-header-alg-missing", "No alg.", HS256, header_for(HS256, alg=None)),
        ],
    )


def step_07_type() -> list[dict[str, Any]]:
    """Step 7, type: a typ other than mrtr-state+jwt, exactly, is `wrong_type`."""
    types = [
        ("jwt", "JWT"),
        ("application-prefix", "application/mrtr-state+jwt"),
        ("uppercase", "MRTR-STATE+JWT"),
        ("missing", None),
    ]
    return header_table(
        "wrong_type",
        [
            (f"wrong-type-{label}", f"typ is {typ!r}.", HS256, header_for(HS256, typ=typ))
            for label, typ in types
        ],
    )


def step_08_key() -> list[dict[str, Any]]:
    """Step 8, key: a kid that names no key of the ring, or is missing or not a string, is `unknown_key`."""
    return header_table(
        "unknown_key",
        [
            (
                "unknown-key-eddsa",
                "Signed by an Ed25519 key that is not in the ring.",
                UNKNOWN_KEY,
                header_for(UNKNOWN_KEY),
            ),
            ("unknown-key-missing-kid", "No kid.", HS256, header_for(HS256, kid=None)),
            ("unknown-key-numeric-kid", "kid is a number.", HS256, header_for(HS256, kid=1)),
        ],
    )


def step_09_algorithm_pinned() -> list[dict[str, Any]]:
    """Step 9, algorithm pinned to the key: an alg other than the named key's is `algorithm_mismatch`."""
    return header_table(
        "algorithm_mismatch",
        [
            (
                "algorithm-mismatch-hs256-with-ed25519-public-key",
                "HS256 naming the Ed25519 key, MACed with its public key bytes as the secret "
                "(the classic confusion).",
                lambda m: hmac.digest(EDDSA_PUBLIC_BYTES, m, "sha256"),
                header_for(EDDSA, alg="HS256"),
            ),
            (
                "algorithm-mismatch-eddsa-with-hs256-kid",
                "EdDSA naming the HS256 key.",
                EDDSA,
                header_for(HS256, alg="EdDSA"),
            ),
        ],
    )


def step_10_signature() -> list[dict[str, Any]]:
    """Step 10, signature: a signature of the wrong length, or that does not verify, is `bad_signature`."""
    out: list[dict[str, Any]] = []
    for alg in ("HS256", "EdDSA"):
        a = alg.lower()
        h, p, s = token(f"bad-signature-{a}-signature-changed", alg).split(".")
        out.append(
            vector(
                f"bad-signature-{a}-signature-changed",
                "One character of the signature changed.",
                f"{h}.{p}.{flip_char(s, 5)}",
                "bad_signature",
            )
        )
        h, p, s = token(f"bad-signature-{a}-payload-changed", alg).split(".")
        out.append(
            vector(
                f"bad-signature-{a}-payload-changed",
                "One character of the payload changed (the rule's check).",
                f"{h}.{flip_char(p, len(p) // 2)}.{s}",
                "bad_signature",
            )
        )
    h, p, s = token("bad-signature-hs256-header-changed").split(".")
    reencoded = b64(
        json.dumps(json.loads(base64.urlsafe_b64decode(h + "==")), separators=(", ", ": ")).encode()
    )
    out.append(
        vector(
            "bad-signature-hs256-header-changed",
            "The same header re-encoded with spaces: a different signing input.",
            f"{reencoded}.{p}.{s}",
            "bad_signature",
        )
    )
    h, p, s = token("bad-signature-hs256-short").split(".")
    out.append(
        vector(
            "bad-signature-hs256-short",
            "A 31-byte HS256 signature.",
            f"{h}.{p}.{b64(base64.urlsafe_b64decode(s + '=')[:31])}",
            "bad_signature",
        )
    )
    h, p, _ = token("bad-signature-eddsa-zero", "EdDSA").split(".")
    out.append(
        vector(
            "bad-signature-eddsa-zero",
            "An all-zero Ed25519 signature.",
            f"{h}.{p}.{b64(bytes(64))}",
            "bad_signature",
        )
    )
    h, p, _ = token("bad-signature-eddsa-signed-by-unknown-key", "EdDSA").split(".")
    out.append(
        vector(
            "bad-signature-eddsa-signed-by-unknown-key",
            "Names the ring's Ed25519 key, signed by another key.",
            f"{h}.{p}.{b64(UNKNOWN_KEY.sign(f'{h}.{p}'.encode()))}",
            "bad_signature",
        )
    )
    return out


def step_11_claims_json() -> list[dict[str, Any]]:
    """Step 11, claims JSON: claims that are not strict JSON (I-JSON), at any depth, are `malformed`."""
    base = compact(claims_for("malformed-claims"))
    deep_state: Any = 1
    for _ in range(33):
        deep_state = [deep_state]
    rows = [
        ("malformed-claims-not-json", "The payload is not JSON.", "HS256", base[:-1]),
        ("malformed-claims-array", "The payload is a JSON array.", "HS256", b"[" + base + b"]"),
        (
            "malformed-claims-duplicate-sub",
            "sub twice: a last-wins parser would see alice.",
            "HS256",
            base.replace(b'"sub":"alice"', b'"sub":"mallory","sub":"alice"'),
        ),
        (
            "malformed-claims-duplicate-in-state",
            "A duplicate member inside the state.",
            "EdDSA",
            base.replace(b'"step":"confirm"', b'"step":"confirm","step":"done"'),
        ),
        (
            "malformed-claims-nan",
            "A NaN literal in the state.",
            "HS256",
            base.replace(b'"attempt":1', b'"attempt":NaN'),
        ),
        (
            "malformed-claims-number-overflow",
            "1e400 in the state: beyond a double.",
            "HS256",
            base.replace(b'"attempt":1', b'"attempt":1e400'),
        ),
        (
            "malformed-claims-state-depth-33",
            "The state nests 33 levels (the limit is 32).",
            "EdDSA",
            compact(claims_for("malformed-claims-state-depth-33", state=deep_state)),
        ),
        (
            "malformed-claims-invalid-utf8",
            "The payload is not valid UTF-8.",
            "HS256",
            base.replace(b'"confirm"', b'"conf\xc3\x28rm"'),
        ),
        (
            "malformed-claims-lone-surrogate",
            "An escaped lone surrogate in a state string: not valid Unicode (I-JSON).",
            "EdDSA",
            base.replace(b'"confirm"', b'"conf\\udc00rm"'),
        ),
        (
            "malformed-claims-unsafe-integer-in-state",
            "An integer literal beyond 2**53 - 1 in the state: languages would read different values.",
            "HS256",
            base.replace(b'"attempt":1', b'"attempt":12345678901234567890'),
        ),
    ]
    return [
        *[
            vector(vector_id, description, raw_token(payload, alg), "malformed")
            for vector_id, description, alg, payload in rows
        ],
        vector(
            "valid-eddsa-surrogate-pair-escape",
            "A correctly paired surrogate escape is valid Unicode.",
            raw_token(base.replace(b'"confirm"', b'"\\ud83d\\ude00"'), "EdDSA"),
            None,
            expected_state={**STATE, "step": "\U0001f600"},
        ),
    ]


def step_12_claims() -> list[dict[str, Any]]:
    """Step 12, claims: a missing or extra claim, or a claim of the wrong type or form, is `malformed`."""
    absent_or_extra: list[ClaimRow] = [
        (f"malformed-missing-{claim}", f"No {claim} claim.", "HS256", {claim: None}, {})
        for claim in ("iss", "sub", "aud", "iat", "exp", "jti", "state")
    ]
    absent_or_extra.append(
        ("malformed-extra-claim-nbf", "An nbf claim: the claim set is closed.", "HS256", {"nbf": IAT}, {})
    )
    # exp written out by hand, as label, alg, literal.
    exp_text = str(IAT + TTL).encode()
    exp_literals = [
        ("string", "HS256", b'"' + exp_text + b'"'),
        ("fraction", "EdDSA", exp_text + b".5"),
        ("zero-fraction", "HS256", exp_text + b".0"),
        ("exponent", "HS256", b"1.76722614e9"),
        ("boolean", "HS256", b"true"),
        ("beyond-safe-range", "EdDSA", b"9007199254740992"),
    ]
    written_exp = [
        vector(
            f"malformed-exp-{label}",
            f"exp written as {literal.decode()}.",
            raw_token(
                compact(claims_for(f"malformed-exp-{label}")).replace(
                    b'"exp":' + exp_text, b'"exp":' + literal
                ),
                alg,
            ),
            "malformed",
        )
        for label, alg, literal in exp_literals
    ]
    wrong_form: list[ClaimRow] = [
        ("malformed-iat-negative", "iat is negative.", "HS256", {"iat": -1}, {}),
        ("malformed-exp-not-after-iat", "exp equals iat.", "HS256", {"exp": IAT}, {}),
        (
            "malformed-aud-array",
            "aud as an array holding the right target.",
            "EdDSA",
            {"aud": [f"tools/call:{TOOL}"]},
            {},
        ),
        ("malformed-sub-empty", "sub is the empty string.", "HS256", {"sub": ""}, {}),
        ("malformed-sub-number", "sub is a number.", "HS256", {"sub": 7}, {}),
        ("malformed-jti-short", "jti of 8 characters.", "HS256", {"jti": "abcdefgh"}, {}),
        (
            "malformed-jti-characters",
            "jti with characters outside base64url.",
            "HS256",
            {"jti": "not/base64url+jti=="},
            {},
        ),
    ]
    for length in (21, 65):
        jti_id = f"malformed-jti-{length}-characters"
        wrong_form.append(
            (
                jti_id,
                f"A jti of {length} base64url characters: a verifier accepts 22 to 64.",
                "HS256",
                {"jti": (jti_for(jti_id) * 3)[:length]},
                {},
            )
        )
    wrong_form.append(
        (
            "malformed-args-digest-length",
            "args_sha256 of 42 characters.",
            "HS256",
            {"args_sha256": arguments_digest(ARGUMENTS)[:42]},
            {},
        )
    )
    args_null = compact(claims_for("malformed-args-digest-null")).replace(
        b'"args_sha256":"' + arguments_digest(ARGUMENTS).encode() + b'"', b'"args_sha256":null'
    )
    return [
        *claim_table("malformed", absent_or_extra),
        *written_exp,
        *claim_table("malformed", wrong_form),
        vector(
            "malformed-args-digest-null",
            "args_sha256 is null: a malformed binding, not an absent one.",
            raw_token(args_null, "EdDSA"),
            "malformed",
        ),
    ]


def step_13_lifetime() -> list[dict[str, Any]]:
    """Step 13, lifetime: exp - iat beyond the verifier's maximum is `lifetime_too_long`."""
    return claim_table(
        "lifetime_too_long",
        [
            (
                "lifetime-too-long-hs256",
                "exp - iat = 601 s; the maximum is 600.",
                "HS256",
                {"exp": IAT + 601},
                {},
            ),
            ("lifetime-too-long-eddsa", "exp - iat = 3600 s.", "EdDSA", {"exp": IAT + 3600}, {}),
        ],
    )


def step_14_not_from_the_future() -> list[dict[str, Any]]:
    """Step 14, not from the future: iat beyond now + leeway is `issued_in_future`."""
    return claim_table(
        "issued_in_future",
        [
            ("issued-in-future", "iat = now + 1.", "HS256", {"iat": NOW + 1, "exp": NOW + 1 + TTL}, {}),
            (
                "issued-in-future-beyond-leeway",
                "iat = now + 11 with a leeway of 10.",
                "EdDSA",
                {"iat": NOW + 11, "exp": NOW + 11 + TTL},
                {"leeway": 10},
            ),
        ],
    )


def step_15_not_expired() -> list[dict[str, Any]]:
    """Step 15, not expired: now at or after exp + leeway is `expired`."""
    return claim_table(
        "expired",
        [
            ("expired-at-exp", "now = exp exactly: refused.", "HS256", {}, {"now": IAT + TTL}),
            (
                "expired-ten-minutes-later",
                "Presented 10 minutes after it was minted (the rule's check).",
                "EdDSA",
                {},
                {"now": IAT + 600},
            ),
            (
                "expired-beyond-leeway",
                "now = exp + 10 with a leeway of 10.",
                "HS256",
                {},
                {"now": IAT + TTL + 10, "leeway": 10},
            ),
        ],
    )


def step_16_issuer() -> list[dict[str, Any]]:
    """Step 16, issuer: an iss other than the verifier's own, exactly, is `wrong_issuer`."""
    return claim_table(
        "wrong_issuer",
        [
            ("wrong-issuer", "Minted by another service.", "HS256", {"iss": "https://other.example.com"}, {}),
            (
                "wrong-issuer-trailing-slash",
                "The issuer with a trailing slash: compared exactly.",
                "EdDSA",
                {"iss": ISSUER + "/"},
                {},
            ),
        ],
    )


def step_17_user() -> list[dict[str, Any]]:
    """Step 17, user: a sub other than the user of the request, exactly, is `wrong_user`."""
    return claim_table(
        "wrong_user",
        [
            ("wrong-user", "Presented by another user (the rule's check).", "HS256", {}, {"user": "mallory"}),
            ("wrong-user-eddsa", "Presented by another user, EdDSA.", "EdDSA", {}, {"user": "bob"}),
            (
                "wrong-user-case",
                "User ids are compared exactly, without case folding.",
                "HS256",
                {},
                {"user": "Alice"},
            ),
            (
                "wrong-user-normalisation",
                "NFC and NFD spellings of one name are different users: no normalisation.",
                "HS256",
                {"sub": "e\u0301ric"},
                {"user": "\u00e9ric"},
            ),
        ],
    )


def step_18_target() -> list[dict[str, Any]]:
    """Step 18, target: an aud other than the request's target is `wrong_tool`."""
    return claim_table(
        "wrong_tool",
        [
            ("wrong-tool", "Presented to another tool.", "HS256", {}, {"tool": "delete_repo"}),
            (
                "wrong-tool-prompt-of-same-name",
                "A tool's state presented to a prompt of the same name.",
                "EdDSA",
                {},
                {"prompt": TOOL},
            ),
            (
                "wrong-tool-resource",
                "A resource's state presented to another resource.",
                "HS256",
                {"aud": "resources/read:file:///a.txt", "args_sha256": None},
                {"resource": "file:///b.txt", "arguments": None},
            ),
        ],
    )


def step_19_request_binding() -> list[dict[str, Any]]:
    """Step 19, request binding: a digest other than that of the retry's arguments, unbindable arguments,
    or a missing binding the verifier requires, is `wrong_request`."""
    # What a verifier that digested 2**60 + 1 as the double 2**60 would have sealed (the old collision).
    as_double = (
        base64.urlsafe_b64encode(hashlib.sha256(canonicalize({"id": float(2**60)})).digest())
        .decode()
        .rstrip("=")
    )
    return claim_table(
        "wrong_request",
        [
            (
                "wrong-request",
                "Retried with other arguments.",
                "HS256",
                {},
                {"arguments": {"branch": "main", "force": True}},
            ),
            (
                "wrong-request-eddsa",
                "Retried with one more argument.",
                "EdDSA",
                {},
                {"arguments": {**ARGUMENTS, "extra": 1}},
            ),
            (
                "wrong-request-no-arguments",
                "Bound to arguments, retried without any (treated as {}).",
                "HS256",
                {},
                {"arguments": None},
            ),
            (
                "wrong-request-arguments-null",
                'Bound to the digest of {}, retried with "arguments": null: present but not an object, so '
                "unbindable (sections 3.4 and 8.2); only absent arguments are {}.",
                "HS256",
                {"args_sha256": arguments_digest({})},
                {"arguments": JSON_NULL},
            ),
            (
                "wrong-request-arguments-array",
                "Retried with arguments that are an array, not an object: unbindable (section 3.4).",
                "HS256",
                {},
                {"arguments": ["release-1.2", False]},
            ),
            (
                "wrong-request-arguments-string",
                "Retried with arguments that are a string, not an object: unbindable (section 3.4).",
                "EdDSA",
                {},
                {"arguments": "branch=release-1.2"},
            ),
            (
                "wrong-request-number-value",
                "1 and 1.5 are different numbers.",
                "HS256",
                {"args_sha256": arguments_digest({"n": 1})},
                {"arguments": {"n": 1.5}},
            ),
            (
                "wrong-request-integer-beyond-2-53",
                'Bound to the JCS digest of {"id": 2**60} (a double), retried with 2**60 + 1: '
                "the arguments are unbindable, so no digest matches (section 3.4).",
                "HS256",
                {"args_sha256": as_double},
                {"arguments": {"id": 2**60 + 1}},
            ),
            (
                "wrong-request-integer-beyond-2-53-same-value",
                "The same, retried with 2**60 itself: unbindable arguments match no digest, "
                "even their own double's.",
                "HS256",
                {"args_sha256": as_double},
                {"arguments": {"id": 2**60}},
            ),
            (
                "wrong-request-binding-required",
                "No args_sha256, and a verifier that requires the argument binding (step 19).",
                "HS256",
                {"args_sha256": None},
                {"require_arguments": True},
            ),
            (
                "wrong-request-binding-required-prompt",
                "A prompt's token without args_sha256, and a verifier that requires the binding.",
                "EdDSA",
                {"aud": "prompts/get:summarize", "args_sha256": None},
                {"prompt": "summarize", "arguments": {"topic": "q3"}, "require_arguments": True},
            ),
        ],
    )


def order_of_steps() -> list[dict[str, Any]]:
    """Order (section 5): tokens with two or more faults; each expects the reason of the earliest failing
    step."""
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


#: The groups of tokens.json, in the order of the file.
TOKEN_GROUPS: list[Callable[[], list[dict[str, Any]]]] = [
    valid_minted,
    valid_times,
    valid_spellings,
    underflow,
    valid_binding,
    step_01_size,
    step_02_03_segments,
    step_04_header_json,
    step_05_header_allowlist,
    step_06_algorithm,
    step_07_type,
    step_08_key,
    step_09_algorithm_pinned,
    step_10_signature,
    step_11_claims_json,
    step_12_claims,
    step_13_lifetime,
    step_14_not_from_the_future,
    step_15_not_expired,
    step_16_issuer,
    step_17_user,
    step_18_target,
    step_19_request_binding,
    order_of_steps,
]


def joined(groups: list[Callable[[], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The vectors of `groups`, one group after the other; every id once."""
    v = [entry for group in groups for entry in group()]
    ids = [x["id"] for x in v]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate vector ids")
    return v


def token_vectors() -> list[dict[str, Any]]:
    return joined(TOKEN_GROUPS)


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
        # Arguments nest at most 256 levels (section 3.4): the object is level 1, then 255 arrays.
        ("nested-256", {"n": nested_literal(255)}),
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
        # Decided by the double nearest the literal (section 3.4): 2**53 - 0.5 rounds (half to even) to 2**53.
        ("fraction-rounds-to-2-53", {"id": Literal("9007199254740991.5")}),
        # Present but not an object (sections 3.4 and 8.2): unbindable, whatever the value.
        ("not-an-object-null", JSON_NULL),
        ("not-an-object-array", [{"env": "prod"}]),
        ("not-an-object-empty-array", []),
        ("not-an-object-string", "env=prod"),
        ("not-an-object-number", 1),
        ("not-an-object-boolean", True),
        # Nested one level deeper than arguments may nest (section 3.4): 257 levels.
        ("nested-257", {"n": nested_literal(256)}),
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
        except (TypeError, ValueError):
            pass
        else:
            raise SystemExit(f"argument vector {case_id} should be unbindable")
        out.append({"id": case_id, "arguments": arguments, "unbindable": True})
    # A member name repeated inside the arguments (section 3.4): no JSON value writes it, so the vector
    # carries the text; the last member of a name wins, as I-JSON parsers commonly read it.
    for case_id, text in DUPLICATE_MEMBER_ARGUMENTS:
        value = json.loads(text)  # Python's json keeps the last member of a name
        out.append(
            {
                "id": case_id,
                "arguments_text": text,
                "arguments": value,
                "canonical": canonicalize(value).decode("utf-8"),
                "digest": arguments_digest(value),
            }
        )
    return out


#: Arguments whose text repeats a member name (section 3.4, the last member wins): (id, text).
DUPLICATE_MEMBER_ARGUMENTS: list[tuple[str, str]] = [
    (
        "duplicate-member-last-wins",
        '{"env": "staging", "env": "prod", "options": {"force": true, "force": false}}',
    ),
]


def nested_literal(depth: int) -> Literal:
    """`depth` arrays nested around 0, as one literal, so the vector file stays one line deep."""
    return Literal("[" * depth + "0" + "]" * depth)


# --- the encrypted form (profile, sections 3.6 and 5.1) --------------------------------------------
# Kept in one section, apart from the signed vectors: encrypted.json, and the encryption key added
# to keys.json as new members, so readers of the existing files are unaffected.

A256GCM = Key.from_jwk({"kty": "oct", "alg": "A256GCM", "use": "enc", "k": b64(seed("A256GCM key"))})
UNKNOWN_A256GCM = Key.from_jwk({"kty": "oct", "alg": "A256GCM", "k": b64(seed("unknown A256GCM key"))})
#: The ring the encrypted vectors are verified against: the encryption key and the signing keys
#: of verifier_jwks, so that a token naming a key of the other form is refused as the profile says.
ENCRYPTED_VERIFIER = Keyring([A256GCM, HS256, EDDSA_PUBLIC])


def iv_for(vector_id: str) -> bytes:
    """The fixed 96-bit IV of a vector (a minter draws a fresh random one for every token)."""
    return hashlib.sha256(f"mrtr-state test vector IV {vector_id}".encode()).digest()[:12]


def jwe_header_for(kid: Any = None, **changes: Any) -> dict[str, Any]:
    """The protected header a minter writes with the A256GCM key (or naming `kid`); `changes` edits it
    (None deletes)."""
    header: dict[str, Any] = {"alg": "dir", "enc": "A256GCM", "typ": TYP, "kid": A256GCM.kid}
    if kid is not None:
        header["kid"] = kid
    return edited(header, changes)


def encrypt_parts(
    secret: bytes, header: dict[str, Any] | bytes | str, plaintext: dict[str, Any] | bytes, iv: bytes
) -> tuple[str, str, str, str]:
    """Encrypt `plaintext` with AES-GCM under `secret`; the AAD is the header segment's ASCII."""
    h = segment(header)
    pt = plaintext if isinstance(plaintext, bytes) else compact(plaintext)
    sealed = AESGCM(secret).encrypt(iv, pt, h.encode("ascii"))
    return h, b64(iv), b64(sealed[:-16]), b64(sealed[-16:])


def jwe_assemble(
    secret: bytes,
    header: dict[str, Any] | bytes | str,
    plaintext: dict[str, Any] | bytes,
    iv: bytes,
) -> str:
    """A compact JWE with an empty encrypted-key segment (alg dir)."""
    h, i, c, t = encrypt_parts(secret, header, plaintext, iv)
    return f"{h}..{i}.{c}.{t}"


ENCRYPTION_SECRET = seed("A256GCM key")


def enc_token(vector_id: str, **changes: Any) -> str:
    """A token of the encrypted form for the default request; `changes` edit the claims."""
    return jwe_assemble(
        ENCRYPTION_SECRET, jwe_header_for(), claims_for(vector_id, **changes), iv_for(vector_id)
    )


def sized_enc_token(vector_id: str, length: int) -> tuple[str, Any]:
    """A valid encrypted token of exactly `length` characters, and its state."""
    return sized(
        length,
        jwe_header_for(),
        lambda header, state: jwe_assemble(
            ENCRYPTION_SECRET, header, claims_for(vector_id, state=state), iv_for(vector_id)
        ),
        "an encrypted token",
    )


# --- encrypted.json, one group per step of section 5.1 ----------------------------------------------
# As for tokens.json: one function per validation step (or small group of steps), in the order of the
# file; ENCRYPTED_GROUPS lists them. The step numbers are those of section 5.1.


def jwe_header_table(
    reason: str,
    rows: list[tuple[str, str, bytes, dict[str, Any] | bytes]],
    claims: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One vector per row (id, description, AES key, protected header): the default claims, encrypted
    (`claims`, when given, are the claims of every row instead)."""
    return [
        vector(
            vector_id,
            description,
            jwe_assemble(
                secret, header, claims_for(vector_id) if claims is None else claims, iv_for(vector_id)
            ),
            reason,
        )
        for vector_id, description, secret, header in rows
    ]


def encrypted_valid() -> list[dict[str, Any]]:
    """Valid: tokens of the encrypted form as a minter writes them, for each kind of target, and the
    limits of steps 1 and 15."""
    # The sealer draws every IV from the operating system (no hook reaches it), so the
    # vector is its output with the IV replaced by a fixed one: the same header and
    # plaintext, encrypted again.
    minted = reference_seal(A256GCM, b"encrypted-valid-reference-sealer jti")
    header, _, iv, ciphertext, tag = minted.split(".")
    secret = seed("A256GCM key")
    plaintext = AESGCM(secret).decrypt(unb64(iv), unb64(ciphertext) + unb64(tag), header.encode("ascii"))
    sealed = jwe_assemble(secret, header, plaintext, iv_for("encrypted-valid-reference-sealer"))
    unicode_state = {
        "name": "Zoë 😀",
        "escapes": 'tab\tquote"back\\slash',
        "n": -0.5,
        "nested": [None, True, {}],
    }
    reordered = compact({"kid": A256GCM.kid, "typ": TYP, "enc": "A256GCM", "alg": "dir"})
    at_cap, at_cap_state = sized_enc_token("encrypted-valid-at-size-cap", MAX_TOKEN_BYTES)
    return [
        vector(
            "encrypted-valid-basic",
            "A token of the encrypted form for the default request.",
            enc_token("encrypted-valid-basic"),
            None,
        ),
        vector(
            "encrypted-valid-reference-sealer",
            "StateSealer.seal's output with an A256GCM ring (jti from its entropy hook), its IV replaced "
            "by a fixed one (the sealer draws every IV from the operating system).",
            sealed,
            None,
        ),
        vector(
            "encrypted-valid-no-argument-binding",
            "No args_sha256 claim: the token opens whatever the arguments.",
            enc_token("encrypted-valid-no-argument-binding", args_sha256=None),
            None,
            arguments={"anything": [1, 2]},
        ),
        vector(
            "encrypted-valid-prompt",
            "A prompt target: aud is prompts/get:<name>.",
            enc_token(
                "encrypted-valid-prompt",
                aud="prompts/get:summarize",
                args_sha256=arguments_digest({"topic": "q3"}),
            ),
            None,
            prompt="summarize",
            arguments={"topic": "q3"},
        ),
        vector(
            "encrypted-valid-resource",
            "A resource target: aud is resources/read:<uri>, no arguments.",
            enc_token(
                "encrypted-valid-resource", aud="resources/read:file:///reports/q3.csv", args_sha256=None
            ),
            None,
            resource="file:///reports/q3.csv",
            arguments=None,
        ),
        vector(
            "encrypted-valid-unicode-state",
            "Unicode, escapes, floats and nesting in the encrypted state.",
            enc_token("encrypted-valid-unicode-state", state=unicode_state),
            None,
            expected_state=unicode_state,
        ),
        vector(
            "encrypted-valid-header-member-order",
            "Protected header members in another order, as other minters write them "
            "(the AAD is the header segment as received).",
            jwe_assemble(
                ENCRYPTION_SECRET,
                reordered,
                claims_for("encrypted-valid-header-member-order"),
                iv_for("encrypted-valid-header-member-order"),
            ),
            None,
        ),
        vector(
            "encrypted-valid-json-whitespace",
            "Protected header and claims JSON with insignificant white space.",
            jwe_assemble(
                ENCRYPTION_SECRET,
                json.dumps(jwe_header_for(), indent=1).encode(),
                json.dumps(claims_for("encrypted-valid-json-whitespace"), indent=2).encode(),
                iv_for("encrypted-valid-json-whitespace"),
            ),
            None,
        ),
        vector(
            "encrypted-valid-one-second-before-exp",
            "now = exp - 1: the last second of the 600 s lifetime.",
            enc_token("encrypted-valid-one-second-before-exp"),
            None,
            now=IAT + TTL - 1,
        ),
        vector(
            "encrypted-valid-at-size-cap",
            "An encrypted token exactly max_token_bytes long.",
            at_cap,
            None,
            expected_state=at_cap_state,
        ),
    ]


def encrypted_step_01_size() -> list[dict[str, Any]]:
    """Step 1, size: longer than the size cap is `too_large`, as for the signed form."""
    return [
        vector(
            "encrypted-too-large-over-cap",
            "An encrypted token one character over the size cap.",
            sized_enc_token("encrypted-too-large-over-cap", MAX_TOKEN_BYTES + 1)[0],
            "too_large",
        )
    ]


def encrypted_step_02_03_segments() -> list[dict[str, Any]]:
    """Steps 2 and 3, segments and canonical base64url: five canonical segments, the second (and only it)
    empty, else `malformed`."""
    h, i, c, t = encrypt_parts(
        ENCRYPTION_SECRET, jwe_header_for(), claims_for("encrypted-malformed"), iv_for("encrypted-malformed")
    )
    rows = [
        ("encrypted-malformed-four-segments", "Four segments: the tag left out.", f"{h}..{i}.{c}"),
        ("encrypted-malformed-six-segments", "Six segments.", f"{h}..{i}.{c}.{t}.{t}"),
        (
            "encrypted-malformed-encrypted-key-present",
            "A non-empty encrypted-key segment (40 bytes, the shape of A256KW): alg dir has none.",
            f"{h}.{b64(bytes(40))}.{i}.{c}.{t}",
        ),
        ("encrypted-malformed-empty-iv", "An empty IV segment.", f"{h}...{c}.{t}"),
        ("encrypted-malformed-empty-ciphertext", "An empty ciphertext segment.", f"{h}..{i}..{t}"),
        ("encrypted-malformed-empty-tag", "An empty tag segment.", f"{h}..{i}.{c}."),
        ("encrypted-malformed-empty-header", "An empty protected header segment.", f"..{i}.{c}.{t}"),
        ("encrypted-malformed-padding", "The tag segment padded with '='.", f"{h}..{i}.{c}.{t}=="),
        ("encrypted-malformed-standard-base64", "'+' and '/' in the ciphertext.", f"{h}..{i}.+/{c[2:]}.{t}"),
        (
            "encrypted-malformed-noncanonical-tag",
            "Non-zero unused bits in the tag's last character: a lax decoder reads the same bytes "
            "and the tag would verify.",
            f"{h}..{i}.{c}.{noncanonical_last(t)}",
        ),
        (
            "encrypted-malformed-ciphertext-length",
            "A ciphertext segment whose length modulo 4 is 1.",
            f"{h}..{i}.{c + 'A' * ((1 - len(c)) % 4)}.{t}",
        ),
    ]
    return token_table("malformed", rows)


def encrypted_step_04_header_json() -> list[dict[str, Any]]:
    """Step 4, header JSON: a protected header that is not one strict JSON object is `malformed`."""
    kid = A256GCM.kid.encode()
    return jwe_header_table(
        "malformed",
        [
            (
                "encrypted-malformed-header-not-json",
                "The protected header is not JSON.",
                ENCRYPTION_SECRET,
                b"{alg:dir}",
            ),
            (
                "encrypted-malformed-header-array",
                "The protected header is a JSON array.",
                ENCRYPTION_SECRET,
                b'["dir","A256GCM"]',
            ),
            (
                "encrypted-malformed-header-duplicate-member",
                "The protected header repeats enc.",
                ENCRYPTION_SECRET,
                b'{"alg":"dir","enc":"A256GCM","typ":"mrtr-state+jwt","kid":"%s","enc":"A256GCM"}' % kid,
            ),
        ],
        claims=claims_for("encrypted-malformed-header"),
    )


def encrypted_step_05_header_allowlist() -> list[dict[str, Any]]:
    """Step 5, header allowlist: a member other than alg, enc, typ and kid is `unsupported_header`."""
    members = [
        ("zip", "DEF"),
        ("crit", ["exp"]),
        ("cty", "JWT"),
        ("jku", "https://attacker.example/jwks.json"),
        ("iv", b64(bytes(12))),
    ]
    return jwe_header_table(
        "unsupported_header",
        [
            (
                f"encrypted-unsupported-header-{name}",
                f"The protected header carries {name}.",
                ENCRYPTION_SECRET,
                jwe_header_for(**{name: value}),
            )
            for name, value in members
        ],
    )


def encrypted_step_06_algorithms() -> list[dict[str, Any]]:
    """Step 6, algorithms: an alg other than dir, or an enc other than A256GCM, is `unsupported_header`."""
    changed: list[tuple[str, dict[str, Any]]] = [
        ("alg-a256kw", {"alg": "A256KW"}),
        ("alg-hs256", {"alg": "HS256"}),
        ("alg-missing", {"alg": None}),
        ("enc-a128gcm", {"enc": "A128GCM"}),
        ("enc-a256cbc-hs512", {"enc": "A256CBC-HS512"}),
        ("enc-missing", {"enc": None}),
    ]
    return jwe_header_table(
        "unsupported_header",
        [
            (
                f"encrypted-unsupported-header-{label}",
                f"The protected header has {', '.join(f'{k} {v!r}' for k, v in changes.items())} "
                "(the content is AES-256-GCM regardless; it is never decrypted).",
                ENCRYPTION_SECRET,
                jwe_header_for(**changes),
            )
            for label, changes in changed
        ],
    )


def encrypted_step_07_type() -> list[dict[str, Any]]:
    """Step 7, type: a typ other than mrtr-state+jwt, exactly, is `wrong_type`."""
    types = [("jwt", "JWT"), ("application-prefix", "application/mrtr-state+jwt"), ("missing", None)]
    return jwe_header_table(
        "wrong_type",
        [
            (f"encrypted-wrong-type-{label}", f"typ is {typ!r}.", ENCRYPTION_SECRET, jwe_header_for(typ=typ))
            for label, typ in types
        ],
    )


def encrypted_step_08_key() -> list[dict[str, Any]]:
    """Step 8, key: a kid that names no key of the ring, or is missing or not a string, is `unknown_key`."""
    return jwe_header_table(
        "unknown_key",
        [
            (
                "encrypted-unknown-key",
                "Encrypted with an A256GCM key that is in no verifier ring.",
                seed("unknown A256GCM key"),
                jwe_header_for(kid=UNKNOWN_A256GCM.kid),
            ),
            (
                "encrypted-unknown-key-missing-kid",
                "No kid.",
                ENCRYPTION_SECRET,
                {k: val for k, val in jwe_header_for().items() if k != "kid"},
            ),
            (
                "encrypted-unknown-key-numeric-kid",
                "kid is a number.",
                ENCRYPTION_SECRET,
                jwe_header_for(kid=1),
            ),
        ],
    )


def encrypted_step_09_key_form() -> list[dict[str, Any]]:
    """Step 9, the key's form: an encrypted token naming a signing key is `algorithm_mismatch`; so is a
    signed token naming the encryption key (signed form, step 9), and a signed token with an encryption
    algorithm or enc is `unsupported_header` (signed form, steps 5 and 6)."""
    return [
        *jwe_header_table(
            "algorithm_mismatch",
            [
                (
                    "encrypted-algorithm-mismatch-hs256-key",
                    "An encrypted token naming the HS256 secret, encrypted with that secret as the AES key: "
                    "a signing key never decrypts.",
                    seed("HS256 key"),
                    jwe_header_for(kid=HS256.kid),
                ),
                (
                    "encrypted-algorithm-mismatch-eddsa-key",
                    "An encrypted token naming the Ed25519 key, encrypted with its public key bytes as the "
                    "AES key.",
                    EDDSA_PUBLIC_BYTES,
                    jwe_header_for(kid=EDDSA.kid),
                ),
            ],
        ),
        *header_table(
            "algorithm_mismatch",
            [
                (
                    "encrypted-algorithm-mismatch-signed-token-naming-encryption-key",
                    "A signed token (HS256) naming the A256GCM key, its HMAC keyed with the encryption key: "
                    "an encryption key never verifies a signature (signed form, step 9).",
                    lambda m: hmac.digest(ENCRYPTION_SECRET, m, "sha256"),
                    {"alg": "HS256", "typ": TYP, "kid": A256GCM.kid},
                ),
            ],
        ),
        *header_table(
            "unsupported_header",
            [
                (
                    "encrypted-unsupported-header-signed-token-alg-a256gcm",
                    "A signed token whose alg is A256GCM: not a signing algorithm (signed form, step 6).",
                    lambda m: hmac.digest(ENCRYPTION_SECRET, m, "sha256"),
                    {"alg": "A256GCM", "typ": TYP, "kid": A256GCM.kid},
                ),
                (
                    "encrypted-unsupported-header-signed-token-with-enc",
                    "A signed token whose header carries enc (signed form, step 5).",
                    HS256,
                    header_for(HS256, enc="A256GCM"),
                ),
            ],
        ),
    ]


def encrypted_step_10_decryption() -> list[dict[str, Any]]:
    """Step 10, decryption: an IV or tag of the wrong length, or a tag that does not verify, is
    `bad_signature`."""
    h, i, c, t = encrypt_parts(
        ENCRYPTION_SECRET, jwe_header_for(), claims_for("encrypted-bad-tag"), iv_for("encrypted-bad-tag")
    )
    spaced = b64(json.dumps(jwe_header_for()).encode())
    rows = [
        ("encrypted-bad-tag-changed", "One character of the tag changed.", f"{h}..{i}.{c}.{flip_char(t, 3)}"),
        (
            "encrypted-bad-tag-ciphertext-changed",
            "One character of the ciphertext changed.",
            f"{h}..{i}.{flip_char(c, 10)}.{t}",
        ),
        (
            "encrypted-bad-tag-iv-changed",
            "One character of the IV changed.",
            f"{h}..{flip_char(i, 5)}.{c}.{t}",
        ),
        (
            "encrypted-bad-tag-truncated",
            "The tag cut to its first 12 bytes (a valid GCM tag length elsewhere, not here).",
            f"{h}..{i}.{c}.{b64(base64.urlsafe_b64decode(t + '==')[:12])}",
        ),
        (
            "encrypted-bad-tag-header-respelled",
            "The protected header re-encoded with spaces (same members): the AAD is the segment as "
            "received, so the tag no longer verifies.",
            f"{spaced}..{i}.{c}.{t}",
        ),
        (
            "encrypted-bad-tag-wrong-key",
            "Encrypted with another AES key under the ring key's kid.",
            jwe_assemble(
                seed("unknown A256GCM key"),
                jwe_header_for(),
                claims_for("encrypted-bad-tag-wrong-key"),
                iv_for("encrypted-bad-tag-wrong-key"),
            ),
        ),
    ]
    for label, iv in [
        ("iv-8-bytes", iv_for("encrypted-bad-tag-iv-8-bytes")[:8]),
        ("iv-16-bytes", iv_for("encrypted-bad-tag-iv-16-bytes") + bytes(4)),
    ]:
        vector_id = f"encrypted-bad-tag-{label}"
        rows.append(
            (
                vector_id,
                f"Correctly encrypted with an IV of {len(iv)} bytes: the profile's IV is 12 bytes.",
                jwe_assemble(ENCRYPTION_SECRET, jwe_header_for(), claims_for(vector_id), iv),
            )
        )
    return token_table("bad_signature", rows)


def encrypted_step_11_claims_json() -> list[dict[str, Any]]:
    """Step 11, claims JSON: a plaintext that is not strict JSON is `malformed`."""
    base_claims = compact(claims_for("encrypted-malformed-claims"))
    rows = [
        ("encrypted-malformed-claims-not-json", "The plaintext is not JSON.", b"not json"),
        (
            "encrypted-malformed-claims-duplicate-member",
            "The plaintext repeats sub.",
            base_claims.replace(b'"sub":"alice"', b'"sub":"alice","sub":"alice"'),
        ),
        (
            "encrypted-malformed-claims-invalid-utf8",
            "The plaintext is not valid UTF-8.",
            base_claims.replace(b"confirm", b"conf\xffrm"),
        ),
        ("encrypted-malformed-claims-array", "The plaintext is a JSON array.", b"[1]"),
    ]
    return [
        vector(
            vector_id,
            description,
            jwe_assemble(ENCRYPTION_SECRET, jwe_header_for(), plaintext, iv_for(vector_id)),
            "malformed",
        )
        for vector_id, description, plaintext in rows
    ]


def encrypted_steps_12_to_19() -> list[dict[str, Any]]:
    """Steps 12 to 19, the claim steps of section 5, unchanged: one vector each (two for step 12)."""
    rows: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
        (
            "encrypted-malformed-extra-claim",
            "A claim outside the closed set (nbf).",
            {"nbf": IAT},
            "malformed",
            {},
        ),
        (
            "encrypted-malformed-aud-array",
            "aud as an array.",
            {"aud": [f"tools/call:{TOOL}"]},
            "malformed",
            {},
        ),
        (
            "encrypted-lifetime-too-long",
            "A lifetime of 3600 s.",
            {"exp": IAT + 3600},
            "lifetime_too_long",
            {},
        ),
        (
            "encrypted-issued-in-future",
            "iat one second ahead of now.",
            {"iat": NOW + 1, "exp": NOW + 1 + TTL},
            "issued_in_future",
            {},
        ),
        (
            "encrypted-expired-at-exp",
            "now = exp: refused from the 600th second.",
            {},
            "expired",
            {"now": IAT + TTL},
        ),
        (
            "encrypted-wrong-issuer",
            "Minted by another issuer sharing the key.",
            {"iss": "https://other.example.com"},
            "wrong_issuer",
            {},
        ),
        ("encrypted-wrong-user", "Presented by another user.", {}, "wrong_user", {"user": "mallory"}),
        ("encrypted-wrong-tool", "Presented to another tool.", {}, "wrong_tool", {"tool": "delete_repo"}),
        (
            "encrypted-wrong-request",
            "Presented with other arguments.",
            {},
            "wrong_request",
            {"arguments": {"branch": "main", "force": True}},
        ),
    ]
    return [
        vector(vector_id, description, enc_token(vector_id, **changes), reason, **inputs)
        for vector_id, description, changes, reason, inputs in rows
    ]


def encrypted_order_of_steps() -> list[dict[str, Any]]:
    """Order (section 5.1): tokens with two or more faults; each expects the reason of the earliest
    failing step."""
    big = sized_enc_token("encrypted-order-size-before-segments", MAX_TOKEN_BYTES + 1)[0]
    zh, zi, zc, zt = encrypt_parts(
        ENCRYPTION_SECRET,
        jwe_header_for(zip="DEF"),
        claims_for("encrypted-order-segments-before-allowlist"),
        iv_for("encrypted-order-segments-before-allowlist"),
    )
    mh, mi, mc, mt = encrypt_parts(
        seed("HS256 key"),
        jwe_header_for(kid=HS256.kid),
        claims_for("encrypted-order-key-form-before-decryption"),
        iv_for("encrypted-order-key-form-before-decryption"),
    )
    th, ti, tc, tt = encrypt_parts(
        ENCRYPTION_SECRET,
        jwe_header_for(),
        claims_for("encrypted-order-decryption-before-claims", sub="mallory", exp=IAT + 3600),
        iv_for("encrypted-order-decryption-before-claims"),
    )
    return [
        vector(
            "encrypted-order-size-before-segments",
            "Over the cap and six segments.",
            big + ".AAAA",
            "too_large",
        ),
        vector(
            "encrypted-order-segments-before-allowlist",
            "A non-empty encrypted-key segment, and zip in the header.",
            f"{zh}.{b64(bytes(40))}.{zi}.{zc}.{zt}",
            "malformed",
        ),
        vector(
            "encrypted-order-canonical-before-allowlist",
            "A non-canonical tag, and zip in the header.",
            f"{zh}..{zi}.{zc}.{noncanonical_last(zt)}",
            "malformed",
        ),
        *jwe_header_table(
            "unsupported_header",
            [
                (
                    "encrypted-order-allowlist-before-type",
                    "zip in the header, and typ JWT.",
                    ENCRYPTION_SECRET,
                    jwe_header_for(zip="DEF", typ="JWT"),
                ),
                (
                    "encrypted-order-enc-before-type",
                    "enc A128GCM, and typ JWT.",
                    ENCRYPTION_SECRET,
                    jwe_header_for(enc="A128GCM", typ="JWT"),
                ),
            ],
        ),
        *jwe_header_table(
            "wrong_type",
            [
                (
                    "encrypted-order-type-before-key",
                    "typ JWT, and a kid in no ring.",
                    seed("unknown A256GCM key"),
                    jwe_header_for(kid=UNKNOWN_A256GCM.kid, typ="JWT"),
                ),
            ],
        ),
        vector(
            "encrypted-order-key-form-before-decryption",
            "Names the HS256 key, and the tag is changed.",
            f"{mh}..{mi}.{mc}.{flip_char(mt, 3)}",
            "algorithm_mismatch",
        ),
        vector(
            "encrypted-order-decryption-before-claims",
            "The tag is changed, and the claims are for another user with a 3600 s lifetime.",
            f"{th}..{ti}.{tc}.{flip_char(tt, 3)}",
            "bad_signature",
        ),
        vector(
            "encrypted-order-claims-json-before-claims",
            "The plaintext repeats sub, and the token has expired.",
            jwe_assemble(
                ENCRYPTION_SECRET,
                jwe_header_for(),
                compact(claims_for("encrypted-order-claims-json-before-claims")).replace(
                    b'"sub":"alice"', b'"sub":"alice","sub":"alice"'
                ),
                iv_for("encrypted-order-claims-json-before-claims"),
            ),
            "malformed",
            now=IAT + TTL,
        ),
        vector(
            "encrypted-order-expired-before-user",
            "Expired, and presented by another user.",
            enc_token("encrypted-order-expired-before-user"),
            "expired",
            now=IAT + TTL,
            user="mallory",
        ),
        vector(
            "encrypted-order-user-before-tool",
            "Another user and another tool.",
            enc_token("encrypted-order-user-before-tool"),
            "wrong_user",
            user="mallory",
            tool="delete_repo",
        ),
    ]


#: The groups of encrypted.json, in the order of the file.
ENCRYPTED_GROUPS: list[Callable[[], list[dict[str, Any]]]] = [
    encrypted_valid,
    encrypted_step_01_size,
    encrypted_step_02_03_segments,
    encrypted_step_04_header_json,
    encrypted_step_05_header_allowlist,
    encrypted_step_06_algorithms,
    encrypted_step_07_type,
    encrypted_step_08_key,
    encrypted_step_09_key_form,
    encrypted_step_10_decryption,
    encrypted_step_11_claims_json,
    encrypted_steps_12_to_19,
    encrypted_order_of_steps,
]


def encrypted_vectors() -> list[dict[str, Any]]:
    return joined(ENCRYPTED_GROUPS)


def encryption_keys() -> dict[str, Any]:
    """The members keys.json gains for the encrypted form (new names: old readers are unaffected)."""
    return {
        "a256gcm": A256GCM.private_jwk(),
        "encrypted_verifier_jwks": {
            "keys": [k.private_jwk() if k.alg != "EdDSA" else k.public_jwk() for k in ENCRYPTED_VERIFIER]
        },
    }


def encrypted_document() -> dict[str, Any]:
    return {
        "version": VERSION,
        "defaults": {"issuer": ISSUER, "max_lifetime": 600, "leeway": 0, "max_token_bytes": MAX_TOKEN_BYTES},
        "vectors": encrypted_vectors(),
    }


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


# --- invalid oct keys, kids and rings (sections 7.1, 7.4 and 7.6) ------------------------------------------
# Each breaks one rule and is otherwise valid: its secret is random (from a fixed seed) unless the secret is
# the fault, its kid is valid unless the kid is the fault.


def oct_entry(
    vector_id: str, description: str, secret: bytes, alg: str = "HS256", **members: Any
) -> dict[str, Any]:
    jwk = {
        "kty": "oct",
        "alg": alg,
        "use": "enc" if alg == "A256GCM" else "sig",
        "kid": vector_id,
        "k": b64(secret),
    }
    jwk.update(members)
    return {
        "id": vector_id,
        "description": description,
        "jwk": {k: v for k, v in jwk.items() if v is not ...},
    }


def invalid_oct_key_vectors() -> list[dict[str, Any]]:
    """Weak oct secrets (section 7.1) and kids outside section 7.4, each refused when the key is loaded."""
    out: list[dict[str, Any]] = []
    weak: list[tuple[str, str, bytes]] = [
        ("all-zero", "32 zero bytes", bytes(32)),
        ("one-byte-repeated", "one byte (0x61) repeated 32 times", b"a" * 32),
        ("pattern-of-3", "a pattern of 3 bytes repeated (period 3)", (b"k3y" * 11)[:32]),
        ("pattern-of-8", "a pattern of 8 bytes repeated (period 8)", b"secret12" * 4),
    ]
    for alg, label, extra in (("HS256", "hs256", b""), ("A256GCM", "a256gcm", b"")):
        for name, what, secret in weak:
            out.append(
                oct_entry(
                    f"weak-secret-{label}-{name}",
                    f"An {alg} secret of {what}: obviously not random, refused in every form (section 7.1).",
                    secret + extra,
                    alg,
                )
            )
    out.append(
        oct_entry(
            "weak-secret-hs256-64-bytes-pattern-of-8",
            "A 64-byte HS256 secret that is a pattern of 8 bytes repeated (section 7.1).",
            b"\x00\x01\x02\x03\x04\x05\x06\x07" * 8,
        )
    )
    good = seed("invalid key vectors: the secret of a key whose kid is the fault")
    kids: list[tuple[str, str, Any]] = [
        ("kid-empty", "an empty kid", ""),
        ("kid-with-space", "a kid with a space (U+0020)", "key 1"),
        ("kid-129-characters", "a kid of 129 characters", "k" * 129),
        ("kid-non-ascii", "a kid with a character beyond U+007E (U+00E9)", "cl\u00e9"),
        ("kid-control-character", "a kid with a tab (U+0009)", "key\t1"),
        ("kid-del", "a kid with U+007F", "key\u007f"),
        ("kid-number", "a kid that is a number", 7),
        ("kid-null", "a kid member that is null (present, so explicit: not read as absent)", None),
    ]
    for vector_id, what, kid in kids:
        out.append(
            oct_entry(vector_id, f"An HS256 key with {what}: refused at load (section 7.4).", good, kid=kid)
        )
    out.append(
        oct_entry(
            "kid-with-space-a256gcm",
            "An encryption key with a kid holding a space: refused at load (section 7.4).",
            seed("invalid key vectors: an encryption key whose kid is the fault"),
            "A256GCM",
            kid="enc key",
        )
    )
    eddsa = EDDSA.public_jwk()
    out.append(
        {
            "id": "kid-empty-eddsa",
            "description": "An Ed25519 public key with an empty kid: refused at load (section 7.4).",
            "jwk": {**eddsa, "kid": ""},
        }
    )
    return out


def invalid_ring_vectors() -> list[dict[str, Any]]:
    """Rings (a `jwks`, section 12.4) in which an encryption key holds another key's secret (section 7.6)."""
    shared = seed("invalid key vectors: one secret in two keys")
    other = seed("invalid key vectors: a secret of its own")

    def key(alg: str, kid: Any, secret: bytes = shared) -> dict[str, Any]:
        jwk: dict[str, Any] = {
            "kty": "oct",
            "alg": alg,
            "use": "enc" if alg == "A256GCM" else "sig",
            "k": b64(secret),
        }
        if kid is not None:
            jwk["kid"] = kid
        return jwk

    rings: list[tuple[str, str, list[dict[str, Any]]]] = [
        (
            "shared-secret-a256gcm-then-hs256",
            "One secret as an encryption key (kid enc) and as an HS256 key (kid sig): whoever holds the "
            "HS256 secret reads every encrypted state.",
            [key("A256GCM", "enc"), key("HS256", "sig")],
        ),
        (
            "shared-secret-hs256-then-a256gcm",
            "The same two keys in the other order.",
            [key("HS256", "sig"), key("A256GCM", "enc")],
        ),
        (
            "shared-secret-hs256-without-alg",
            "An HS256 key without alg or use (an oct JWK without alg is HS256) holding the encryption key's "
            "secret.",
            [key("A256GCM", "enc"), {"kty": "oct", "kid": "sig", "k": b64(shared)}],
        ),
        (
            "shared-secret-two-a256gcm",
            "Two encryption keys (distinct kids) holding one secret.",
            [key("A256GCM", "enc-1"), key("A256GCM", "enc-2")],
        ),
        (
            "shared-secret-apart-in-the-ring",
            "An HS256 key, a key of another secret, then an encryption key holding the first key's secret.",
            [key("HS256", "sig"), key("HS256", "other", other), key("A256GCM", "enc")],
        ),
        (
            "shared-secret-thumbprint-kids",
            "One secret as an encryption key and an HS256 key, no kid: the two thumbprints are equal.",
            [key("A256GCM", None), key("HS256", None)],
        ),
    ]
    return [
        {"id": vector_id, "description": description, "jwks": {"keys": keys}}
        for vector_id, description, keys in rings
    ]


def invalid_member_vectors() -> list[dict[str, Any]]:
    """One member of an otherwise valid JWK against sections 7.1, 7.2, 7.4 and 7.6, on every key type.

    A kid with a space at either end (a verifier that trims it first loads it), a weak secret on an
    ``oct`` JWK without ``alg`` (an HS256 secret, section 7.6), a ``"kid": null`` on each key type, a
    short secret, padded base64url, a ``use`` of the other form, and ``alg`` or ``use`` present as null
    (present, so not absent: neither is the value the profile allows).
    """
    secret = seed("invalid key vectors: the secret of a key whose member is the fault")
    encryption = seed("invalid key vectors: the encryption key whose member is the fault")
    pair = Ed25519PrivateKey.from_private_bytes(
        seed("invalid key vectors: an Ed25519 key whose member is the fault")
    )
    private = Key.from_jwk(
        {
            "kty": "OKP",
            "crv": "Ed25519",
            "d": b64(pair.private_bytes_raw()),
            "x": b64(pair.public_key().public_bytes_raw()),
        }
    ).private_jwk()
    public = {k: v for k, v in private.items() if k != "d"}
    hs256 = {"kty": "oct", "alg": "HS256", "use": "sig", "k": b64(secret)}
    a256gcm = {"kty": "oct", "alg": "A256GCM", "use": "enc", "k": b64(encryption)}
    bare = {"kty": "oct", "k": b64(secret)}  # no alg, no use: an HS256 secret (section 7.6)
    out: list[dict[str, Any]] = []

    def add(vector_id: str, description: str, jwk: dict[str, Any]) -> None:
        out.append({"id": vector_id, "description": description, "jwk": jwk})

    for vector_id, what, base, kid in (
        ("kid-leading-space", "An HS256 key", hs256, " key-1"),
        ("kid-trailing-space", "An HS256 key", hs256, "key-1 "),
        ("kid-leading-space-eddsa", "An Ed25519 public key", public, " key-1"),
        ("kid-trailing-space-a256gcm", "An encryption key", a256gcm, "key-1 "),
    ):
        add(
            vector_id,
            f"{what} whose kid has a space at one end ({kid!r}): refused at load, never trimmed "
            "(section 7.4).",
            {**base, "kid": kid},
        )
    for name, what, weak in (
        ("all-zero", "32 zero bytes", bytes(32)),
        ("one-byte-repeated", "one byte (0x61) repeated 32 times", b"a" * 32),
        ("pattern-of-3", "a pattern of 3 bytes repeated", (b"k3y" * 11)[:32]),
        ("pattern-of-8", "a pattern of 8 bytes repeated", b"secret12" * 4),
    ):
        add(
            f"weak-secret-no-alg-{name}",
            f"An oct JWK without alg or use (an HS256 secret, section 7.6) of {what}: the weak-secret rule "
            "holds whatever members the JWK has (section 7.1).",
            {"kty": "oct", "kid": f"weak-secret-no-alg-{name}", "k": b64(weak)},
        )
    for vector_id, what, base in (
        ("kid-null-eddsa-public", "An Ed25519 public key", public),
        ("kid-null-eddsa-private", "An Ed25519 private key", private),
        ("kid-null-a256gcm", "An encryption key", a256gcm),
    ):
        add(
            vector_id,
            f"{what} with a kid member that is null (present, so explicit: not read as absent): refused at "
            "load (section 7.4).",
            {**base, "kid": None},
        )
    add(
        "short-secret-hs256",
        "An HS256 secret of 31 bytes: shorter than 32, refused at load (section 7.1).",
        {**hs256, "k": b64(secret[:31])},
    )
    add(
        "short-secret-no-alg",
        "An oct JWK without alg (an HS256 secret) of 16 bytes: refused at load (sections 7.1, 7.6).",
        {**bare, "k": b64(secret[:16])},
    )
    add(
        "a256gcm-31-bytes",
        "An encryption key of 31 bytes: not exactly 32, refused at load (section 7.6).",
        {**a256gcm, "k": b64(encryption[:31])},
    )
    add(
        "a256gcm-33-bytes",
        "An encryption key of 33 bytes: not exactly 32, refused at load (section 7.6).",
        {**a256gcm, "k": b64(encryption + secret[:1])},
    )
    for vector_id, what, base, member in (
        ("padded-k-hs256", "An HS256 key whose k", hs256, "k"),
        ("padded-k-a256gcm", "An encryption key whose k", a256gcm, "k"),
        ("padded-x-eddsa", "An Ed25519 public key whose x", public, "x"),
        ("padded-d-eddsa", "An Ed25519 private key whose d", private, "d"),
    ):
        add(
            vector_id,
            f"{what} carries base64url padding ('='): refused at load, members are unpadded (section 7.2).",
            {**base, member: base[member] + "="},
        )
    for vector_id, description, jwk in (
        (
            "use-enc-hs256",
            "An HS256 key (alg HS256) with use enc: a signing key's use is sig (section 7.2).",
            {**hs256, "use": "enc"},
        ),
        (
            "use-enc-oct-without-alg",
            "An oct JWK without alg (an HS256 secret) with use enc: only alg A256GCM makes an encryption key "
            "(sections 7.2, 7.6).",
            {**bare, "use": "enc"},
        ),
        (
            "use-sig-a256gcm",
            "An encryption key with use sig: an encryption key's use is enc (section 7.6).",
            {**a256gcm, "use": "sig"},
        ),
        (
            "use-enc-eddsa",
            "An Ed25519 public key with use enc: a signing key's use is sig (section 7.2).",
            {**public, "use": "enc"},
        ),
        (
            "alg-null-oct",
            "An oct JWK whose alg member is null: present, and not HS256 or A256GCM (sections 7.2, 7.6).",
            {**hs256, "alg": None},
        ),
        (
            "alg-null-eddsa",
            "An Ed25519 public key whose alg member is null: present, and not EdDSA (section 7.2).",
            {**public, "alg": None},
        ),
        (
            "use-null-hs256",
            "An HS256 key whose use member is null: present, and not sig (section 7.2).",
            {**hs256, "use": None},
        ),
        (
            "use-null-eddsa",
            "An Ed25519 public key whose use member is null: present, and not sig (section 7.2).",
            {**public, "use": None},
        ),
        (
            "use-null-a256gcm",
            "An encryption key whose use member is null: present, and not enc (section 7.6).",
            {**a256gcm, "use": None},
        ),
    ):
        add(vector_id, description, jwk)
    return out


def invalid_d4_ring_vectors() -> list[dict[str, Any]]:
    """An empty ring (section 7.3); rings in which an Ed25519 key's d or x is an oct key's secret (7.6)."""
    pair = Ed25519PrivateKey.from_private_bytes(
        seed("invalid key vectors: an Ed25519 key whose bytes are a secret")
    )
    d, x = pair.private_bytes_raw(), pair.public_key().public_bytes_raw()
    private = Key.from_jwk({"kty": "OKP", "crv": "Ed25519", "d": b64(d), "x": b64(x)}).private_jwk()
    public = {k: v for k, v in private.items() if k != "d"}

    def oct_key(alg: str, secret: bytes) -> dict[str, Any]:
        return {
            "kty": "oct",
            "alg": alg,
            "use": "enc" if alg == "A256GCM" else "sig",
            "kid": alg.lower(),
            "k": b64(secret),
        }

    out = [
        {
            "id": "empty-ring",
            "description": "A key set with no key: a ring holds at least one key (section 7.3).",
            "jwks": {"keys": []},
        }
    ]
    for alg, label in (("A256GCM", "a256gcm"), ("HS256", "hs256")):
        out.append(
            {
                "id": f"shared-secret-{label}-eddsa-x",
                "description": f"An {alg} key whose secret is the x (the public key) of an Ed25519 key of "
                "the ring: the bytes of a d or an x are secret bytes for the rule of section 7.6.",
                "jwks": {"keys": [oct_key(alg, x), public]},
            }
        )
        out.append(
            {
                "id": f"shared-secret-{label}-eddsa-d",
                "description": f"An {alg} key whose secret is the d (the private key) of an Ed25519 key of "
                "the ring (section 7.6).",
                "jwks": {"keys": [private, oct_key(alg, d)]},
            }
        )
    return out


def all_invalid_key_vectors() -> list[dict[str, Any]]:
    """invalid-keys.json: every entry is refused by the reference when loaded, or this script stops."""
    out = (
        invalid_key_vectors()
        + invalid_oct_key_vectors()
        + invalid_ring_vectors()
        + invalid_member_vectors()
        + invalid_d4_ring_vectors()
    )
    for entry in out:
        try:
            if "jwks" in entry:
                Keyring.from_jwks(entry["jwks"])
            else:
                Key.from_jwk(entry["jwk"])
        except ValueError:
            continue
        raise SystemExit(f"invalid key vector {entry['id']} loads")
    return out


def point_order_is_large(point: tuple[int, int]) -> bool:
    q = point
    for _ in range(3):
        q = edwards_add(q, q)
    return q != (0, 1)


# --- who could present each invalid vector (section 12.6) ---------------------------------------------
# A baseline verifier must refuse every invalid vector that a party holding no key could present. That is
# decided here from the token itself, by the rule of section 12.6, so that no vector is marked by hand.

#: Refusals of an authentic token that come from where or when it is presented, not from its content,
#: and the size cap, which a client can always exceed.
PRESENTATION_REASONS = frozenset(
    {"expired", "wrong_issuer", "wrong_user", "wrong_tool", "wrong_request", "too_large"}
)


def lenient(segment: str) -> bytes:
    """What a lenient decoder reads: padding optional, unused bits ignored."""
    bare = segment.rstrip("=")
    return base64.urlsafe_b64decode(bare + "=" * (-len(bare) % 4))


def authentic(tok: str, ring: Keyring) -> bool:
    """Whether the token's signature (or tag) verifies under a key of `ring`, read leniently."""
    segments = tok.split(".") if isinstance(tok, str) else []
    try:
        if len(segments) == 3:
            message, signature = f"{segments[0]}.{segments[1]}".encode("ascii"), lenient(segments[2])
            return any(key.alg in ("HS256", "EdDSA") and key.verify(message, signature) for key in ring)
        if len(segments) == 5:
            iv, sealed = lenient(segments[2]), lenient(segments[3]) + lenient(segments[4])
            aad = segments[0].encode("ascii")
            return any(key.alg == "A256GCM" and key.decrypt(iv, sealed, aad) is not None for key in ring)
    except (ValueError, UnicodeEncodeError):
        return False
    return False


def opens(entry: dict[str, Any], tok: str, defaults: dict[str, Any], ring: Keyring) -> str | None:
    """The reason the reference refuses `tok` in the vector's context, or None if it opens."""
    settings = {**defaults, **{k: entry[k] for k in defaults if k in entry}}
    sealer = StateSealer(
        ring,
        issuer=settings["issuer"],
        max_lifetime=settings["max_lifetime"],
        leeway=settings["leeway"],
        max_token_bytes=settings["max_token_bytes"],
        require_arguments=settings.get("require_arguments", False),
        clock=lambda: entry["now"],
    )
    target = {k: entry[k] for k in ("tool", "prompt", "resource") if k in entry}
    try:
        sealer.open(tok, user=entry["user"], arguments=entry.get("arguments", {}), **target)
    except InvalidRequestState as refusal:
        return refusal.reason
    return None


def mark_keyless(document: dict[str, Any], ring: Keyring) -> dict[str, Any]:
    """Give each invalid vector `keyless` (and `reencoding` where it applies), just before `expected`."""
    for index, entry in enumerate(document["vectors"]):
        expected = entry.pop("expected")
        if not expected["valid"]:
            tok = entry["token"]
            keyless = not authentic(tok, ring) or expected["reason"] in PRESENTATION_REASONS
            reencoding = False
            if not keyless and isinstance(tok, str) and tok.count(".") in (2, 4):
                try:
                    canonical = ".".join(b64(lenient(segment)) for segment in tok.split("."))
                except ValueError:
                    canonical = tok
                if canonical != tok:
                    reason = opens(entry, canonical, document["defaults"], ring)
                    reencoding = reason is None or reason in PRESENTATION_REASONS
                    keyless = reencoding
            entry["keyless"] = keyless
            if reencoding:
                entry["reencoding"] = True
        entry["expected"] = expected
        document["vectors"][index] = entry
    return document


def documents() -> dict[str, Any]:
    keys = {
        "version": VERSION,
        "hs256": HS256.private_jwk(),
        "eddsa": EDDSA.private_jwk(),
        "eddsa_public": EDDSA.public_jwk(),
        "verifier_jwks": {"keys": [HS256.private_jwk(), EDDSA.public_jwk()]},
        "unknown": UNKNOWN_KEY.private_jwk(),
        **encryption_keys(),
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
    mark_keyless(tokens, VERIFIER)
    arguments = {"version": VERSION, "vectors": argument_vectors()}
    invalid_keys = {"version": VERSION, "vectors": all_invalid_key_vectors()}
    return {
        "keys.json": keys,
        "tokens.json": tokens,
        "arguments.json": arguments,
        "encrypted.json": mark_keyless(encrypted_document(), ENCRYPTED_VERIFIER),
        "invalid-keys.json": invalid_keys,
    }


def coverage() -> str:
    """For each file and each of its groups (a validation step, or a few): how many vectors, which reasons."""
    steps = list(REASONS)  # in the order of the steps that refuse with them
    lines = []
    for name, groups in [("tokens.json", TOKEN_GROUPS), ("encrypted.json", ENCRYPTED_GROUPS)]:
        made = [(group.__name__, group()) for group in groups]
        lines.append(f"{name}: {sum(len(vectors) for _, vectors in made)} vectors")
        expected: set[str] = set()
        for group_name, vectors in made:
            reasons = Counter(v["expected"].get("reason", "valid") for v in vectors)
            expected.update(reasons)
            in_step_order = sorted(
                reasons, key=lambda reason: -1 if reason == "valid" else steps.index(reason)
            )
            listed = ", ".join(f"{reason} {reasons[reason]}" for reason in in_step_order)
            lines.append(f"  {group_name:<36}{len(vectors):>4}  {listed}")
        absent = [reason for reason in REASONS if reason not in expected]
        lines.append(f"  reason codes no vector expects: {', '.join(absent) or 'none'}")
    return "\n".join(lines)


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
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="list each file's vectors by validation step, with the reasons they expect, and write nothing",
    )
    args = parser.parse_args(argv)
    if args.coverage:
        print(coverage())
        return 0
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
