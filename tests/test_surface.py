"""Decision surfaces: computed by the runner on 2-d data, drawn by ``report.surface``."""

import json

import mlflow
import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from svmrepro import identity
from svmrepro.data.toy2d import Toy2d
from svmrepro.errors import ConfigError
from svmrepro.report import build_output
from svmrepro.report.runs import read_runs
from svmrepro.report.spec import spec_from_config
from svmrepro.runner import run
from svmrepro.surface import decision_surface, surface_settings


@pytest.fixture(scope="module")
def clouds():
    return Toy2d(n_train=80, n_test=120).load(0)


def test_the_surface_holds_the_decision_values_on_a_grid_around_the_data(clouds):
    model = SVC(kernel="linear").fit(clouds.X_train, clouds.y_train)
    surface = decision_surface(model, clouds, {"resolution": 12, "points": 30}, seed=0)
    gx, gy, values = (np.asarray(surface[k]) for k in ("grid_x", "grid_y", "values"))
    assert values.shape == (12, 12)
    both = np.vstack([clouds.X_train, clouds.X_test])
    assert gx[0] < both[:, 0].min() and gx[-1] > both[:, 0].max() and gy[-1] > both[:, 1].max()
    corner = model.decision_function([[gx[3], gy[7]]])[0]  # row = y index, column = x index
    assert values[7, 3] == pytest.approx(corner, rel=1e-4)
    points = np.asarray(surface["points_X"])
    assert len(points) == 30 == len(surface["points_y"])
    assert {tuple(p) for p in np.round(points, 3)} <= {tuple(p) for p in np.round(clouds.X_test, 3)}


@pytest.mark.parametrize(
    ("node", "message"),
    [({"resolution": 5}, r"surface.resolution=5 is invalid"), ({"points": -1}, r"surface.points=-1 is invalid"),
     ({"colour": "k"}, r"surface.colour is not a surface setting")],
)
def test_bad_surface_settings_are_refused(clouds, node, message):
    with pytest.raises(ConfigError, match=message):
        surface_settings(node, clouds)


def test_asking_for_a_surface_reruns_a_run_that_has_none(tiny_cfg, store_uri):
    toy = ("dataset=toy2d", "dataset.n_train=60", "dataset.n_test=60")
    plain, drawn = tiny_cfg(*toy), tiny_cfg(*toy, "surface={resolution:16,points:10}")
    assert "surface" not in identity.identity_config(plain)  # hashes of runs without one did not move
    assert run(plain).status == "FINISHED"
    result = run(drawn)
    assert result.status == "FINISHED"  # not skipped as the run above
    uri = mlflow.MlflowClient(store_uri).get_run(result.run_id).info.artifact_uri
    surface = mlflow.artifacts.load_dict(f"{uri}/surface.json")
    assert np.asarray(surface["values"]).shape == (16, 16) and len(surface["points_y"]) == 10


def test_a_surface_of_data_that_is_not_2d_fails_before_anything_is_logged(tiny_cfg, store_uri):
    cfg = tiny_cfg("surface={}")  # Gaussian clouds in 10 dimensions
    with pytest.raises(ConfigError, match="surface needs 2-d inputs; this data set has 10 features"):
        run(cfg)
    client = mlflow.MlflowClient(store_uri)
    assert client.search_runs([e.experiment_id for e in client.search_experiments()]) == []


SPEC = spec_from_config(
    "paper_x/fig1", {"title": "t", "x": "params.seed", "metrics": ["test_error"], "surface": True}
)
SURFACE = {"grid_x": [0.0, 1.0, 2.0], "grid_y": [0.0, 1.0], "values": [[-1.0, 0.5, 1.0], [-2.0, -0.5, 2.0]],
           "points_X": [[0.5, 0.5], [1.5, 0.5]], "points_y": [-1, 1]}
A1, A0, B0 = "a1" * 16, "a0" * 16, "b0" * 16  # MLflow run ids, as a runs CSV must hold
RUNS = pd.DataFrame({
    "run_id": [A1, A0, B0], "status": "FINISHED", "start_time": ["t2", "t1", "t3"], "params.seed": ["1", "0", "0"],
    "tags.algorithm": ["lin", "lin", "rbf"], "metrics.test_error": [0.2, 0.1, 0.05],
    "artifact_uri": ["file:///s/a1", "file:///s/a0", "file:///s/b0"],
})


def test_report_draws_each_groups_lowest_seed_and_from_csv_redraws_it(tmp_path, monkeypatch):
    asked = []

    def load_dict(uri):
        asked.append(uri)
        return SURFACE

    monkeypatch.setattr(mlflow.artifacts, "load_dict", load_dict)
    paths = build_output(SPEC, RUNS, tmp_path, "quick")
    assert sorted(asked) == ["file:///s/a0/surface.json", "file:///s/b0/surface.json"]  # not seed 1's
    stored = json.loads(paths.surface_json.read_text())
    assert list(stored) == [A0, B0] and paths.surface.read_bytes()[:4] == b"\x89PNG"
    assert "fig1.surface.png" in paths.table_md.read_text()

    monkeypatch.setattr(mlflow.artifacts, "load_dict", None)  # --from-csv never asks MLflow
    paths.surface.unlink()
    rebuilt = build_output(SPEC, read_runs(paths.runs_csv), tmp_path, "quick")
    assert rebuilt.surface.is_file() and json.loads(rebuilt.surface_json.read_text()) == stored


def test_report_says_how_to_get_surfaces_when_no_run_logged_one(tmp_path, monkeypatch):
    monkeypatch.setattr(mlflow.artifacts, "load_dict", lambda uri: (_ for _ in ()).throw(OSError("absent")))
    with pytest.raises(Exception, match=r"no run logged surface.json: set `surface: \{\}`"):
        build_output(SPEC, RUNS, tmp_path, "quick")


def test_report_surface_must_be_a_boolean():
    with pytest.raises(ConfigError, match="report.surface must be true or false"):
        spec_from_config("p/f", {"title": "t", "x": "a", "metrics": ["m"], "surface": "yes"})
