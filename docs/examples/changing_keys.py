from mrtr_state import StateSealer
from mrtr_state.keys.reloading import ReloadingKeyring
from mrtr_state.keys.remote_jwks import RemoteJWKS

# A replica that mints: the key file (a mounted secret), reread when it changes.
sealer = StateSealer(ReloadingKeyring.from_env(), issuer="https://tools.example.com")

# A replica that only verifies: the public keys of the minting replicas, over HTTPS.
ring = RemoteJWKS.load("https://tools.example.com/.well-known/mrtr-state-jwks.json")
sealer = StateSealer(ring, issuer="https://tools.example.com")
