from mrtr_state import Keyring, StateSealer
from mrtr_state.metrics import OpenTelemetryMetrics

ring = Keyring.from_env()
sealer = StateSealer(ring, issuer="https://git.example.com", metrics=OpenTelemetryMetrics())
