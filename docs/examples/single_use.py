from mrtr_state import InvalidRequestState, Keyring, MemoryReplayStore, StateSealer

ring = Keyring.from_env()
sealer = StateSealer(ring, issuer="https://files.example.com", replay_store=MemoryReplayStore())

args = {"path": "/reports/q3.pdf"}
token = sealer.seal({"step": "confirm"}, user="alice", tool="delete_file", arguments=args)
state = sealer.open(token, user="alice", tool="delete_file", arguments=args, consume=True)
try:
    sealer.open(token, user="alice", tool="delete_file", arguments=args, consume=True)
except InvalidRequestState as refusal:
    print(refusal.reason)                  # replayed: the second presentation of one state
