"""The policy config (SPEC §2): validation, hints, aliases, presets, merging, config_id."""

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
