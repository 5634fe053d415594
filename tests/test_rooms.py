"""The rooms (docs/architecture.md): one import path for each public name, decided before a release."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

#: The flat modules that re-exported a room's names for import paths older than the rooms (issue 33: they
#: served no published user, so they went before the first release), and the room that holds each name.
GONE = {
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


@pytest.mark.parametrize(("package", "module"), sorted(SAME_NAME.items()))
def test_a_room_package_gives_the_same_objects_as_its_module(package: str, module: str) -> None:
    outer, inner = importlib.import_module(package), importlib.import_module(module)
    assert sorted(outer.__all__) == sorted(inner.__all__)
    for name in inner.__all__:
        assert getattr(outer, name) is getattr(inner, name), f"{package}.{name} is not {module}.{name}"


@pytest.mark.parametrize(("flat", "room"), sorted(GONE.items()))
def test_a_public_name_has_one_import_path_its_room(flat: str, room: str) -> None:
    assert importlib.import_module(room).__all__
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(flat)


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
