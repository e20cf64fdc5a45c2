"""A study of one's own from configuration only, through the installed wheel (issue 34, "Done when").

``docs/tutorial/study/`` (the tutorial's folder) holds a paper of its own: a data set from a
scikit-learn generator, an experiment of 3 methods x 3 sizes x 3 seeds with its report section, the
paper's numbers and six claims. Copied to a temporary folder, it is reproduced by the wheel's
``svmrepro-reproduce --config-dir`` from an empty folder, with no PYTHONPATH and no file of the
package changed, into its page, figure and verdicts.
"""

import csv
import hashlib
import re
import shutil
from pathlib import Path

import pytest

from installed_wheel import CHECKOUT, call

STUDY = CHECKOUT / "docs" / "tutorial" / "study"
EXPERIMENT = "moons/sizes"
CLAIMS = {"rbf_beats_linear", "cascade_same_accuracy", "cascade_fewer_svs", "svs_grow_with_data", "rbf_error_small",
          "rbf_error_does_not_grow"}
VERDICTS = {"supported", "partly supported", "not supported", "inconclusive"}
#: the study's data set drawn by a module of the user's own, beside its configs
OWN_LOADER = '''\
from sklearn.datasets import make_moons


def moons(n_samples, noise, random_state=None):
    """make_moons with the classes named, as a user's own data might come."""
    X, y = make_moons(n_samples=n_samples, noise=noise, random_state=random_state)
    return X, ["upper" if label else "lower" for label in y]
'''

pytestmark = pytest.mark.slow


def package_state(venv: Path) -> dict[str, str]:
    """sha256 of every file of the installed package, by path."""
    (package,) = venv.parent.glob("lib/python*/site-packages/svmrepro")
    return {str(path.relative_to(package)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(package.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


@pytest.fixture
def study(tmp_path):
    """The tutorial's study folder copied, and an empty folder to run it from."""
    shutil.copytree(STUDY, tmp_path / "study")
    (tmp_path / "work").mkdir()
    return tmp_path / "study"


def verdicts(results: Path) -> dict[str, str]:
    with (results / "claims.csv").open(newline="") as handle:
        return {row["id"]: row["verdict"] for row in csv.DictReader(handle) if row["paper"] == "moons"}


def tutorial_summary() -> str:
    """The pattern of the last line the tutorial shows for the reproduction (``H:MM:SS`` and each ``N`` stand for
    what a run prints)."""
    shown = (CHECKOUT / "docs" / "tutorial" / "own-study.md").read_text()
    line = re.search(r"^svmrepro-reproduce: .*$", shown, re.MULTILINE).group(0)
    return re.escape(line).replace("H:MM:SS", r"\d+:\d\d:\d\d").replace(r"N\ ", r"\d+\ ")


def test_a_study_from_configuration_only_gets_its_page_and_verdicts(venv, study):
    before = package_state(venv)
    done = call(venv, study.parent / "work", "svmrepro-reproduce", "--config-dir", str(study / "conf"),
                "--experiment", EXPERIMENT)
    assert done.returncode == 0, done.stderr[-3000:]
    results = study.parent / "work" / "results" / "quick"
    page = (results / "moons" / "sizes.md").read_text()
    assert page.startswith("# Two moons: linear SVM, RBF SVM and the cascade by training size")
    assert "27 runs" in page and "experiments/moons/reported.csv" in page
    assert (results / "moons" / "sizes.png").read_bytes().startswith(b"\x89PNG")
    found = verdicts(results)
    assert set(found) == CLAIMS and set(found.values()) <= VERDICTS, found  # each judged from the runs
    scoreboard = (results / "README.md").read_text()
    board = (results / "moons" / "claims.md").read_text()  # the paper's page: a row per claim
    claim_rows = [line for line in board.splitlines() if line.startswith("| ") and "[sizes](sizes.md)" in line]
    assert len(claim_rows) == len(CLAIMS)
    # the study is its own project: the package's five papers appear nowhere unless asked for (issue 47, item 1)
    rows = [line for line in scoreboard.splitlines() if line.startswith("| ") and not line.startswith("| paper")]
    assert {row.split("|")[1].strip() for row in rows if "---" not in row} == {"[moons](moons/claims.md)"}
    assert f"{len(CLAIMS)} claims of 1 paper, each" in scoreboard
    summary = [line for line in done.stdout.splitlines() if line.startswith("svmrepro-reproduce:")][-1]
    counted = sum(int(n) for n in re.findall(r"(\d+) (?:supported|partly supported|not supported|inconclusive|not run)",
                                             summary.split("findings:")[1]))
    assert counted == len(CLAIMS), summary
    assert re.fullmatch(tutorial_summary(), summary), (summary, tutorial_summary())
    cost = (results / "bench" / "cost.md").read_text()
    assert "## moons" in cost and "## cascade" not in cost and "cascade/" not in cost
    assert "Traceback" not in done.stderr
    assert package_state(venv) == before


def test_the_study_s_data_set_may_come_from_a_module_in_its_config_folder(venv, study):
    (study / "conf" / "my_moons.py").write_text(OWN_LOADER)
    dataset = study / "conf" / "dataset" / "moons.yaml"
    dataset.write_text(dataset.read_text().replace("sklearn.datasets.make_moons", "my_moons.moons"))
    work = study.parent / "work"
    one = call(venv, work, "svmrepro-run", "--config-dir", str(study / "conf"), f"experiment={EXPERIMENT}")
    assert one.returncode == 0, one.stderr[-3000:]
    assert "FINISHED" in one.stdout + one.stderr
    missing = call(venv, work, "svmrepro-run", "--config-dir", str(study / "conf"), f"experiment={EXPERIMENT}",
                   "dataset.loader=my_moons.moonz")
    assert missing.returncode == 2 and missing.stderr.strip() == (
        "svmrepro-run: error: dataset.loader='my_moons.moonz' cannot be imported (my_moons has no 'moonz'): "
        "expected a make_*, fetch_*, load_* or read_* function of sklearn.datasets or svmrepro.data, or a function "
        f"of a module in a config folder (--config-dir: {study / 'conf'})")
