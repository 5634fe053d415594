"""The sealer: mint and open ``requestState`` tokens of the profile.

:class:`StateSealer` ties the layers together: :mod:`~mrtr_state.keys` for keys,
:mod:`~mrtr_state.token.jws` for the compact serialization and header (the signed form),
:mod:`~mrtr_state.token.jwe` for the encrypted form, and :mod:`~mrtr_state.token.claims` for the
claim set. The first key of the ring decides the form of new tokens; a token is
opened by the form its segment count shows (three: signed, five: encrypted). It
holds configuration only, so one sealer can be shared by every thread of a server.

It implements rule AGT-18 of the Agent Wranglers agents-as-users playbook:
https://agentwranglers.se/playbook/agents-as-users/mcp-servers/signed-request-state
"""

from __future__ import annotations

import inspect
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from mrtr_state.binding.binding import Binding
from mrtr_state.binding.target import given
from mrtr_state.errors import InvalidRequestState, KeyringError
from mrtr_state.keys.key_source import (
    KeyProvider,
    keys_of,
    refresh_for_unknown_key,
    refresh_for_unknown_key_async,
)
from mrtr_state.keys.keys import A256GCMKey, Key, Keyring
from mrtr_state.metrics import StateMetrics, record
from mrtr_state.replay.replay import (
    AsyncReplayStore,
    ReplayStore,
    ReplayStoreError,
    is_async_store,
    replay_key,
)
from mrtr_state.token import _b64, _json, claims, jwe, jws

__all__ = [
    "DEFAULT_LEEWAY",
    "DEFAULT_MAX_LIFETIME",
    "DEFAULT_MAX_TOKEN_BYTES",
    "DEFAULT_TTL",
    "MAX_LEEWAY",
    "StateSealer",
]

_logger = logging.getLogger(__name__)

#: The default lifetime of a token, in seconds (profile, section 4).
DEFAULT_TTL: Final = 600
#: The default longest lifetime a verifier accepts, in seconds (profile, section 5, step 13).
DEFAULT_MAX_LIFETIME: Final = 600
#: The default clock-skew allowance, in seconds (profile, section 5, steps 14 and 15).
DEFAULT_LEEWAY: Final = 0
#: The largest leeway a verifier may configure, in seconds.
MAX_LEEWAY: Final = 300
#: The default size cap of a token, in bytes of its UTF-8 encoding (profile, section 5, step 1).
DEFAULT_MAX_TOKEN_BYTES: Final = 8192
_MIN_TOKEN_BYTES: Final = 512
_JTI_BYTES: Final = 16


def _positive_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"from {low} to {high}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _non_empty(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty")
    return value


class _Generation:
    """One set of a sealer's keys and what the sealer derives from it, made once per set.

    ``keys`` is the tuple the provider handed out (compared by identity to notice
    a change); the rest belongs to one set of usable keys: the ring, the header
    segments each form's fast path knows (:func:`~mrtr_state.token.jws.known_headers`,
    :func:`~mrtr_state.token.jwe.known_headers`), and what new tokens are minted with.
    """

    __slots__ = ("encrypted_headers", "keys", "minting_header", "ring", "signed_headers", "signing_key")

    keys: tuple[Key, ...]
    ring: Keyring
    signed_headers: dict[str, Key]
    encrypted_headers: dict[str, A256GCMKey]
    minting_header: str
    signing_key: Key | None

    def __init__(self, keys: tuple[Key, ...], ring: Keyring) -> None:
        self.keys = keys
        self.ring = ring
        self.signed_headers = jws.known_headers(ring)
        self.encrypted_headers = jwe.known_headers(ring)
        first = ring.keys[0]
        self.minting_header = (
            jwe.header_segment(first) if isinstance(first, A256GCMKey) else jws.header_segment(first)
        )
        self.signing_key = first if first.can_sign else None

    def under(self, keys: tuple[Key, ...]) -> _Generation:
        """A copy remembered as the generation of ``keys``: unusable keys keep the last good ones."""
        kept = _Generation.__new__(_Generation)
        for name in _Generation.__slots__:
            setattr(kept, name, getattr(self, name))
        kept.keys = keys
        return kept


