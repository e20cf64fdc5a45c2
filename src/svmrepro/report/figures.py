"""One figure per output: a panel per metric, our mean ± std per group, the paper's values beside."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402

from svmrepro.report.spec import ReportSpec  # noqa: E402
from svmrepro.report.tables import x_label  # noqa: E402


def plot(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec, path: Path) -> None:
    numeric_x = pd.api.types.is_numeric_dtype(table["x"])
    fig, axes = plt.subplots(1, len(spec.metrics), figsize=(4.2 * len(spec.metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], spec.metrics):
        ours = table[table["runs"] > 0]
        for group, rows in ours.groupby("group", sort=False):  # in the table's order
            ax.errorbar(
                rows["x"], rows[f"{metric}_mean"], yerr=rows[f"{metric}_std"].fillna(0),
                marker="o", capsize=3, label=f"ours: {group}",
            )
        if paper is not None:
            _draw_paper(ax, paper[paper["metric"] == metric], numeric_x)
        ax.set_xlabel(spec.x_label or spec.x)
        ax.set_ylabel(metric)
        if spec.logx and numeric_x:
            ax.set_xscale("log")
        if not numeric_x:
            ax.tick_params(axis="x", labelrotation=30)
        if metric in spec.logy:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    save_figure(fig, spec.title, path)


def save_figure(fig, title: str, path: Path) -> None:
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _draw_paper(ax, paper: pd.DataFrame, numeric_x: bool) -> None:
    for group, rows in paper.groupby("group"):
        label = f"paper: {group}"
        for _, row in rows.iterrows():
            if pd.isna(row["x"]):  # applies to every x: a band or a line
                if pd.notna(row["value"]):
                    ax.axhline(row["value"], ls="--", color="grey", label=label)
                else:
                    ax.axhspan(row["low"], row["high"], color="grey", alpha=0.15, label=label)
            else:  # a category axis puts the paper's point on our row of the same label
                x = float(row["x"]) if numeric_x else x_label(row["x"])
                if pd.notna(row["value"]):
                    ax.plot([x], [row["value"]], "ks", mfc="none", label=label)
                else:
                    ax.plot([x, x], [row["low"], row["high"]], "k-", lw=3, alpha=0.5, label=label)
            label = None  # one legend entry per group
