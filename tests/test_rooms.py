"""The rooms (docs/architecture.md) moved modules; every import path users were given still works."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

#: The import paths README.md, docs/ and examples/ give, and the room module each one re-exports.
THIN = {
    "mrtr_state.replay_redis": "mrtr_state.replay.replay_redis",
    "mrtr_state.remote_jwks": "mrtr_state.keys.remote_jwks",
    "mrtr_state.reloading": "mrtr_state.keys.reloading",
    "mrtr_state.key_source": "mrtr_state.keys.key_source",
    "mrtr_state.canonical": "mrtr_state.binding.canonical",
}
#: A room package named as the module it holds re-exports that module's public names.
SAME_NAME = {
    "mrtr_state.keys": "mrtr_state.keys.keys",
    "mrtr_state.binding": "mrtr_state.binding.binding",
    "mrtr_state.replay": "mrtr_state.replay.replay",
}


@pytest.mark.parametrize(("old", "new"), sorted({**THIN, **SAME_NAME}.items()))
def test_an_old_import_path_gives_the_same_objects_as_the_room(old: str, new: str) -> None:
    before, room = importlib.import_module(old), importlib.import_module(new)
    assert sorted(before.__all__) == sorted(room.__all__)
    for name in room.__all__:
        assert getattr(before, name) is getattr(room, name), f"{old}.{name} is not {new}.{name}"


def test_the_package_loads_no_key_source_or_store_it_does_not_need() -> None:
    """``import mrtr_state`` stays light: the reloading, remote and Redis modules load only when used."""
    code = (
        "import sys, mrtr_state; "
        "print(sorted(m for m in sys.modules if m.endswith(('reloading', 'remote_jwks', 'replay_redis'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_loggers_keep_the_names_logging_was_configured_with() -> None:
    reloading = importlib.import_module("mrtr_state.keys.reloading")
    remote = importlib.import_module("mrtr_state.keys.remote_jwks")
    assert reloading.logger.name == "mrtr_state.reloading"
    assert remote.logger.name == "mrtr_state.remote_jwks"
