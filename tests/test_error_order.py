"""Errors point at the cause first (issue 47, item 5): a misspelled config-group option is one line naming the
key, the value and the closest option, before anything is composed; a misspelled key of a claim lists the
claim's keys in our words, not OmegaConf's class name."""

import subprocess
import sys

import forked_cli
import pytest

from svmrepro.compose import config_groups
from svmrepro.errors import ConfigError
from svmrepro.options import group_options, unknown_options
from svmrepro.report.claims.schema import parse_claims


@pytest.mark.parametrize(("argument", "meant"), [
    ("algorithm=cros_training", "cross_training"), ("experiment=cascade/tabel1", "cascade/table1"),
    ("+measure=regressio", "regression"), ("algorithm=svc,cascade_svcc", "cascade_svc"),
    ("algorithm=choice(svc,crosstraining)", "cross_training"),
])
def test_a_misspelled_option_is_one_line_with_the_closest_one(argument, meant):
    lines = unknown_options(["-m", "seed=0,1", argument], config_groups())
    assert len(lines) == 1 and f"did you mean {meant}?" in lines[0], lines
    assert lines[0].startswith(argument.lstrip("+").split("=")[0] + "=")


def test_valid_options_and_other_sweeps_pass():
    assert unknown_options(["algorithm=svc,cascade_svc", "dataset=glob(*)", "seed=range(3)", "experiment=cascade/table1",
                            "algorithm.C=10", "hydra/launcher=parallel"], config_groups()) == []
    assert "cross_training" in group_options("algorithm") and "cascade/table1" in group_options("experiment")


def test_svmrepro_run_names_the_misspelled_option_first_in_one_line(tmp_path):
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "algorithm=cros_training"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "svmrepro-run: error: algorithm=cros_training: the config group algorithm has no option cros_training; did you "
        f"mean cross_training? (svmrepro-run --help lists its {len(group_options('algorithm'))} options)"]


def test_a_misspelled_claim_key_lists_the_claim_s_keys():
    text = """claims:
  - id: a
    source: Table 1
    claim: fewer SVs
    paper_says: "3827 vs 3943"
    output: cascade/table1
    test: {kind: compare, metric: n_sv, a: svc, b: cascade_svc, stat: ratio}
    expcet: {below: 1.0}
"""
    with pytest.raises(ConfigError) as raised:
        parse_claims("mine", text, "experiments/mine/claims.yaml")
    message = str(raised.value)
    assert message.startswith("experiments/mine/claims.yaml: claims[0] (a).expcet: not a key of a claim; did you mean "
                              "expect? (valid: id, source, claim, paper_says, output, kind, test, expect,")
    assert "ClaimConf" not in message
