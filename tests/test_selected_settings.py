"""Settings chosen on validation rows by a selection experiment are the ones its users run with.

Each selection config states its rule; these tests apply the rule to the committed runs CSV of the
selection and compare with the values the using experiment's config holds.
"""

from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]


def runs(output: str) -> pd.DataFrame:
    return pd.read_csv(ROOT / "results" / f"{output}.runs.csv")


def experiment(name: str) -> dict:
    return yaml.safe_load((ROOT / "conf" / "experiment" / f"{name}.yaml").read_text())


def test_svr_free_regime_uses_the_pair_regime_chose():
    """Rule of svr_decomposition/regime: bounded share under 5 % at every size, then lowest mean val_mse."""
    table = runs("svr_decomposition/regime")
    key = ["params.algorithm.gamma", "params.algorithm.epsilon"]
    per_pair = table.groupby(key).agg(bounded=("metrics.bounded_sv_fraction", "max"),
                                      val_mse=("metrics.val_mse", "mean"))
    gamma, epsilon = per_pair[per_pair.bounded < 0.05].val_mse.idxmin()
    chosen = experiment("svr_decomposition/table1_pva97nk_free")["algorithm"]
    assert (chosen["gamma"], chosen["epsilon"]) == (gamma, epsilon)


def test_mixture_val_rows_use_the_experts_kernel_expert_kernel_chose():
    """Rule of mixture/expert_kernel: the (gamma, C) of the lowest val_error."""
    table = runs("mixture/expert_kernel")
    best = table.loc[table["metrics.val_error"].idxmin()]
    expected = (best["params.algorithm.estimator.gamma"], best["params.algorithm.estimator.C"])
    sweep = experiment("mixture/table1")["sweep"]
    rows = [row for mode in ("quick", "full") for row in sweep[mode] if row["label"].endswith("_val")]
    assert rows, "mixture/table1 has no *_val rows"
    for row in rows:
        assert (row["algorithm.estimator.gamma"], row["algorithm.estimator.C"]) == expected, row["label"]
