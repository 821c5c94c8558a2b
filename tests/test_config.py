"""The policy config (docs/config.md): validation, hints, aliases, presets, merging, config_id."""

from __future__ import annotations

import json

import pytest

import evalframe as ef
from evalframe._private.config import CONNEXITY_WEIGHTS


def test_defaults():
    cfg = ef.Config()
    assert (cfg.threshold, cfg.borderline, cfg.on_missing, cfg.outcomes) == (
        0.8,
        0.6,
        "skip",
        "gate",
    )
    assert (cfg.attempts.score, cfg.attempts.passed) == ("mean", "all")
    assert (cfg.run_gates.min_mean_score, cfg.run_gates.min_pass_rate) == (0.8, 1.0)
    assert cfg.compare.max_mean_score_drop == 0.05


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        ({"treshold": 0.7}, "did you mean `threshold`"),
        ({"evaluators": {"a": {"wieght": 2}}}, "did you mean `weight`"),
        ({"run_gates": {"min_pass": 1}}, "did you mean `min_pass_rate`"),
        ({"attempts": {"scores": "mean"}}, "did you mean `score`"),
    ],
)
def test_unknown_keys_get_a_did_you_mean_hint(data, hint):
    with pytest.raises(ef.ConfigError) as info:
        ef.config_from_dict(data)
    assert hint in str(info.value)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    "data",
    [
        {"threshold": 1.5},
        {"on_missing": "drop"},
        {"evaluators": {"a": {"weight": -1}}},
        {"evaluators": {}},
        {"evaluators": {"g": {"aggregator": "threshold"}}},
        {"evaluators": {"g": {"children": {"a": {}}, "required_children": ["b"]}}},
        {"evaluators": {"a": {"score_ranges": {"5-0": "bad"}}}},
        {"required_children": ["x"], "evaluators": {"a": {}}},
    ],
)
def test_invalid_values_are_config_errors(data):
    with pytest.raises(ef.ConfigError):
        ef.config_from_dict(data)


def test_deprecated_aliases_warn_and_translate():
    with pytest.warns(ef.ConfigDeprecationWarning, match="required: true, min_score: 0.7"):
        cfg = ef.config_from_dict({"evaluators": {"a": {"required": 0.7}}})
    assert (cfg.evaluators["a"].required, cfg.evaluators["a"].min_score) == (True, 0.7)
    with pytest.warns(ef.ConfigDeprecationWarning, match="min_score: 0.7"):
        cfg = ef.config_from_dict({"evaluators": {"a": {"required_min_score": 7}}})
    assert cfg.evaluators["a"].min_score == pytest.approx(0.7)
    with pytest.warns(ef.ConfigDeprecationWarning, match="threshold: 0.75"):
        cfg = ef.config_from_dict({"pass_threshold": 0.75})
    assert cfg.threshold == 0.75


def test_presets():
    cx = ef.load_config(preset="connexity")
    assert cx.threshold == 0.75 and cx.borderline is None and cx.on_missing == "fail"
    assert {k: v.weight for k, v in cx.evaluators.items()} == CONNEXITY_WEIGHTS
    av = ef.load_config(preset="agentv")
    assert (av.threshold, av.borderline, av.on_missing) == (0.8, None, "skip")
    with pytest.raises(ef.ConfigError, match="unknown preset"):
        ef.load_config(preset="nope")


def test_file_overrides_preset_and_replaces_the_tree(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("threshold: 0.9\nrun_gates: {min_pass_rate: 0.5}\nevaluators:\n  a: {}\n")
    cfg = ef.load_config(path, preset="connexity")
    assert cfg.threshold == 0.9
    assert (cfg.run_gates.min_pass_rate, cfg.run_gates.min_mean_score) == (0.5, 0.8)
    assert list(cfg.evaluators) == ["a"]  # replaced whole, not merged
    assert cfg.on_missing == "fail"  # kept from the preset


def test_json_files_and_cli_threshold(tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"threshold": 0.7}))
    cfg = ef.load_config(path, threshold=0.55)
    assert (cfg.threshold, cfg.threshold_override) == (0.7, 0.55)


def test_unreadable_or_malformed_files(tmp_path):
    with pytest.raises(ef.ConfigError, match="cannot read"):
        ef.load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("threshold: [0.8\n")
    with pytest.raises(ef.ConfigError, match="not valid"):
        ef.load_config(bad)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("0.8\n")
    with pytest.raises(ef.ConfigError, match="mapping"):
        ef.load_config(scalar)


def test_config_id_is_the_sha256_of_the_canonical_json():
    import hashlib

    cfg = ef.config_from_dict({"threshold": 0.7})
    assert cfg.config_id == hashlib.sha256(cfg.canonical_json().encode()).hexdigest()[:12]
    # defaults filled in: writing a default explicitly gives the same id
    assert ef.config_from_dict({"threshold": 0.7, "borderline": 0.6}).config_id == cfg.config_id
    assert ef.config_from_dict({"threshold": 0.71}).config_id != cfg.config_id
    assert json.loads(cfg.canonical_json())["threshold"] == 0.7


