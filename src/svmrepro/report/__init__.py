"""Outputs (tables and figures) built only from what the runs logged.

:mod:`.output` builds one output from its runs; :mod:`.claims` judges the claims on them. The package itself
imports nothing: its names below come from :mod:`.output` when first used, so the checks every command makes
before any run (which read :mod:`.claims`' schema) do not pay for matplotlib and MLflow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from svmrepro.report.output import Output, build_output, output_paths, regenerate_command, write_not_run

__all__ = ["Output", "build_output", "output_paths", "regenerate_command", "write_not_run"]


def __getattr__(name: str):
    if name in __all__:
        from svmrepro.report import output

        return getattr(output, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
