"""Ed25519 public-key hygiene (profile, section 7.2): canonical points of large order.

An Ed25519 verifier checks ``[S]B = R + [k]A`` for the public key ``A``. If ``A``
has small order (one of the 8 torsion points: the identity, the point of order 2,
the two of order 4 and the four of order 8), ``[k]A`` takes at most 8 values
whatever the message, so a constant signature verifies for most messages: anyone
could forge tokens for a ring that holds such a key. A key is therefore refused
when it is loaded unless its 32 bytes are the canonical encoding (RFC 8032,
section 5.1.3) of a point on the curve, and that point does not have small order
(``[8]A`` is not the identity).

This is pure integer arithmetic, run once per key load, never per token.
"""

from __future__ import annotations

from typing import Final

__all__ = ["public_key_problem"]

#: The field prime 2**255 - 19.
_P: Final = 2**255 - 19
#: The curve constant d = -121665/121666 mod p.
_D: Final = (-121665 * pow(121666, _P - 2, _P)) % _P
#: A square root of -1 mod p, used when the first candidate root is off by it.
_SQRT_M1: Final = pow(2, (_P - 1) // 4, _P)

_Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z


def decode_point(encoded: bytes) -> tuple[int, int] | None:
    """Decode 32 bytes as RFC 8032 section 5.1.3 does; ``None`` when the decoding fails.

    Fails for a ``y`` of ``p`` or more (a non-canonical encoding), a ``y`` with no
    ``x`` on the curve, and ``x = 0`` with the sign bit set (the second,
    non-canonical encoding of the two points whose ``x`` is 0).
    """
    if len(encoded) != 32:
        return None
    number = int.from_bytes(encoded, "little")
    sign = number >> 255
    y = number & ((1 << 255) - 1)
    if y >= _P:
        return None
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x = (u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P)) % _P
    check = (v * x * x) % _P
    if check == (-u) % _P:
        x = (x * _SQRT_M1) % _P
    elif check != u:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = _P - x
    return x, y


def _add(a: _Point, b: _Point) -> _Point:
    """Point addition in extended coordinates (RFC 8032, section 5.1.4)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    e1 = (y1 - x1) * (y2 - x2) % _P
    e2 = (y1 + x1) * (y2 + x2) % _P
    c = 2 * t1 * t2 * _D % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = e2 - e1, dd - c, dd + c, e2 + e1
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def has_small_order(point: tuple[int, int]) -> bool:
    """Tell whether ``[8]point`` is the identity, i.e. the point is one of the 8 torsion points."""
    x, y = point
    q: _Point = (x, y, 1, x * y % _P)
    for _ in range(3):
        q = _add(q, q)
    qx, qy, qz, _ = q
    return qx % _P == 0 and (qy - qz) % _P == 0


def public_key_problem(encoded: bytes) -> str | None:
    """What is wrong with an Ed25519 public key under profile 7.2, or ``None`` if nothing is.

    The message names the rule, never the key bytes.
    """
    if len(encoded) != 32:
        return "an Ed25519 public key ('x') must be 32 bytes"
    point = decode_point(encoded)
    if point is None:
        return (
            "an Ed25519 public key ('x') must be the canonical encoding of a point on the curve "
            "(RFC 8032, section 5.1.3); this one is not"
        )
    if has_small_order(point):
        return (
            "an Ed25519 public key ('x') must not be a point of small order (one of the 8 torsion "
            "points): with such a key a constant signature verifies for any token"
        )
    return None
