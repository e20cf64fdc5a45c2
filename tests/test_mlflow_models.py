"""``mlflow.sklearn.log_model(model, name="model")``, MLflow's defaults as an MLflow user writes them, on every
public estimator (issue 47, item 4): the model is written in skops's format (MLflow's default), loads back
with ``mlflow.sklearn.load_model`` and predicts the same; :mod:`svmrepro.algorithms.persistence` declares
svmrepro's classes to skops. MLflow loads any model only with ``MLFLOW_ALLOW_PICKLE_DESERIALIZATION=true``
(its own gate, for skops's format too), so the tests set it, as a user must.

Before: the call failed on every estimator ("The saved sklearn model references untrusted types ...
svmrepro.algorithms.cascade.Subproblem, ...").
"""

import io
import json
import sqlite3
import subprocess
import sys
import warnings
import zipfile
from contextlib import closing

import mlflow
import mlflow.models
import mlflow.sklearn
import numpy as np
import pytest
import skops.io
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_classification, make_regression
from sklearn.svm import SVC

import svmrepro.algorithms as algorithms
from svmrepro.algorithms import SKOPS_TRUSTED_TYPES

CLASSES = make_classification(n_samples=80, n_features=4, random_state=0)
SEPARABLE = make_blobs(n_samples=60, centers=[[-2, -2], [2, 2]], random_state=0)
VALUES = make_regression(n_samples=60, n_features=3, noise=5.0, random_state=0)
#: every public estimator, small, with data it fits (a new estimator without an entry fails the test)
ESTIMATORS = {
    "CrossTrainingSVC": (lambda: algorithms.CrossTrainingSVC(n_subsets=2, random_state=0), CLASSES),
    "BaggedFirstStageSVC": (lambda: algorithms.BaggedFirstStageSVC(n_subsets=2, random_state=0), CLASSES),
    "EditedSVC": (lambda: algorithms.EditedSVC(random_state=0), CLASSES),
    "WilsonEdit": (lambda: algorithms.WilsonEdit(), CLASSES),
    "MultiEdit": (lambda: algorithms.MultiEdit(random_state=0), CLASSES),
    "Condense": (lambda: algorithms.Condense(random_state=0), CLASSES),
    "GatedSVMMixture": (lambda: algorithms.GatedSVMMixture(n_iter=2, random_state=0), CLASSES),
    "WenLuCascadeSVC": (lambda: algorithms.WenLuCascadeSVC(SVC(C=10.0)), CLASSES),
    "GrafCascadeSVC": (lambda: algorithms.GrafCascadeSVC(n_subsets=2), CLASSES),
    "PotentialSVClassifier": (lambda: algorithms.PotentialSVClassifier(), SEPARABLE),
    "PotentialSVFilter": (lambda: algorithms.PotentialSVFilter(), SEPARABLE),
    "DecompositionSVR": (lambda: algorithms.DecompositionSVR(), VALUES),
    "FullQPSVR": (lambda: algorithms.FullQPSVR(), VALUES),
}
#: what a selector (no predict) learned, compared instead of predictions
SELECTED = ("sample_indices_", "support_", "X_")


@pytest.fixture(scope="module")
def tracking(tmp_path_factory, empty_store):
    """MLflow's process-wide tracking URI on a store of this module's, as an MLflow user sets it (restored after),
    and an experiment whose artifacts are beside it (the store's default experiment keeps them in ./mlruns)."""
    folder = tmp_path_factory.mktemp("models")
    with closing(sqlite3.connect(empty_store)) as source, closing(sqlite3.connect(folder / "mlflow.db")) as copy:
        source.backup(copy)
    uri, before = f"sqlite:///{folder / 'mlflow.db'}", mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        yield uri, mlflow.MlflowClient(uri).create_experiment("models", (folder / "artifacts").as_uri())
    finally:
        mlflow.set_tracking_uri(before)


