"""Which SVM solver a run's estimator fits with, and its version: the ``solver`` tags of a run.

The same C-SVC problem is solved by LIBSVM (scikit-learn's ``sklearn.svm``) or by Intel oneDAL
(scikit-learn-intelex's ``sklearnex.svm``, ``algorithm=svc_onedal``), alone or as the sub-SVMs of a
meta-estimator; a timing is read against the solver that made it. So the solver is read from the
estimator itself and every estimator nested in its parameters (a cascade's ``estimator=``, a model
search's), never from the config's name:

- ``solver``: the solvers found, sorted and joined by ``+`` (``libsvm``, ``onedal``, ``libsvm+onedal``);
- ``solver.version``: the version of the distribution that ships each, in the same order (LIBSVM is
  the copy scikit-learn bundles; sklearnex's ``__version__`` is a placeholder, so the installed
  distribution's metadata is read).

An estimator without either (an MLP, DecompositionSVR) gets no solver tags.
"""

from __future__ import annotations

from importlib.metadata import version

from sklearn.base import BaseEstimator
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

SOLVER_TAG, SOLVER_VERSION_TAG = "solver", "solver.version"


def _solver(model) -> tuple[str, str] | None:
    """(solver, distribution) of one estimator; oneDAL's classes subclass scikit-learn's, so it is asked first."""
    if type(model).__module__.partition(".")[0] == "sklearnex":
        return "onedal", "scikit-learn-intelex"
    if isinstance(model, (SVC, NuSVC, SVR, NuSVR, OneClassSVM)):
        return "libsvm", "scikit-learn"
    return None


def solver_tags(estimator) -> dict[str, str]:
    """``solver`` and ``solver.version`` of ``estimator`` and the estimators nested in it ({} for none)."""
    nested = [value for value in estimator.get_params(deep=True).values() if isinstance(value, BaseEstimator)]
    found = sorted({s for s in map(_solver, [estimator, *nested]) if s is not None})
    if not found:
        return {}
    return {SOLVER_TAG: "+".join(name for name, _ in found),
            SOLVER_VERSION_TAG: "+".join(version(distribution) for _, distribution in found)}
