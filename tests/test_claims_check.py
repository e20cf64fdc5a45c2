"""Claims checked before any compute (issue 30, item 5): a mistake in a claims file is one line naming
the file, the claim and the key, from ``svmrepro-reproduce`` before its first sweep and from
``--check``; every committed claim passes."""

import shutil
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from svmrepro import reproduce as reproducing
from svmrepro.compose import papers
from svmrepro.errors import ConfigError
from svmrepro.locations import CONFIG_DIRS_ENV
from svmrepro.report.claims.check import check_claims, typed_test
from svmrepro.report.claims import schema
from svmrepro.report.claims.schema import load_claims, parse_claims

CHECKOUT = Path(__file__).resolve().parents[1]
USER_EXPERIMENT = """\
# @package _global_
defaults:
  - override /dataset: gaussian_clouds
  - override /algorithm: svc_linear
sweep:
  quick: {seed: "0,1", dataset.n_train: "100,200"}
report:
  title: my own experiment
  x: params.dataset.n_train
  metrics: [test_error]
"""
USER_CLAIMS = """\
claims:
  - id: sv_grow
    source: Fig. 1
    claim: more points, more SVs
    paper_says: linear growth
    output: mine/tiny
    test: {kind: slope, metric: n_sv, x: params.dataset.n_train, group: svc_linear}
    expect: {above: 0.5}
"""


def test_every_committed_claim_passes_the_check():
    """A typo in a committed claims file fails here, in CI, not after a sweep."""
    total = sum(len(load_claims(paper)) for paper in papers())
    assert total >= 68 and check_claims(papers(), [CHECKOUT / "results"]) == total


@pytest.fixture
def stopped(monkeypatch):
    """``svmrepro-reproduce``'s steps after its checks: a test fails if any of them starts."""
    def never(*args, **kwargs):
        raise AssertionError("a reproduction (or the store check) started after a bad claims file")
    for step in ("reproduce", "check", "in_dependency_order"):
        monkeypatch.setattr(reproducing, step, never)


def _claims_here(folder: Path, paper: str, change) -> Path:
    """A copy of ``paper``'s committed claims file, changed, in ``folder``/experiments (where
    :func:`svmrepro.locations.data_file` finds it before the package's), and the committed runs
    tables of its outputs in ``folder``/results (where the check reads the metrics runs log)."""
    path = folder / "experiments" / paper / "claims.yaml"
    path.parent.mkdir(parents=True)
    text = (CHECKOUT / "experiments" / paper / "claims.yaml").read_text()
    path.write_text(change(text))
    shutil.copytree(CHECKOUT / "results" / paper, folder / "results" / paper,
                    ignore=shutil.ignore_patterns("*.md", "*.png", "*.json"))
    return path


#: table1_faster_critical_path's today block in experiments/cascade/claims.yaml, which two cases replace
TODAY_BLOCK = """\
    today:
      test:
        a: {faster_of: [{group: svc, metric: fit_cpu_s},
                        {output: cascade/table1_today, group: svc_onedal, metric: fit_cpu_s}]}
      inside:
        test:
          a: {faster_of: [{group: svc, metric: fit_cpu_s},
                          {output: cascade/table1_today, group: svc_onedal, metric: fit_cpu_s}]}
          b: {faster_of: [{group: cascade_svc, metric: critical_path_cpu_s},
                          {output: cascade/table1_today, group: cascade_svc_onedal, metric: critical_path_cpu_s}]}
      conditions:
        cores: "one core: the faster of LIBSVM's and oneDAL's SVC, each on one thread, on the problem, in CPU seconds, against the faster of the cascade with LIBSVM and with oneDAL inside by its critical path (the slowest sub-SVM of each step, an extrapolation to one core per sub-SVM)"
"""


def _replace(old, new):
    def change(text):
        assert old in text
        return text.replace(old, new, 1)
    return change


