import time

from mrtr_state import InvalidRequestState, Keyring, StateSealer

ring = Keyring.from_env()                  # MRTR_STATE_KEYS: a JWKS, or an HS256 secret
sealer = StateSealer(ring, issuer="https://files.example.com", ttl=600, clock=time.time)

# The tool needs the person's yes: answer input_required with a sealed state.
token = sealer.seal({"step": "confirm"}, user="alice", tool="deploy", arguments={"env": "prod"})

# The retry: open it with the retry's own user, tool and arguments.
state = sealer.open(token, user="alice", tool="deploy", arguments={"env": "prod"})
print(state)                               # {'step': 'confirm'}

# Anything else is refused: here another user presents alice's state.
try:
    sealer.open(token, user="bob", tool="deploy", arguments={"env": "prod"})
except InvalidRequestState as refusal:
    print(refusal.reason)                  # a stable code: "wrong_user" ("expired", "bad_signature", ...)
    print(refusal)                         # a fixed sentence, safe to show the client