# --- config files: encodings, nesting, aliases, duplicates, booleans (hardening) ---

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)
"""A 9^9 (387 million) element billion-laughs document of about 350 bytes."""
DEEP_TREE = "evaluators:\n  a:\n" + "".join(
    "  " * (2 * i + 2) + "children:\n" + "  " * (2 * i + 3) + f"c{i}:\n" for i in range(100)
)

BAD_FILES = [
    # (file name, bytes, pattern of the ConfigError)
    ("latin1.yaml", b"threshold: 0.7\n# caf\xe9\n", r"latin1\.yaml:2: not UTF-8 text"),
    ("abc.yaml", b"evaluators:\n  a: {required_min_score: abc}\n", "must be a number 0-10"),
    ("deep.yaml", b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested deeper than 64 levels"),
    ("deep.json", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than 64"),
    ("tree.yaml", DEEP_TREE.encode(), "nested deeper than 64 levels"),
    ("bomb.yaml", BOMB.encode(), "expands to more than 100,000 values"),
    ("self.yaml", b"a: &a [*a]\n", "refers to its own anchor"),
    ("dup.yaml", b"threshold: 0.7\nx: 1\nthreshold: 0.9\n", r"3: duplicate key 'threshold'"),
    ("dupdeep.yaml", b"evaluators:\n  a: {}\n  b: {}\n  a: {}\n", r"line 4: duplicate key 'a'"),
    ("dup.json", b'{"threshold": 0.7, "threshold": 0.9}', "duplicate key 'threshold'"),
    ("bool.yaml", b"threshold: true\n", "`threshold`: true is not a number"),
    ("boolw.yaml", b"evaluators:\n  a: {weight: false}\n", "`weight`: false is not a number"),
    ("boolg.yaml", b"run_gates: {min_pass_rate: yes}\n", "`min_pass_rate`: true is not a number"),
    ("inf.yaml", b"evaluators:\n  a: {weight: .inf}\n", "finite number"),
    ("huge.yaml", b"evaluators:\n  a: {weight: 1e308}\n", r"1e\+308 is above 1e\+300"),
    ("tiny.yaml", b"evaluators:\n  a: {weight: 5e-324}\n", "is below 1e-300"),
    ("noname.yaml", b"evaluators:\n  '': {weight: 1}\n", "evaluator name is empty"),
    ("blank.json", b'{"evaluators": {"g": {"children": {" ": {}}}}}', "evaluator name is empty"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("name", "data", "pattern"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_config_files_are_clear_config_errors(name, data, pattern, tmp_path):
    import time

    path = tmp_path / name
    path.write_bytes(data)
    start = time.perf_counter()
    with pytest.raises(ef.ConfigError, match=pattern) as info:
        ef.load_config(path)
    assert time.perf_counter() - start < 10  # bounded: the bomb is never expanded
    assert name in str(info.value)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [("utf-16", b""), ("utf-16-be", b"\xfe\xff"), ("utf-8", b"\xef\xbb\xbf"), ("utf-32", b"")],
)
def test_utf16_and_bom_files_load(encoding, prefix, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_bytes(prefix + "threshold: 0.7  # café\n".encode(encoding))
    assert ef.load_config(path).threshold == 0.7


def test_yaml_merge_keys_and_shared_aliases_still_load(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(
        "evaluators:\n  a: &base {min_score: 0.5}\n  b:\n    <<: *base\n    weight: 2\n  c: *base\n"
    )
    cfg = ef.load_config(path)
    assert (cfg.evaluators["b"].min_score, cfg.evaluators["b"].weight) == (0.5, 2.0)
    assert cfg.evaluators["c"].min_score == 0.5


def test_deep_dicts_and_bools_are_refused_from_python_too():
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["children"] = {"c": {}}
        node = node["children"]["c"]
    with pytest.raises(ef.ConfigError, match="nested deeper than 64"):
        ef.config_from_dict({"evaluators": {"a": deep}})
    with pytest.raises(ef.ConfigError, match="true is not a number"):
        ef.config_from_dict({"compare": {"case_delta": True}})
    assert ef.config_from_dict({"evaluators": {"a": {"required": True}}}).evaluators["a"].required


@pytest.mark.slow
@pytest.mark.parametrize("name", [b[0] for b in BAD_FILES])
def test_cli_score_exits_2_with_the_message(name, tmp_path):
    from typer.testing import CliRunner

    from evalframe._private.data.demo import write_demo
    from evalframe.cli import app

    data = next(b[1] for b in BAD_FILES if b[0] == name)
    dataset = tmp_path / "data"
    write_demo(dataset, n_cases=3)
    cfg = tmp_path / name
    cfg.write_bytes(data)
    result = CliRunner().invoke(app, ["score", str(dataset), "--config", str(cfg)])
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, RecursionError | MemoryError)
    assert name in result.output and "Traceback" not in result.output
