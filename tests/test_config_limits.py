"""Config and grid files that would exhaust memory are refused before they are read or
expanded: a size limit (a device such as /dev/zero never ends), and alias bombs named by
the key whose value they expand."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.config import MAX_FILE_BYTES
from evalframe._private.sweep.sweep import load_grid
from evalframe.cli import app

LAUGHS = "".join(f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))
BOMB_IN_EVALUATORS = "evaluators:\n  judge:\n    l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + LAUGHS


@pytest.mark.parametrize("reader", [ef.load_config, load_grid])
def test_a_file_over_the_size_limit_is_refused_naming_it(tmp_path, reader):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_FILE_BYTES + b"\nthreshold: 0.7\n")
    with pytest.raises(ef.ConfigError, match=r"big\.yaml is larger than 10 MiB") as info:
        reader(path)
    assert info.value.exit_code == 2


def test_a_config_of_dev_zero_is_exit_2_naming_the_file(tmp_path):
    ef.write_demo(tmp_path / "d", n_cases=4)
    res = CliRunner().invoke(app, ["score", str(tmp_path / "d"), "--config", "/dev/zero"])
    assert res.exit_code == 2, res.output
    assert "/dev/zero is larger than 10 MiB" in " ".join(res.stderr.split())


@pytest.mark.slow
def test_a_file_at_the_limit_is_read(tmp_path):
    path = tmp_path / "padded.yaml"
    body = b"threshold: 0.7\n"
    path.write_bytes(b"#" * (MAX_FILE_BYTES - len(body) - 1) + b"\n" + body)
    assert ef.load_config(path).threshold == 0.7


def test_an_alias_bomb_inside_evaluators_names_the_key(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB_IN_EVALUATORS)
    with pytest.raises(ef.ConfigError, match=r"key `evaluators\.judge\.l\d` expands to more"):
        ef.load_config(path)
    res = CliRunner().invoke(app, ["score", str(tmp_path), "--config", str(path)])
    assert res.exit_code == 2 and "evaluators.judge.l" in res.stderr
