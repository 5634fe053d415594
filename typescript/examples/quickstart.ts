import { InvalidRequestState, Keyring, StateSealer } from "mrtr-state";

const ring = Keyring.fromEnv();            // MRTR_STATE_KEYS: a JWKS, or an HS256 secret
// On Workers (no process.env): Keyring.fromEnv("MRTR_STATE_KEYS", { env }) with the Worker's env.
const sealer = new StateSealer(ring, { issuer: "https://files.example.com", ttl: 600, clock: () => Date.now() / 1000 });

// The tool needs the person's yes: answer input_required with a sealed state.
const token = await sealer.seal({ step: "confirm" }, { user: "alice", tool: "deploy", arguments: { env: "prod" } });

// The retry: open it with the retry's own user, tool and arguments.
try {
  const state = await sealer.open(token, { user: "alice", tool: "deploy", arguments: { env: "prod" } });
  console.log(state);                      // { step: "confirm" }
  await sealer.open(token, { user: "bob", tool: "deploy", arguments: { env: "prod" } });
} catch (error) {
  if (!(error instanceof InvalidRequestState)) throw error;
  console.log(error.reason);               // a stable code: "expired", "wrong_user", "bad_signature", ...
  console.log(error.message);              // a fixed sentence, safe to show the client
}
