"""``mrtr-state conformance``: the runner, its classes, and the faults it must catch."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mrtr_state.cli import _conformance
from mrtr_state.conformance import Case, judge, load_cases, mutate, runner
from mrtr_state.conformance.judge import same_json

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "spec" / "vectors"
DOUBLE = [sys.executable, str(Path(__file__).with_name("broken_verifier.py"))]
KEYS = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))


#: The reference implementation answering the runner's protocol on standard input and output.
SERVE = (sys.executable, "-m", "mrtr_state", "conformance", "--serve")
#: The runner without its cases, as a user types it (``--vectors`` or ``--help`` follow).
RUNNER = (sys.executable, "-m", "mrtr_state", "conformance")


def conformance(*args: str) -> subprocess.CompletedProcess[str]:
    """The runner on the spec's vectors with ``args`` (options, then ``--`` and the command to test)."""
    return subprocess.run(
        [*RUNNER, "--vectors", str(VECTORS), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def caught(*fault: str, options: tuple[str, ...] = ("--mutations", "0")) -> str:
    """Run the broken double with ``fault`` through the runner, which must fail it (exit 1); its report."""
    run = conformance(*options, "--", *DOUBLE, *fault)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr
    return run.stdout


def serve(lines: list[str]) -> list[dict[str, object]]:
    """Every answer ``--serve`` writes to ``lines``, one for each (the run must exit 0)."""
    run = subprocess.run(
        SERVE,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(answers) == len(lines), run.stdout
    return answers


def test_the_reference_implementation_reaches_the_strict_class_through_the_protocol() -> None:
    run = conformance("--mutations", "300", "--seed", "1", "--", *SERVE)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "class reached: strict" in run.stdout
    assert run.stdout.rstrip().endswith(" 0 failed")


def test_a_verifier_that_skips_the_expiry_step_is_caught_and_the_step_named() -> None:
    report = caught("skip-expiry", options=("--mutations", "0", "--class", "baseline"))
    assert "failed rule: expired" in report
    assert "class reached: none" in report
    assert "(breaks the baseline class)" in report


def test_a_verifier_with_wrong_reason_codes_is_baseline_but_not_strict() -> None:
    strict = caught("swap-reasons")
    assert "failed rule: wrong_user" in strict
    assert "class reached: baseline" in strict
    baseline = conformance("--mutations", "0", "--class", "baseline", "--", *DOUBLE, "swap-reasons")
    assert baseline.returncode == 0
    # Issue 25: what the baseline class allows is counted as allowed, once per rule, never a FAIL line.
    assert "FAIL" not in baseline.stdout
    assert "allowed rule: wrong_user (" in baseline.stdout
    assert "failed rule:" not in baseline.stdout
    allowed = sum(strict.count(f"FAIL {case}") for case in ("tokens/", "encrypted/", "arguments/", "keys/"))
    assert allowed > 0
    assert baseline.stdout.rstrip().endswith(f" {allowed} allowed, 0 failed")


def test_a_verifier_that_loads_small_order_keys_fails_the_strict_class() -> None:
    if not (VECTORS / "invalid-keys.json").exists():
        pytest.fail("spec/vectors/invalid-keys.json is missing")
    assert "failed rule: refuses a key at load" in caught("accept-small-order-keys")


def test_an_implementation_that_stops_answering_fails_the_cases_it_left() -> None:
    report = caught("die-after", "5")
    assert "got no answer" in report
    assert "class reached: none" in report


def test_a_crashed_implementation_is_reported_once_with_its_exit_status_and_stderr() -> None:
    # Issue 24, item 11: one sentence, not one "got no answer" per case spread over many rules.
    report = caught("die-after", "5", options=("--mutations", "50", "--seed", "1"))
    assert report.count("got no answer") == 1
    assert "the process exited with status 3 after answering 5 of " in report
    assert "  | broken_verifier: giving up after 5 requests" in report
    rules = [line for line in report.splitlines() if line.startswith("failed rule:")]
    assert len(rules) == 1
    assert rules[0].startswith("failed rule: no answer (")


def test_an_implementation_that_hangs_is_stopped_at_the_timeout_and_reported_once() -> None:
    report = caught("hang-after", "3", options=("--mutations", "0", "--timeout", "4"))
    assert report.count("got no answer") == 1
    assert "it ran past the timeout of 4 s and was stopped after answering 3 of " in report
    assert "  | broken_verifier: giving up after 3 requests" in report


def test_a_verifier_that_refuses_every_key_fails_strict_and_is_told_why() -> None:
    # Issue 24, item 10: refusing every key used to pass every "refuses a key at load" case.
    report = caught("refuse-every-key")
    assert "FAIL keys/hs256: expected loaded, got refused at load" in report
    assert "the implementation refused every valid key of keys.json" in report
    assert "failed rule: loads a valid key (7 cases)" in report
    assert "class reached: baseline" in report


def test_a_verifier_that_loads_a_ring_key_by_key_misses_the_shared_secret_rule() -> None:
    report = caught("load-rings-key-by-key")
    assert (
        "FAIL invalid-keys/shared-secret-a256gcm-then-hs256: expected refused at load, got loaded" in report
    )
    # The six shared-secret rings of issue 24, the four Ed25519 d/x rings and the empty ring of issue 32.
    assert "failed rule: refuses a key at load (11 cases)" in report
    assert "refused every valid key" not in report


def test_a_verifier_that_reads_null_arguments_as_empty_fails_and_the_rules_are_named() -> None:
    # Issue 24, D2: "arguments": null is present and not an object, so unbindable.
    report = caught("null-arguments-are-empty")
    assert "FAIL tokens/wrong-request-arguments-null: expected refused: wrong_request, got valid" in report
    assert "FAIL arguments/not-an-object-null: expected unbindable, got digest" in report
    assert "failed rule: wrong_request (1 cases)" in report
    assert "failed rule: unbindable arguments (1 cases)" in report


def test_a_verifier_that_judges_numbers_by_the_exact_decimal_fails() -> None:
    # Issue 24, D1: 9007199254740991.5 is the double 2**53, so unbindable.
    report = caught("exact-decimal")
    assert "FAIL arguments/fraction-rounds-to-2-53: expected unbindable, got digest" in report
    assert "failed rule: unbindable arguments (1 cases)" in report


#: Issue 32: the three blind spots and the nine doubles of the round's key and argument rules, each with the
#: vectors that catch it and the rule the report names.
ISSUE_32_DOUBLES = {
    "trim-kid": (
        ["kid-leading-space", "kid-trailing-space", "kid-leading-space-eddsa", "kid-trailing-space-a256gcm"],
        "refuses a key at load",
    ),
    "weak-secret-needs-alg": (
        [
            f"weak-secret-no-alg-{name}"
            for name in ("all-zero", "one-byte-repeated", "pattern-of-3", "pattern-of-8")
        ],
        "refuses a key at load",
    ),
    "null-kid-absent-on-ed25519": (
        ["kid-null-eddsa-public", "kid-null-eddsa-private"],
        "refuses a key at load",
    ),
    "accept-empty-ring": (["empty-ring"], "refuses a key at load"),
    "first-member-wins": (["duplicate-member-last-wins"], "argument digest"),
    "no-nesting-limit": (["nested-257"], "unbindable arguments"),
    "accept-shared-eddsa-secret": (
        [f"shared-secret-{form}-eddsa-{part}" for form in ("a256gcm", "hs256") for part in ("x", "d")],
        "refuses a key at load",
    ),
    "accept-short-secret": (["short-secret-hs256", "short-secret-no-alg"], "refuses a key at load"),
    "accept-padded-base64": (
        ["padded-k-hs256", "padded-k-a256gcm", "padded-x-eddsa", "padded-d-eddsa"],
        "refuses a key at load",
    ),
    "ignore-use": (
        ["use-enc-hs256", "use-enc-oct-without-alg", "use-sig-a256gcm", "use-enc-eddsa"],
        "refuses a key at load",
    ),
    "null-alg-as-absent": (["alg-null-oct", "alg-null-eddsa"], "refuses a key at load"),
    "null-use-as-absent": (["use-null-hs256", "use-null-eddsa", "use-null-a256gcm"], "refuses a key at load"),
}
#: The doubles of a key rule: the generated key mutations alone must catch each of them too.
KEY_RULE_DOUBLES = [fault for fault, (_, rule) in ISSUE_32_DOUBLES.items() if rule == "refuses a key at load"]


@pytest.mark.parametrize("fault", ISSUE_32_DOUBLES)
def test_each_double_of_issue_32_fails_on_the_fixed_vectors(fault: str) -> None:
    vectors, rule = ISSUE_32_DOUBLES[fault]
    report = caught(fault)
    for vector in vectors:
        stem = "arguments" if rule != "refuses a key at load" else "invalid-keys"
        assert f"FAIL {stem}/{vector}: expected " in report, vector
    assert f"failed rule: {rule} (" in report
    assert "class reached: baseline" in report  # no keyless token gets through: these are strict rules


@pytest.mark.parametrize("fault", KEY_RULE_DOUBLES)
def test_each_key_rule_double_fails_on_generated_mutations_alone(fault: str) -> None:
    # --mutations-only sends no vector: the key mutations (a fifth of 2,000) must find the broken rule.
    report = caught(fault, options=("--mutations-only", "--mutations", "2000", "--seed", "1"))
    failures = [line for line in report.splitlines() if line.startswith("FAIL ")]
    assert failures
    assert all(line.startswith("FAIL mutation/") and "-key-" in line for line in failures), failures[:5]
    assert "failed rule: refuses a key at load (" in report


def test_mutations_only_sends_no_vector_and_needs_mutations() -> None:
    run = conformance("--mutations-only", "--mutations", "40", "--seed", "2", "--", *SERVE)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert run.stdout.rstrip().endswith("40 passed, 0 failed")
    none = conformance("--mutations-only", "--mutations", "0", "--", *SERVE)
    assert none.returncode == 2
    assert "--mutations-only needs --mutations N" in none.stderr


def test_a_fifth_of_the_mutations_are_key_mutations_and_a_signed_run_gets_no_encryption_key() -> None:
    cases = load_cases(VECTORS)
    made = mutate(cases, KEYS, count=2000, seed=11)
    keyed = [case for case in made if case.origin == "key"]
    assert 300 <= len(keyed) <= 500
    assert {case.op for case in keyed} == {"load_key"}
    assert any(case.expected["loaded"] for case in keyed)
    assert any(not case.expected["loaded"] for case in keyed)
    families = {case.id.split("-key-")[1].split("-of-")[0] for case in keyed}
    assert families == {"kid", "alg", "use", "secret", "encoding", "shared", "ring"}
    signed = [case for case in cases if case.form in (None, "signed")]
    for case in mutate(signed, KEYS, count=1000, seed=11):
        if case.origin == "key":
            assert "A256GCM" not in json.dumps(case.request), case.id


def test_a_report_row_replays_its_case_and_one_case_runs_alone(tmp_path: Path) -> None:
    # Issue 24, item 12: a failing row holds the token, the request and the ring, and how to re-run it.
    report = tmp_path / "report.jsonl"
    caught("swap-reasons", options=("--mutations", "20", "--seed", "4", "--report", str(report)))
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    failing = [row for row in rows if not row["strict"]]
    assert failing
    row = next(row for row in failing if row["id"] == "tokens/wrong-user")
    assert row["request"]["op"] == "verify"
    assert row["request"]["token"].count(".") == 2
    assert row["request"]["keys"] == "keys.json#verifier_jwks"
    assert row["request"]["user"] != "alice"
    assert row["answer"] == {"valid": False, "reason": "wrong_tool"}
    assert "--case tokens/wrong-user" in row["rerun"]
    assert "--seed 4 --mutations 20" in row["rerun"]
    loads = next(row for row in rows if row["id"] == "keys/a256gcm")
    assert loads["request"] == {"op": "load_key", "jwk": "keys.json#a256gcm"}
    again = caught(
        "swap-reasons", options=("--mutations", "20", "--seed", "4", "--case", "tokens/wrong-user")
    )
    assert "FAIL tokens/wrong-user: expected refused: wrong_user, got refused: wrong_tool" in again
    assert again.rstrip().endswith("0 passed, 1 failed")
    mutation = next(row["id"] for row in rows if row["id"].startswith("mutation/"))
    one = conformance("--mutations", "20", "--seed", "4", "--case", mutation, "--", *DOUBLE, "swap-reasons")
    assert one.stdout.rstrip().endswith("1 passed, 0 failed") or "FAIL " + mutation in one.stdout
    unknown = conformance("--case", "tokens/no-such-case", "--", *DOUBLE, "swap-reasons")
    assert unknown.returncode == 2
    assert "no case 'tokens/no-such-case'" in unknown.stderr


def test_a_command_that_cannot_start_is_bad_input_in_one_line() -> None:
    run = conformance("--", "/nonexistent/verifier")
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert "cannot start" in run.stderr


def test_a_run_without_a_command_is_a_usage_mistake() -> None:
    run = conformance()
    assert run.returncode == 2
    assert "after '--'" in run.stderr


def test_help_documents_the_protocol_and_the_classes() -> None:
    run = subprocess.run(
        [*RUNNER, "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for words in (
        '"op": "verify"',
        '"op": "digest"',
        '"op": "load_key"',
        '"unsupported": true',
        "strict",
        "baseline",
    ):
        assert words in run.stdout


def test_serve_answers_a_line_that_is_not_json_with_an_error_and_goes_on() -> None:
    answers = serve(["not json", '{"id": "a", "op": "digest", "arguments": {}}', '{"id": "b", "op": "sing"}'])
    assert answers[0] == {"id": None, "error": "a request line is not a JSON object"}
    assert answers[1] == {"id": "a", "digest": "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"}
    assert answers[2] == {"id": "b", "unsupported": True}


GOOD_LINE = '{"id": "after", "op": "digest", "arguments": {}}'
GOOD_ANSWER = {"id": "after", "digest": "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"}


def valid_verify_request() -> dict[str, object]:
    case = next(c for c in load_cases(VECTORS) if c.request["op"] == "verify" and c.expected["valid"])
    return dict(case.request)


def test_serve_answers_a_line_nested_too_deep_to_read_with_an_error_and_goes_on() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    deep_arguments = '{"id": "d", "op": "digest", "arguments": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001
    answers = serve([deep, deep_arguments, GOOD_LINE])
    assert answers[0] == {"id": None, "error": "a request line is not a JSON object"}
    assert answers[1] == {"id": None, "error": "a request line is not a JSON object"}
    assert answers[2] == GOOD_ANSWER


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_serve_answers_a_line_with_nan_or_infinity_with_an_error_and_goes_on(literal: str) -> None:
    """``NaN`` and ``Infinity`` are not JSON (RFC 8259): a line holding one is a bad line, wherever it is."""
    request = {**valid_verify_request(), "id": "nan"}
    clock = json.dumps(request).replace(f'"now": {json.dumps(request["now"])}', f'"now": {literal}')
    assert f'"now": {literal}' in clock
    lines = [
        clock,
        '{"id": "d", "op": "digest", "arguments": {"a": ' + literal + "}}",
        '{"id": ' + literal + ', "op": "digest", "arguments": {}}',
        GOOD_LINE,
    ]
    answers = serve(lines)
    assert answers[:3] == [{"id": None, "error": "a request line is not a JSON object"}] * 3
    assert answers[3] == GOOD_ANSWER


def test_serve_answers_a_clock_too_large_for_a_number_with_an_error_and_goes_on() -> None:
    request = {**valid_verify_request(), "id": "inf"}
    line = json.dumps(request).replace(f'"now": {json.dumps(request["now"])}', '"now": 1e400')
    assert '"now": 1e400' in line
    answers = serve([line, json.dumps({**valid_verify_request(), "id": "ok"}), GOOD_LINE])
    assert answers[0]["id"] == "inf"
    assert set(answers[0]) == {"id", "error"}
    assert answers[1]["id"] == "ok"
    assert answers[1]["valid"] is True
    assert answers[2] == GOOD_ANSWER


def test_serve_answers_an_unforeseen_failure_with_an_error_naming_no_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(request: object) -> dict[str, object]:
        raise ZeroDivisionError("the secret key was sk-do-not-show")

    monkeypatch.setattr(_conformance, "answer", broken)
    line = _conformance._reply('{"id": 7, "op": "digest", "arguments": {}}')
    assert json.loads(line) == {"id": 7, "error": "the request could not be answered (ZeroDivisionError)"}
    assert "sk-do-not-show" not in line


def test_serve_answers_a_verify_whose_ring_does_not_load_with_an_error_and_an_absent_digest_as_empty() -> (
    None
):
    shared = KEYS["a256gcm"]["k"]
    ring = {"keys": [KEYS["a256gcm"], {"kty": "oct", "k": shared, "kid": "sig"}]}
    request = {"op": "verify", "keys": ring, "token": "x", "issuer": "i", "user": "u", "tool": "t", "now": 1}
    refused, digest = serve([json.dumps({"id": "a", **request}), '{"id": "b", "op": "digest"}'])
    assert set(refused) == {"id", "error"}
    assert "ring does not load" in refused["error"]
    assert shared not in refused["error"]
    assert digest == {"id": "b", "digest": "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"}


def test_mutations_are_reproducible_from_their_seed() -> None:
    cases = load_cases(VECTORS)
    first = mutate(cases, KEYS, count=50, seed=9)
    again = mutate(cases, KEYS, count=50, seed=9)
    assert [c.request for c in first] == [c.request for c in again]
    assert {c.origin for c in mutate(cases, KEYS, count=400, seed=3)} == {
        "flip",
        "reencode",
        "context",
        "resign",
        "key",
    }


def test_only_keyless_refusals_bind_the_baseline_class() -> None:
    keyless = Case("k", {"op": "verify"}, {"valid": False, "reason": "bad_signature"}, keyless=True)
    keyed = Case("m", {"op": "verify"}, {"valid": False, "reason": "malformed"})
    reencoded = Case(
        "r", {"op": "verify"}, {"valid": False, "reason": "malformed"}, keyless=True, reencoding=True
    )
    accepted = {"valid": True, "state": 1}
    report = judge([keyless, keyed, reencoded], [{"valid": False, "reason": "x"}, accepted, accepted])
    assert report.reached == "baseline"
    assert judge([keyless], [accepted]).reached == "none"


def test_an_error_answer_is_reported_with_its_words_not_as_a_digest() -> None:
    case = Case("c", {"op": "verify"}, {"valid": True, "state": 1})
    result = judge([case], [{"error": '"arguments" must be a JSON object'}]).results[0]
    assert result.got == 'error: "arguments" must be a JSON object'


def test_states_compare_as_json_values() -> None:
    assert same_json({"a": [1, 2.0, -0.0]}, {"a": [1.0, 2, 0]})
    assert not same_json(True, 1)
    assert not same_json({"a": None}, {"a": 0})
    assert not same_json("1", 1)


def test_without_vectors_a_clone_reads_its_own_spec_vectors_from_any_directory(tmp_path: Path) -> None:
    # Issue 25: the default no longer depends on the working directory. An installed wheel reads its
    # packaged copy (tests/release/test_artifacts.py); this editable install of the clone, spec/vectors.
    assert _conformance.default_vectors() == VECTORS
    run = subprocess.run(
        [*RUNNER, "--mutations", "0", "--quiet", "--", *SERVE],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    cases = len(load_cases(VECTORS))
    assert run.stdout.rstrip().endswith(f"{cases} passed, 0 failed")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_an_answer_line_with_nan_or_infinity_is_not_json_to_the_runner(literal: str) -> None:
    """An implementation's answers are JSON too: a line holding ``NaN`` ends its answers as a bad line."""
    cases = load_cases(VECTORS)[:2]
    lines = f'{{"id": "0", "verdict": "refused"}}\n{{"id": "1", "digest": {literal}}}\n'.encode()
    answers, count, problem = runner._read(io.BytesIO(lines), cases)
    assert (count, problem) == (1, "a line that is not JSON")
    assert answers[0] == {"verdict": "refused"}
    assert answers[1] is None


def test_an_answer_with_a_null_or_absent_id_stands_for_the_request_in_its_place() -> None:
    # The protocol answers a line the implementation cannot read with {"id": null, "error": ...}; the run goes
    # on (a baseline verifier that could not read arguments nested 256 levels used to lose every later case).
    cases = load_cases(VECTORS)[:4]
    written = [
        '{"id": null, "error": "unreadable"}',
        '{"valid": false}',
        '{"id": "2", "loaded": true}',
        '{"id": "9"}',
    ]
    lines = "".join(line + "\n" for line in written).encode()
    answers, count, problem = runner._read(io.BytesIO(lines), cases)
    assert (count, problem) == (3, "an answer whose id is not '3' (answers go in request order)")
    assert answers[:3] == [{"error": "unreadable"}, {"valid": False}, {"loaded": True}]
    assert judge(cases[:1], answers[:1]).results[0].got == "error: unreadable"
