from mrtr_state import InvalidRequestState, Keyring, StateSealer


def test_a_sealed_state_opens_for_the_same_user_and_tool() -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer="https://files.example.com")
    token = sealer.seal({"step": 1}, user="alice", tool="deploy")
    assert sealer.open(token, user="alice", tool="deploy") == {"step": 1}


def test_another_user_is_refused() -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer="https://files.example.com")
    token = sealer.seal({"step": 1}, user="alice", tool="deploy")
    try:
        sealer.open(token, user="bob", tool="deploy")
    except InvalidRequestState as refusal:
        assert refusal.reason == "wrong_user"
    else:
        raise AssertionError("opened for another user")
