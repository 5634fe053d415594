import { RemoteJwks, StateSealer } from "mrtr-state";

// A verify-only replica: the minting replicas' public keys, fetched once here and refreshed as they change.
const jwks = await RemoteJwks.load("https://tools.example.com/.well-known/mrtr-state-jwks.json", {
  refreshInterval: 300, // seconds between scheduled fetches
  cooldown: 30, // at most one fetch per 30 s for tokens naming a kid it does not hold
  timeout: 5, // the whole fetch, headers and body
});
export const verifier = new StateSealer(jwks, { issuer: "https://tools.example.com" });