class StateSealer:
    """Seal state into a ``requestState`` token, and open it on the retry.

    Args:
        ring: the keys; the first signs (or, an A256GCM key, encrypts), every key
            opens the tokens of its own form. A :class:`~mrtr_state.Keyring`, or a
            provider of the current keys (see :mod:`mrtr_state.keys.key_source`): a key
            source such as :class:`~mrtr_state.keys.remote_jwks.RemoteJWKS` or
            :class:`~mrtr_state.keys.reloading.ReloadingKeyring`, or a function
            returning the current :class:`~mrtr_state.Keyring`.
        issuer: this server's identity, written to and required in ``iss``.
        ttl: lifetime of minted tokens in seconds (default 600, or ``max_lifetime``
            when that is shorter).
        max_lifetime: the longest ``exp - iat`` this verifier accepts (default 600;
            at least ``ttl``; raise both together for longer-lived state).
        leeway: seconds of clock skew allowed on ``exp`` and ``iat`` (default 0).
        max_token_bytes: the size cap, checked before any decoding (default 8192).
        clock: returns the current time in seconds since the epoch.
        entropy: returns that many random bytes (used for ``jti`` only: the IV of
            an encrypted token always comes from the operating system's generator).
        replay_store: where ``consume=True`` records redeemed tokens (see
            :mod:`mrtr_state.replay`): a :class:`~mrtr_state.ReplayStore` for
            :meth:`open` and :meth:`open_async`, or an
            :class:`~mrtr_state.replay.AsyncReplayStore` for :meth:`open_async`
            only. Without one, ``consume=True`` is a configuration error.
        require_arguments: require the argument binding (profile, section 5,
            step 19): a token for a tool or a prompt without ``args_sha256`` is
            refused with ``wrong_request``, and :meth:`seal` for a tool or a
            prompt needs ``arguments`` (``{}`` for none). A resource read has no
            arguments, so the requirement never applies to it. Default ``False``;
            :meth:`open` can override it per call.
        metrics: where every seal, open, refusal (by reason code and target
            method), redemption and store outage is counted (see
            :mod:`mrtr_state.metrics`): ``OpenTelemetryMetrics()`` or a plain
            function ``(event, attributes)``. Default: not counted.

    A sealer holds no mutable state of its own and is safe to share between threads.

    With a provider whose keys change, each call seals or opens with the keys it
    holds at that moment; what the sealer derives from a set of keys is made once
    per set. A token refused as ``unknown_key`` is opened once more if the
    provider, asked to look for new keys (``refresh_for_unknown_key``), found some,
    or if its keys changed meanwhile anyway. Keys a provider hands out that cannot
    be used are logged once and the last good ones stay in use.
    """

    __slots__ = (
        "_clock",
        "_entropy",
        "_issuer",
        "_keys",
        "_leeway",
        "_max_lifetime",
        "_max_token_bytes",
        "_metrics",
        "_read_keys",
        "_replay_async",
        "_replay_store",
        "_require_arguments",
        "_source",
        "_ttl",
    )

    _issuer: str
    _ttl: int
    _max_lifetime: int
    _leeway: int
    _max_token_bytes: int
    _clock: Callable[[], float]
    _entropy: Callable[[int], bytes]
    _replay_store: ReplayStore | AsyncReplayStore | None
    _replay_async: bool
    _require_arguments: bool
    _source: KeyProvider
    _read_keys: Callable[[], tuple[Key, ...]] | None
    _keys: _Generation
    _metrics: StateMetrics | None

    def __init__(
        self,
        ring: KeyProvider,
        *,
        issuer: str,
        ttl: int | None = None,
        max_lifetime: int = DEFAULT_MAX_LIFETIME,
        leeway: int = DEFAULT_LEEWAY,
        max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES,
        clock: Callable[[], float] = time.time,
        entropy: Callable[[int], bytes] = os.urandom,
        replay_store: ReplayStore | AsyncReplayStore | None = None,
        require_arguments: bool = False,
        metrics: StateMetrics | None = None,
    ) -> None:
        if isinstance(ring, Keyring):
            read_keys = None
            generation = _Generation(ring.keys, ring)
        else:
            read_keys = keys_of(ring)  # TypeError for anything that provides no keys
            keys = read_keys()
            generation = _Generation(keys, Keyring(keys))
        if metrics is not None and not callable(metrics):
            raise TypeError("metrics must be a callable (event, attributes), such as OpenTelemetryMetrics()")
        max_lifetime = _positive_int("max_lifetime", max_lifetime, 1)
        ttl = _positive_int("ttl", min(DEFAULT_TTL, max_lifetime) if ttl is None else ttl, 1)
        if ttl > max_lifetime:
            raise ValueError(f"ttl ({ttl} s) must not exceed max_lifetime ({max_lifetime} s)")
        if not callable(clock) or not callable(entropy):
            raise TypeError("clock and entropy must be callables")
        if replay_store is not None and not isinstance(replay_store, ReplayStore):
            raise TypeError("replay_store must have a redeem(key, *, expires_at) method")
        if not isinstance(require_arguments, bool):
            raise TypeError(f"require_arguments must be a bool, not {type(require_arguments).__name__}")
        settings = {
            "_source": ring,
            "_read_keys": read_keys,
            "_keys": generation,
            "_metrics": metrics,
            "_issuer": _non_empty("issuer", issuer),
            "_ttl": ttl,
            "_max_lifetime": max_lifetime,
            "_leeway": _positive_int("leeway", leeway, 0, MAX_LEEWAY),
            "_max_token_bytes": _positive_int("max_token_bytes", max_token_bytes, _MIN_TOKEN_BYTES),
            "_clock": clock,
            "_entropy": entropy,
            "_replay_store": replay_store,
            "_replay_async": is_async_store(replay_store),
            "_require_arguments": require_arguments,
        }
        for name, value in settings.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("StateSealer objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("StateSealer objects are immutable")

    def __repr__(self) -> str:
        return (
            f"StateSealer(issuer={self._issuer!r}, ttl={self._ttl}, max_lifetime={self._max_lifetime}, "
            f"leeway={self._leeway}, max_token_bytes={self._max_token_bytes}, ring={self._source!r})"
        )

    @property
    def ring(self) -> KeyProvider:
        """The key ring, or the provider of keys given in its place."""
        return self._source

    @property
    def metrics(self) -> StateMetrics | None:
        """Where outcomes are counted, or ``None``."""
        return self._metrics

    def _current(self) -> _Generation:
        """The generation of the keys the provider holds now (a ring's never changes).

        A new generation is made when the provider hands out another ``keys``
        tuple, so that everything derived from keys belongs to one set and a
        removed key stops opening at once. Keys that cannot be used are logged
        once and the last good generation stays in use.
        """
        generation = self._keys
        read_keys = self._read_keys
        if read_keys is None:
            return generation
        keys = read_keys()
        if keys is generation.keys:
            return generation
        try:
            fresh = _Generation(keys, Keyring(keys))
        except KeyringError as exc:  # a provider broke its contract: keep the last good keys
            _logger.error("the key source %r gave keys that cannot be used: %s", self._source, exc)
            fresh = generation.under(keys)
        object.__setattr__(self, "_keys", fresh)
        return fresh

    @property
    def issuer(self) -> str:
        """The issuer this sealer writes and requires."""
        return self._issuer

    @property
    def ttl(self) -> int:
        """The lifetime of minted tokens, in seconds."""
        return self._ttl

    @property
    def max_token_bytes(self) -> int:
        """The size cap, in bytes."""
        return self._max_token_bytes

    @property
    def require_arguments(self) -> bool:
        """Whether tokens for tools and prompts must carry the argument binding (step 19)."""
        return self._require_arguments

    @property
    def replay_store(self) -> ReplayStore | AsyncReplayStore | None:
        """The store ``consume=True`` redeems in, or ``None`` (then ``consume=True`` is an error)."""
        return self._replay_store

    def seal(
        self,
        state: Any,
        *,
        user: str,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> str:
        """Mint a ``requestState`` token for ``state``, bound to ``user`` and one target.

        Give exactly one of ``tool``, ``prompt`` or ``resource``. With
        ``arguments`` (the request's arguments object), the token also binds their
        digest, so it only opens on a retry with the same arguments.

        With a signing key first in the ring the token is signed (a JWS), and the
        client can read the state: never put a secret in it. With an A256GCM key
        first it is encrypted (a JWE, profile section 3.6): the client sees the
        header and the length only. Secrets still do not belong in the state.

        Raises:
            TypeError: the state holds a value that is not JSON (or a bad argument).
            ValueError: the state is JSON the profile cannot carry exactly, the
                token would exceed the size cap, the arguments are unbindable
                (an integer beyond 2**53 - 1, however written: pass such ids as
                strings; profile 3.4), or the sealer requires the argument
                binding and ``arguments`` is missing for a tool or prompt.
            KeyringError: the ring cannot sign (its first key is a public key).
        """
        kind, name = given(tool, prompt, resource)  # Binding.of, without its keyword layer
        binding = Binding(user, kind, name, arguments)
        return self.seal_bound(state, binding)

    def seal_bound(self, state: Any, binding: Binding) -> str:
        """:meth:`seal` for a request already made a :class:`~mrtr_state.binding.Binding`.

        The binding's argument digest is computed once and kept, so a request
        that opens a token and seals a new one computes it once. Raises as
        :meth:`seal`.
        """
        # The check of profile 3.3 and the state's JSON at once; None: the state passes
        # the check but cannot be written, and the writing's error comes where it always did.
        return self._seal(state, binding, _json.encode_state(state))

    def seal_encoded(self, state: claims.EncodedState, binding: Binding) -> str:
        """:meth:`seal_bound` for a state already checked and written once.

        ``state`` is a :class:`~mrtr_state.token.claims.EncodedState`: it is neither
        checked nor serialized again. Raises as :meth:`seal`,
        except for the state itself, which was checked when it was encoded.
        """
        if not isinstance(state, claims.EncodedState):
            raise TypeError(f"state must be an EncodedState, not {type(state).__name__}")
        return self._seal(state, binding)

    def _seal(self, state: Any, binding: Binding, state_json: bytes | None = None) -> str:
        """Mint a token for ``state``: checked by :meth:`seal_bound`, or an ``EncodedState``.

        ``state_json`` is the state's JSON when :meth:`seal_bound` has written it
        already; otherwise the state is written with the other claims, in one pass.
        """
        if binding.arguments is None and self._require_arguments and binding.kind != "resource":
            raise ValueError(
                "this sealer requires the argument binding (require_arguments=True): pass the "
                "request's arguments to seal (an empty dict when it has none)"
            )
        digest = binding.digest
        generation = self._keys if self._read_keys is None else self._current()
        key = generation.signing_key or generation.ring.signing_key  # KeyringError for a verify-only ring
        payload = claims.encode(
            issuer=self._issuer,
            user=binding.user,
            aud=binding.aud,
            iat=int(self._clock()),
            ttl=self._ttl,
            jti=_b64.encode(self._entropy(_JTI_BYTES)),
            state=state,
            args_sha256=digest,
            state_json=state_json,
        )
        header = generation.minting_header
        encrypted = isinstance(key, A256GCMKey)
        size = jwe.size(header, len(payload)) if encrypted else jws.size(header, len(payload), key.alg)
        if size > self._max_token_bytes:
            raise ValueError(
                f"the sealed state would be {size} bytes, over the cap of "
                f"{self._max_token_bytes}; keep less in requestState"
            )
        if isinstance(key, A256GCMKey):
            token = jwe.encrypt(key, header, payload)
        else:
            token = jws.sign(key, header, payload)
        if self._metrics is not None:
            record(self._metrics, "seal", method=binding.method)
        return token

    def open(
        self,
        token: str,
        *,
        user: str,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        consume: bool = False,
        require_arguments: bool | None = None,
    ) -> Any:
        """Verify a ``requestState`` token and return the state it carries.

        ``user``, the target and ``arguments`` are those of the retry being
        served; the token must have been sealed for the same ones, by a key in the
        ring, within its lifetime. With ``consume=True`` the token is also
        redeemed in the sealer's replay store, after every other check, so it
        opens at most once (``replayed`` the second time, ``store_unavailable`` if
        the store cannot answer). ``require_arguments`` overrides the sealer's
        setting for this call (``None`` keeps it). Every failure raises
        :class:`~mrtr_state.InvalidRequestState` with a reason code; no other
        exception escapes for any token.

        Raises:
            ValueError: ``consume=True`` on a sealer without a replay store.
            TypeError: ``consume=True`` with an async store (use :meth:`open_async`).
        """
        store = self._store_for(consume, awaiting=False) if consume else None  # configuration errors first
        kind, name = given(tool, prompt, resource)  # Binding.of, without its keyword layer
        binding = Binding(user, kind, name, arguments)
        opened = self._open(token, binding, store, require_arguments)
        return opened.claims["state"]

    def open_bound(
        self, token: str, binding: Binding, *, consume: bool = False, require_arguments: bool | None = None
    ) -> Any:
        """:meth:`open` for a request already made a :class:`~mrtr_state.binding.Binding`.

        The argument digest is computed only if the token carries one, and kept
        in the binding for a :meth:`seal_bound` of the same request. Raises as
        :meth:`open`.
        """
        opened = self._open(token, binding, self._store_for(consume, awaiting=False), require_arguments)
        return opened.claims["state"]

    def _open(
        self,
        token: str,
        binding: Binding,
        store: ReplayStore | AsyncReplayStore | None,
        require_arguments: bool | None,
    ) -> jws.Payload:
        """Steps 1 to 20, counted: a valid token's claims and their text, or :class:`InvalidRequestState`."""
        try:
            payload = self._decode(token)
            valid = self._validate(payload.claims, binding, require_arguments)
            if store is not None:
                # Profile 5, step 20: single use, last, so an invalid token never costs a store write.
                key, expires_at = self._redemption(valid)
                try:
                    first = store.redeem(key, expires_at=expires_at)
                except Exception as exc:  # a faulty store fails closed, never open
                    raise _unavailable(exc) from None
                if inspect.isawaitable(first):  # an async redeem the constructor could not see
                    if inspect.iscoroutine(first):
                        first.close()
                    raise TypeError(_ASYNC_STORE_IN_SYNC_OPEN)
                _settle(first)
        except InvalidRequestState as refusal:
            self._count_refusal(binding, refusal)
            raise
        if self._metrics is not None:
            self._count_acceptance(binding, store is not None)
        return payload

    async def open_async(
        self,
        token: str,
        *,
        user: str,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        consume: bool = False,
        require_arguments: bool | None = None,
    ) -> Any:
        """:meth:`open` for async servers: the same checks, then an awaited redemption.

        With ``consume=True`` and an :class:`~mrtr_state.replay.AsyncReplayStore`
        (such as :class:`~mrtr_state.replay.replay_redis.AsyncRedisReplayStore`) the
        redemption is awaited; a synchronous store is called directly (fine for
        :class:`~mrtr_state.MemoryReplayStore`, which never blocks on I/O).
        Verification itself is CPU work of microseconds and is not offloaded.
        """
        store = self._store_for(consume, awaiting=True)  # configuration errors first, as always
        kind, name = given(tool, prompt, resource)  # Binding.of, without its keyword layer
        binding = Binding(user, kind, name, arguments)
        opened = await self._open_async(token, binding, store, require_arguments)
        return opened.claims["state"]

    async def open_bound_async(
        self, token: str, binding: Binding, *, consume: bool = False, require_arguments: bool | None = None
    ) -> Any:
        """:meth:`open_async` for a request already made a :class:`~mrtr_state.binding.Binding`."""
        opened = await self._open_async(
            token, binding, self._store_for(consume, awaiting=True), require_arguments
        )
        return opened.claims["state"]

    async def open_bound_text_async(
        self, token: str, binding: Binding, *, consume: bool = False, require_arguments: bool | None = None
    ) -> tuple[Any, bytes | None]:
        """:meth:`open_bound_async`, with the state's compact JSON text: ``(state, text)``.

        ``text`` is ``None`` for a string state, and otherwise byte for byte what
        writing the state as compact UTF-8 JSON gives: the state's text in the
        verified payload when it is that already (as this library seals it), so
        a caller that needs the state as text (the MCP boundary's ``requestState``)
        does not write it again. Raises as :meth:`open`.
        """
        opened = await self._open_async(
            token, binding, self._store_for(consume, awaiting=True), require_arguments, vouch=True
        )
        state = opened.claims["state"]
        if type(state) is str:
            return state, None
        return state, claims.state_json(
            opened.claims, opened.text, written=opened.written, numbers_as_written=opened.numbers_as_written
        )

    async def _open_async(
        self,
        token: str,
        binding: Binding,
        store: ReplayStore | AsyncReplayStore | None,
        require_arguments: bool | None,
        *,
        vouch: bool = False,
    ) -> jws.Payload:
        """:meth:`_open` with an awaited redemption and an awaited look for new keys.

        With ``vouch``, the payload says whether its text is as writing gives it
        (:func:`~mrtr_state.token.jws.read_payload`).
        """
        try:
            payload = await self._decode_async(token, vouch=vouch)
            valid = self._validate(payload.claims, binding, require_arguments)
            if store is not None:
                # Profile 5, step 20: single use, awaited, after every other step.
                key, expires_at = self._redemption(valid)
                try:
                    answer = store.redeem(key, expires_at=expires_at)
                    first = await answer if inspect.isawaitable(answer) else answer
                except Exception as exc:  # a faulty store fails closed, never open
                    raise _unavailable(exc) from None
                _settle(first)
        except InvalidRequestState as refusal:
            self._count_refusal(binding, refusal)
            raise
        if self._metrics is not None:
            self._count_acceptance(binding, store is not None)
        return payload

    def _store_for(self, consume: bool, *, awaiting: bool) -> ReplayStore | AsyncReplayStore | None:
        """The store to redeem in, or ``None``; configuration errors before any work."""
        if not consume:
            return None
        store = self._replay_store
        if store is None:
            raise ValueError("open(consume=True) needs a StateSealer made with a replay_store")
        if self._replay_async and not awaiting:
            raise TypeError(_ASYNC_STORE_IN_SYNC_OPEN)
        return store

    def _decode(self, token: str) -> jws.Payload:
        """Steps 1 to 11 with the current keys; once more after ``unknown_key`` if new keys came."""
        generation = self._keys if self._read_keys is None else self._current()
        try:
            return self._decode_with(generation, token)
        except InvalidRequestState as refusal:
            # Step 8 refuses before any store is touched, so a second attempt is
            # the first one that can have an effect; the provider's cooldown
            # bounds how often it looks.
            if refusal.reason != "unknown_key" or self._read_keys is None:
                raise
            try:
                changed = refresh_for_unknown_key(self._source)
            except Exception:  # a provider that raises must not turn a refusal into a crash
                _logger.exception("the key source raised while looking for a new key")
                changed = False
            if not changed and self._current() is generation:
                raise
        return self._decode_with(self._current(), token)

    async def _decode_async(self, token: str, *, vouch: bool = False) -> jws.Payload:
        """:meth:`_decode`: the provider looks for new keys without blocking the event loop."""
        generation = self._keys if self._read_keys is None else self._current()
        try:
            return self._decode_with(generation, token, vouch=vouch)
        except InvalidRequestState as refusal:
            if refusal.reason != "unknown_key" or self._read_keys is None:
                raise
            try:
                changed = await refresh_for_unknown_key_async(self._source)
            except Exception:  # a provider that raises must not turn a refusal into a crash
                _logger.exception("the key source raised while looking for a new key")
                changed = False
            if not changed and self._current() is generation:
                raise
        return self._decode_with(self._current(), token, vouch=vouch)

    def _decode_with(self, generation: _Generation, token: str, *, vouch: bool = False) -> jws.Payload:
        """Steps 1 to 11 under one generation of keys: the claims and their text, by the token's form."""
        # The common signed token first: no count of its dots, no pass over each of its bytes.
        signed = jws.verify_known(token, self._max_token_bytes, generation.signed_headers, vouch=vouch)
        if signed is not None:
            return signed
        encrypted = jwe.open_known(token, self._max_token_bytes, generation.encrypted_headers, vouch=vouch)
        if encrypted is not None:
            return encrypted
        if jwe.is_encrypted(token, self._max_token_bytes):
            return jwe.open_claims(
                token, self._max_token_bytes, generation.encrypted_headers, generation.ring, vouch=vouch
            )
        return jws.verify(
            token, self._max_token_bytes, generation.signed_headers, generation.ring, vouch=vouch
        )

    def _validate(
        self, decoded: dict[str, Any], binding: Binding, require_arguments: bool | None
    ) -> dict[str, Any]:
        """Steps 12 to 19 on decoded claims: return them, or raise :class:`InvalidRequestState`."""
        claims.check(decoded, now=int(self._clock()), leeway=self._leeway, max_lifetime=self._max_lifetime)
        required = self._require_arguments if require_arguments is None else require_arguments
        claims.check_bindings(
            decoded,
            issuer=self._issuer,
            binding=binding,
            # A resource read has no arguments (profile, 3.4): nothing to require.
            require_arguments=required and binding.kind != "resource",
        )
        return decoded

    def _count_refusal(self, binding: Binding, refusal: InvalidRequestState) -> None:
        """Report a refusal to the metrics: the target method and the reason code, never a value."""
        metrics = self._metrics
        if metrics is None:
            return
        method = binding.method
        record(metrics, "open", method=method, outcome="refused")
        record(metrics, "refusal", method=method, reason=refusal.reason)
        if refusal.reason == "store_unavailable":
            record(metrics, "store_outage", method=method)

    def _count_acceptance(self, binding: Binding, redeemed: bool) -> None:
        """Report an accepted token (and its redemption) to the metrics."""
        method = binding.method
        record(self._metrics, "open", method=method, outcome="accepted")
        if redeemed:
            record(self._metrics, "redemption", method=method)

    def _redemption(self, valid: dict[str, Any]) -> tuple[str, int]:
        """Step 20's store key and retention for a verified token.

        The key is the issuer-scoped ``jti``. The retention runs to ``exp`` plus
        twice the leeway: a replica accepts the token until its own clock reads
        ``exp + leeway``, and the leeway also bounds how far that clock may run
        behind the clock of the replica that redeemed it and measures the
        retention. With the default leeway of 0 this is ``exp``.
        """
        return replay_key(valid["iss"], valid["jti"]), valid["exp"] + 2 * self._leeway


_ASYNC_STORE_IN_SYNC_OPEN: Final = (
    "this sealer's replay store is asynchronous; redeem with await sealer.open_async(..., consume=True)"
)


def _unavailable(exc: Exception) -> InvalidRequestState:
    """The refusal for a store that raised: its own message if it is a store error."""
    if isinstance(exc, ReplayStoreError):
        return InvalidRequestState("store_unavailable", str(exc))
    return InvalidRequestState("store_unavailable", f"the replay store raised {type(exc).__name__}")


def _settle(first: object) -> None:
    """Step 20's verdict: ``True`` wins, ``False`` is a replay, anything else is unknown."""
    if first is True:
        return
    if first is False:
        raise InvalidRequestState("replayed", "this token has already been redeemed")
    raise InvalidRequestState(
        "store_unavailable", f"the replay store answered {type(first).__name__}, not a bool"
    )
