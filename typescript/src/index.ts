/**
 * mrtr-state: signed, user- and tool-bound `requestState` for MCP multi round-trip requests.
 *
 * A stateless MCP server that answers `input_required` keeps what it learned in `requestState`, which
 * travels through the client. This package seals that state as a JWT of a written profile
 * (`spec/profile.md` of the repository): signed with HS256 or EdDSA, bound to the user (`sub`), the
 * target (`aud`) and the request's arguments (`args_sha256`), expiring after 10 minutes, and opened by
 * the profile's strict validation procedure, whose every refusal is an {@link InvalidRequestState} with
 * a reason code. The TypeScript counterpart of the Python library `mrtr_state`: a token minted by either
 * opens, or is refused for the same reason, on the other.
 *
 * Implements rule AGT-18 of the Agent Wranglers agents-as-users playbook
 * (https://agentwranglers.se/playbook/agents-as-users/mcp-servers/signed-request-state, CC BY 4.0).
 */

export { argumentsDigest, bindingProblem, canonicalize, isBindable, UNBINDABLE_NUMBER, UnbindableArguments } from "./binding/canonical.js";
export { InvalidRequestState, isReason, KeyringError, REASONS, type Reason } from "./errors.js";
export {
  checkState,
  dumps,
  isUnsafeIntegerLiteral,
  JsonError,
  parseStrictJson,
  type Json,
  type NumberLiteral,
  type ParsedJson,
  type StrictOptions,
} from "./token/json.js";
export { decodeUnverified, TYP, type JsonObject } from "./token/jws.js";
export { ENCRYPTED_HEADER_PARAMETERS } from "./token/jwe.js";
export {
  ALGORITHMS,
  DEFAULT_KEYS_VARIABLE,
  ENCRYPTION_KEY_BYTES,
  KEY_ALGORITHMS,
  Key,
  Keyring,
  MIN_SECRET_BYTES,
  type Algorithm,
  type SigningAlgorithm,
  type Jwk,
  type Jwks,
} from "./keys/keyring.js";
export { isKeySource, type KeySource, type KeySourceLogger } from "./keys/source.js";
export {
  checkJwksUrl,
  DEFAULT_COOLDOWN,
  DEFAULT_JWKS_MAX_BYTES,
  DEFAULT_JWKS_TIMEOUT,
  DEFAULT_REFRESH_INTERVAL,
  RemoteJwks,
  type RemoteJwksOptions,
} from "./keys/remote-jwks.js";
export { DEFAULT_MAX_ENTRIES, MemoryReplayStore, ReplayStoreError, replayKey, type ReplayStore } from "./replay/store.js";
export {
  DEFAULT_LEEWAY,
  DEFAULT_MAX_LIFETIME,
  DEFAULT_MAX_TOKEN_BYTES,
  DEFAULT_TTL,
  MAX_LEEWAY,
  StateSealer,
  type OpenOptions,
  type SealerOptions,
  type SealOptions,
} from "./sealer.js";
export type { ValidClaims } from "./token/claims.js";
export {
  EVENTS,
  INSTRUMENTS,
  METRICS_SCOPE,
  type MetricAttributes,
  type MetricEvent,
  type StateMetrics,
} from "./metrics/events.js";
export { audience, METHODS, type TargetOptions } from "./binding/target.js";

/** The version of the profile (`spec/profile.md`) this package implements. */
export const PROFILE_VERSION = "1";