@pytest.mark.parametrize("paper, change, message", [
    ("potential_sv", _replace("group: psv_svc}", "grup: psv_svc}"),
     "example_svs_among_psv.test.grup: not a key of a threshold test; valid: kind, where, at, x, group_column, "
     "metric, group"),
    ("cascade", lambda text: "", "has no claims"),
    ("cascade", lambda text: "# nothing yet\nclaims: []\n", "has no claims"),
    ("cascade", _replace("output: cascade/table1", "output: cascade/table99"),
     "table1_fewer_svs.output: no experiment cascade/table99"),
    ("cascade", _replace("expect: {below: 0.939}", "expect: {below: .nan}"),
     "table1_fewer_svs.expect.below: expected finite numbers, got nan"),
    ("cascade", _replace("expect: {below: 0.939}", "expect: {below: .inf}"),
     "table1_fewer_svs.expect.below: expected finite numbers, got inf"),
    ("cascade", _replace("metric: n_sv, a: svc, b: cascade_svc, stat: ratio}", "metric: n_svs, a: svc, b: cascade_svc, stat: ratio}"),
     "table1_fewer_svs.test.metric: 'n_svs' is not a metric the runs of cascade/table1 log; closest: n_sv"),
    ("cascade", _replace("metric: n_sv, a: svc, b: cascade_svc, stat: ratio}", "metric: n_sv, a: svm, b: cascade_svc, stat: ratio}"),
     "table1_fewer_svs.test.a: 'svm' is no value of tags.algorithm in the sweep of cascade/table1; valid: bench_parallel_cascade, cascade_svc, svc"),
    ("cascade", _replace("metric: critical_path_cpu_s}", "metric: critical_path_cpu}"),
     "table1_faster_critical_path.test.b.metric: 'critical_path_cpu' is not a metric the runs of cascade/table1 log"),
    ("cascade", _replace(TODAY_BLOCK, "    today: {unchanged: a, inside: {test: "
                                      "{b: {group: cascade_svm, metric: critical_path_cpu_s}}}}\n"),
     "table1_faster_critical_path.today.inside.test.b.group: 'cascade_svm' is no value of tags.algorithm"),
    ("cascade", _replace(TODAY_BLOCK, "    today: {test: {a: {group: svc, metrics: x}}}\n"),
     "table1_faster_critical_path.today.test.a.metrics: not a key of a side"),
    ("cascade", _replace("{output: cascade/table1_today, group: svc_onedal, metric: fit_cpu_s}]}\n      inside:",
                         "{output: cascade/table1_today, group: svc_onedal_1, metric: fit_cpu_s}]}\n      inside:"),
     "table1_faster_critical_path.today.test.a.faster_of[1].group: 'svc_onedal_1' is no value of tags.algorithm "
     "in the sweep of cascade/table1_today"),
    ("cross_training", _replace("where: {tags.label: forest_200000}", "where: {tags.label: forest_20000}"),
     "table1_forest200000_faster.test.where.tags.label: 'forest_20000' is no value of tags.label"),
    ("cross_training", _replace("x: params.dataset.label_noise", "x: params.dataset.noise"),
     "fig4_libsvm_sv_grows.test.x: 'params.dataset.noise' is not a column of the runs of cross_training/fig4"),
])
@pytest.mark.parametrize("check", [False, True], ids=["reproduce", "--check"])
def test_a_mistake_in_a_claims_file_is_one_line_before_any_sweep(
        paper, change, message, check, tmp_path, monkeypatch, capsys, stopped):
    path = _claims_here(tmp_path, paper, change)
    monkeypatch.chdir(tmp_path)
    assert reproducing.main([paper, *(["--check"] if check else [])]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"svmrepro-reproduce: error: {path}: {message}"), lines


