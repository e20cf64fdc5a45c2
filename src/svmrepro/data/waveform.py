"""Breiman's waveform data, two-class (cross-training, sec. 4.3, Table 1: 400 train / 4600 test).

Generator (Breiman et al. 1984, CART, ch. 2; class numbers as in UCI ``waveform.c``): three
triangular base waves on positions ``i = 1..21``, ``h_p(i) = max(6 - |i - p|, 0)`` with peaks
``p = 7, 15, 11``. Class 0 mixes the waves peaking at 7 and 15, class 1 those at 7 and 11,
class 2 those at 15 and 11: ``x = u h_a + (1 - u) h_b + e`` with ``u ~ U(0, 1)`` and
``e ~ N(0, I_21)``; the three classes are equally likely.

Two-class version: Table 1 uses Rätsch's benchmark realisations; we have neither their files
nor a statement of how the three classes were made two. We take one class against the other
two (``positive_class`` is +1, the rest -1, so about 1/3 of the points are positive). Which
class is uncertain; the default 1 is chosen by error rates: an RBF SVM (C and gamma by 5-fold
CV, 5 seeds) errs 9.9 % on class 1 against the rest (class 2 is its mirror image under
``i -> 22 - i``, the same problem), matching the 9.9 % SVM error Rätsch et al. (2001) report
and the paper's 90.2 % accuracy; on class 0 against the rest it errs 11.9 %, and still 10.6 %
with 8000 training points.

Rätsch's sets are standardised over all 5000 points; with ``standardize`` we subtract the
generator's exact population mean and divide by its standard deviation, per feature (closed
form in :func:`population_moments`), which is what that pooled standardisation estimates.
Each seed draws a fresh realisation instead of re-splitting one fixed pool of 5000 points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.base import Dataset, DatasetSource, check_memory, check_param, rng_for

_POSITIONS = np.arange(1, 22)
_WAVES = np.maximum(6 - np.abs(_POSITIONS[None, :] - np.array([7, 15, 11])[:, None]), 0)
#: the two base waves (rows of _WAVES) each class mixes
_CLASS_WAVES = np.array([[0, 1], [0, 2], [1, 2]])


def population_moments() -> tuple[np.ndarray, np.ndarray]:
    """Exact per-feature mean and standard deviation of the three-class mixture.

    Per class, ``E[x] = (h_a + h_b) / 2`` and, as ``E[u^2] = E[(1-u)^2] = 1/3`` and
    ``E[u (1-u)] = 1/6``, ``E[x^2] = (h_a^2 + h_a h_b + h_b^2) / 3 + 1``.
    """
    ha, hb = _WAVES[_CLASS_WAVES[:, 0]], _WAVES[_CLASS_WAVES[:, 1]]
    mean = ((ha + hb) / 2).mean(axis=0)
    second = ((ha**2 + ha * hb + hb**2) / 3 + 1).mean(axis=0)
    return mean, np.sqrt(second - mean**2)


@dataclass(frozen=True)
class Waveform(DatasetSource):
    n_train: int = 400
    n_test: int = 4600
    positive_class: int = 1
    standardize: bool = True

    name = "waveform"

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 1, "an integer >= 1")
        check_param(
            owner, "positive_class", self.positive_class, self.positive_class in (0, 1, 2),
            "a class of the three-class generator: 0, 1 or 2",
        )
        check_param(
            owner, "standardize", self.standardize, isinstance(self.standardize, bool), "true or false"
        )
        check_memory(self.name, {"n_train": self.n_train, "n_test": self.n_test}, _POSITIONS.size + 1)

    def _draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        label = rng.integers(0, 3, size=n)
        u = rng.uniform(size=(n, 1))
        waves = _WAVES[_CLASS_WAVES[label]]
        X = u * waves[:, 0] + (1 - u) * waves[:, 1] + rng.standard_normal((n, _POSITIONS.size))
        if self.standardize:
            mean, std = population_moments()
            X = (X - mean) / std
        return X, np.where(label == self.positive_class, 1, -1)

    def load(self, seed: int) -> Dataset:
        X_train, y_train = self._draw(self.n_train, rng_for(seed, "waveform/train"))
        X_test, y_test = self._draw(self.n_test, rng_for(seed, "waveform/test"))
        return Dataset(self.name, X_train, y_train, X_test, y_test, source_fingerprint=self.fingerprint())