@pytest.fixture
def loads(monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_PICKLE_DESERIALIZATION", "true")


def fitted(name: str):
    make, (X, y) = ESTIMATORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small data's ConvergenceWarnings
        return make().fit(X, y), X


def svmrepro_types(model) -> set[str]:
    """The svmrepro classes skops writes into a file of ``model`` (its schema, walked)."""
    found, schema = set(), json.loads(zipfile.ZipFile(io.BytesIO(skops.io.dumps(model))).read("schema.json"))

    def walk(node):
        if isinstance(node, dict):
            if str(node.get("__module__", "")).startswith("svmrepro"):
                found.add(f"{node['__module__']}.{node['__class__']}")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


@pytest.mark.parametrize("name", algorithms.__all__)
def test_each_estimator_logs_with_mlflows_defaults_and_loads_back(name, tracking, loads, monkeypatch):
    """MLflow's inference of the pip requirements (a subprocess of about 15 s per model, which never imports
    svmrepro) is left out here; the test below keeps it."""
    monkeypatch.setattr(mlflow.models, "infer_pip_requirements", lambda path, flavor, fallback=None, **_: fallback)
    model, X = fitted(name)
    assert svmrepro_types(model) <= set(SKOPS_TRUSTED_TYPES)
    with mlflow.start_run(experiment_id=tracking[1]):
        info = mlflow.sklearn.log_model(model, name="model")
    flavor = mlflow.models.get_model_info(info.model_uri).flavors["sklearn"]
    assert flavor["serialization_format"] == "skops" and flavor.get("skops_trusted_types") is None  # the defaults
    loaded = mlflow.sklearn.load_model(info.model_uri)
    assert type(loaded) is type(model)
    if hasattr(model, "predict"):
        assert_array_equal(loaded.predict(X), model.predict(X))
    if hasattr(model, "decision_function"):
        assert_allclose(loaded.decision_function(X), model.decision_function(X))
    for attribute in (a for a in SELECTED if not hasattr(model, "predict") and hasattr(model, a)):
        assert_array_equal(getattr(loaded, attribute), getattr(model, attribute))


def test_every_declared_type_is_a_class_of_svmrepro():
    import importlib

    for name in SKOPS_TRUSTED_TYPES:
        module, _, cls = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), cls), type), name


@pytest.mark.parametrize("skops_first", [False, True], ids=["svmrepro first", "skops first"])
def test_importing_the_package_declares_its_types_to_skops_whichever_comes_first(skops_first):
    imports = ["import skops.io", "import svmrepro.algorithms"][:: -1 if not skops_first else 1]
    code = "; ".join([*imports, "from skops.io._trusted_types import SKLEARN_ESTIMATOR_TYPE_NAMES as trusted",
                      "print(set(svmrepro.algorithms.SKOPS_TRUSTED_TYPES) <= set(trusted))"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "True"


LOAD_ELSEWHERE = """
import sys
import mlflow.sklearn
import numpy as np

mlflow.set_tracking_uri(sys.argv[1])
default, declared, X = sys.argv[2], sys.argv[3], np.array(eval(sys.argv[4]))
try:
    mlflow.sklearn.load_model(default)
except Exception as error:
    print("without svmrepro:", type(error).__name__, "svmrepro.algorithms.wen_lu_cascade" in str(error))
print("declared:", mlflow.sklearn.load_model(declared).predict(X).tolist())
import svmrepro.algorithms
print("default:", mlflow.sklearn.load_model(default).predict(X).tolist())
"""


@pytest.mark.slow
def test_a_model_loads_in_another_process_as_its_mlmodel_declares(tracking, loads):
    """With the defaults, a process loads the model once it has imported svmrepro.algorithms; with
    ``skops_trusted_types=SKOPS_TRUSTED_TYPES`` (MLflow's door) the MLmodel file names the types, so any process
    loads it, and MLflow's inference of its pip requirements finds svmrepro."""
    model, X = fitted("WenLuCascadeSVC")
    with mlflow.start_run(experiment_id=tracking[1]):
        default = mlflow.sklearn.log_model(model, name="model")
        declared = mlflow.sklearn.log_model(model, name="declared", skops_trusted_types=list(SKOPS_TRUSTED_TYPES))
    requirements = mlflow.pyfunc.get_model_dependencies(declared.model_uri)
    with open(requirements) as handle:
        assert any(line.startswith("svmrepro==") for line in handle)
    done = subprocess.run([sys.executable, "-c", LOAD_ELSEWHERE, tracking[0], default.model_uri, declared.model_uri,
                           repr(X[:8].tolist())], capture_output=True, text=True, timeout=300, check=True)
    predicted = model.predict(X[:8]).tolist()
    assert done.stdout.splitlines() == ["without svmrepro: UntrustedTypesFoundException True", f"declared: {predicted}",
                                        f"default: {predicted}"], done.stderr[-3000:]