def test_a_claims_file_in_a_users_config_dir_is_checked_too(tmp_path, monkeypatch, capsys, stopped):
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # --config-dir sets it for the process; put back afterwards
    mine = tmp_path / "my_conf"
    (mine / "experiment" / "mine").mkdir(parents=True)
    (mine / "experiment" / "mine" / "tiny.yaml").write_text(USER_EXPERIMENT)
    (mine / "experiments" / "mine").mkdir(parents=True)
    claims = mine / "experiments" / "mine" / "claims.yaml"
    claims.write_text(USER_CLAIMS)
    monkeypatch.chdir(tmp_path)
    assert check_claims(["mine"]) == 0  # without --config-dir the paper is not known here
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(mine))
    assert check_claims(["mine"]) == 1  # no runs table yet: its metrics are checked when judged
    claims.write_text(USER_CLAIMS.replace("group: svc_linear", "group: svc"))
    assert reproducing.main(["--config-dir", "my_conf", "--experiment", "mine/tiny"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"svmrepro-reproduce: error: {claims}: sv_grow.test.group: 'svc' is no value of tags.algorithm in the sweep "
        "of mine/tiny; valid: svc_linear"]


#: the lock ``python -m svmrepro.report.claims.relock mine`` writes for USER_CLAIMS (its hashes shortened)
USER_LOCK = """\
claims:
  sv_grow:
    registered: 0123456789abcdef0123456789abcdef01234567
    amendments: 0
    hash: 5e0a
    parts: {claim: 6c91, test: 2121, region: e0d3, output: b20a, output_config: 8822, timing: fcbc, kind: e996}
    data:
      mine/tiny: 0123456789abcdef0123456789abcdef01234567
"""


def test_a_paper_whose_lock_registers_claims_without_its_claims_file_is_one_line(tmp_path, monkeypatch, capsys,
                                                                                 stopped):
    """Issue 46, item 13: a claims file gone from beside its lock was taken for a paper without claims, and the
    reproduction went on without them."""
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")
    study = tmp_path / "study"
    (study / "conf" / "experiment" / "mine").mkdir(parents=True)
    (study / "conf" / "experiment" / "mine" / "tiny.yaml").write_text(USER_EXPERIMENT)
    (study / "experiments" / "mine").mkdir(parents=True)
    (study / "experiments" / "mine" / "claims.lock.yaml").write_text(USER_LOCK)
    monkeypatch.chdir(study)
    expected = Path.cwd() / "experiments" / "mine" / "claims.yaml"
    line = (f"{expected}: no such file, though claims.lock.yaml beside it registers 1 claim of paper mine "
            "(on mine/tiny): restore the claims file, or delete the lock if the paper has none")
    with pytest.raises(ConfigError) as err:
        check_claims(["mine"])
    assert str(err.value) == line
    assert reproducing.main(["--config-dir", "conf", "--experiment", "mine/tiny", "--check"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"svmrepro-reproduce: error: {line}"]
    expected.write_text(USER_CLAIMS)  # back beside its lock: checked again
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(study / "conf"))
    assert check_claims(["mine"]) == 1


TEST_CLAIM = """\
claims:
  - id: faster
    source: Table 1
    claim: b trains faster than a
    paper_says: half the time
    output: cascade/table1
    test: {test}
    expect: {{below: 0.6}}
"""


@pytest.mark.parametrize("test, message", [
    ("{kind: compare, metric: n_sv, a: svc, b: cascade_svc, stat: ration}", "faster.test.stat: 'ration'; valid: ratio, difference"),
    ("{kind: compare, metric: n_sv, a: {grup: svc}, b: cascade_svc}", "faster.test.a.grup: not a key of a side; valid: group, metric"),
    ("{kind: compare, a: svc, b: cascade_svc}", "faster.test.metric: expected a metric name"),
    ("{kind: compare, metric: n_sv, b: cascade_svc}", "faster.test.a: missing: a compare test needs it"),
    ("{kind: compare, metric: n_sv, a: svc, b: cascade_svc, at: 5000}", "faster.test.at: needs the column 'x'"),
    ("{kind: compare, metric: n_sv, a: svc, b: cascade_svc, x: [params.seed]}", "faster.test.x: "),
    ("{kind: compare, metric: n_sv, a: svc, b: cascade_svc, where: [tags.label]}", "faster.test.where: "),
    ("{kind: slope, metric: n_sv, group: svc}", "faster.test.x: missing: a slope test needs it"),
    ("{kind: threshold, metric: n_sv, group: [svc, cascade_svc]}", "faster.test.group: expected one group"),
    ("{kind: trend, metric: n_sv, x: params.seed, group: svc, by: tags.seed}", "faster.test.by: not a key of a trend test"),
])
def test_a_test_is_typed_by_its_primitive(test, message):
    claim, = parse_claims("cascade", TEST_CLAIM.format(test=test), "experiments/cascade/claims.yaml")
    with pytest.raises(ConfigError) as error:
        typed_test(claim, f"experiments/cascade/claims.yaml: {claim.id}.test")
    text = str(error.value)
    assert "\n" not in text and text.startswith(f"experiments/cascade/claims.yaml: {message}")


def test_a_test_is_merged_once_per_process_and_each_caller_gets_its_own_copy(monkeypatch):
    test = "{kind: compare, metric: n_sv_merged_once, a: svc, b: cascade_svc, stat: ratio}"  # no other test has it
    claim, = parse_claims("cascade", TEST_CLAIM.format(test=test), "experiments/cascade/claims.yaml")
    bad, = parse_claims("cascade", TEST_CLAIM.format(test=test.replace("ratio", "ration")), "x.yaml")
    merges = []
    real = OmegaConf.merge
    monkeypatch.setattr(OmegaConf, "merge", staticmethod(lambda *a, **k: merges.append(a) or real(*a, **k)))
    first = typed_test(claim, "here")
    assert len(merges) == 5  # one merge per key, so that a failure names its key
    first.metric = "changed by its caller"
    second = typed_test(claim, "here")
    assert len(merges) == 5 and second is not first and second.metric == "n_sv_merged_once"
    for _ in range(2):  # a test that fails is never kept: the second call fails the same way
        with pytest.raises(ConfigError, match="faster.test.stat: 'ration'; valid: ratio, difference"):
            typed_test(bad, "x.yaml: faster.test")


@pytest.mark.parametrize("paper", sorted(p.parent.name for p in (CHECKOUT / "experiments").glob("*/claims.yaml")))
def test_a_claims_file_merged_claim_by_claim_gives_what_the_whole_file_merged_gives(paper, monkeypatch):
    text = (CHECKOUT / "experiments" / paper / "claims.yaml").read_text()
    raw = yaml.load(text, Loader=schema._Loader)
    whole = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema.ClaimsFileConf), raw)).claims
    assert schema._claim_confs(raw) == whole
    # a changed file merges only the claim that changed
    monkeypatch.setattr(schema, "_MERGED", {})
    parse_claims(paper, text + "\n# parsed once\n", "first.yaml")
    merged = len(schema._MERGED)
    first_id = raw["claims"][0]["id"]
    changed = text.replace(f"id: {first_id}\n", f"id: {first_id}_renamed\n", 1)
    assert changed != text
    assert [c.id for c in parse_claims(paper, changed, "second.yaml")][0] == f"{first_id}_renamed"
    assert len(schema._MERGED) == merged + 1
