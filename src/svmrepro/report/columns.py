"""What the cells of a runs table may hold, by column name: the rules :func:`svmrepro.report.runs.read_runs`
checks a hand-edited runs CSV against, declared here once as data (column-name pattern -> rule).

A column is checked by every rule whose pattern matches its whole name, in order, so a count is
first a finite number, then one >= 0. The names are the runner's: counts are ``n_*`` (``n_sv``,
``step1.T1.n_train``, ``final_n_pos``), ``*iterations``, ``*evaluations`` and ``*_steps``; errors
end in ``error``; times in seconds end in ``_s``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Rule:
    """The cells of the columns whose name matches ``pattern`` are ``expected`` (said in the error)."""

    pattern: str
    expected: str
    #: text cells -> which of them are valid
    accepts: Callable[[pd.Series], pd.Series]

    def applies_to(self, column: str) -> bool:
        return re.fullmatch(self.pattern, column) is not None


def number(low: float = -np.inf, high: float = np.inf) -> Callable[[pd.Series], pd.Series]:
    """A finite number in [``low``, ``high``], or empty: a metric the run did not log."""
    def accepts(text: pd.Series) -> pd.Series:
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            return (text == "") | (np.isfinite(values) & (values >= low) & (values <= high))
    return accepts


def one_of(*words: str) -> Callable[[pd.Series], pd.Series]:
    """One of ``words``, or empty: a tag the run did not set (runs older than the tag)."""
    return lambda text: text.isin(("", *words))


def whole_number(text: pd.Series) -> pd.Series:
    return text.str.fullmatch(r"\d+")


#: the rules; a column no pattern matches may hold any text (params are as MLflow stored them)
RULES = (
    Rule(r"metrics\..+", "a finite number (an empty cell means the run did not log it)", number()),
    Rule(r"metrics\.(.+[._])?(n_\w+|\w*iterations|\w*evaluations|\w+_steps)", "a count >= 0", number(low=0)),
    Rule(r"metrics\..*error", "an error rate in [0, 1]", number(low=0, high=1)),
    Rule(r"metrics\..+_s", "a time in seconds >= 0", number(low=0)),
    Rule(r"(params|tags)\.seed", "a seed, a whole number >= 0", whole_number),
    Rule(r"tags\.timing_reliable", "true or false", one_of("true", "false")),
    Rule(r"tags\.timing", "exclusive or shared", one_of("exclusive", "shared")),
    # True/False: as the runner wrote it until it wrote what the other tags hold (cross_training/fig1, fig3_spread)
    Rule(r"tags\.git_dirty", "true, false or unknown", one_of("true", "false", "unknown", "True", "False")),
)


def first_violation(table: pd.DataFrame) -> tuple[int, str, Rule] | None:
    """The first cell of ``table`` (text, row-major, as the file reads) that breaks a rule, with the
    rule: (row position, column, rule); None when every cell keeps them."""
    found = None
    for column in table.columns:
        for rule in (rule for rule in RULES if rule.applies_to(column)):
            bad = np.flatnonzero(~np.asarray(rule.accepts(table[column]), dtype=bool))
            if bad.size and (found is None or bad[0] < found[0]):
                found = (int(bad[0]), column, rule)
    return found
