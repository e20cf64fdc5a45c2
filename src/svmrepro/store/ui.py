"""The links ``make ui`` prints: MLflow's UI on each experiment's runs table.

MLflow 3.17's UI opens an experiment in the view its workflow switch picks ("GenAI" or "Model
training", atop its sidebar): GenAI until a user picks the other, which the browser then
remembers. An experiment's ``mlflow.experimentKind`` tag does not change that; the switch reads
``workflowType`` from the page's address first, so a link that carries
``workflowType=machine_learning`` opens the runs table.

    python -m svmrepro.store.ui --tracking-uri sqlite:///mlflow.db --url http://127.0.0.1:5000
"""

from __future__ import annotations

import argparse

from svmrepro.store.client import Store

#: the UI's address of the experiments and of one experiment's runs table, in its "Model training" view
EXPERIMENTS_PAGE = "{url}/#/experiments?workflowType=machine_learning"
RUNS_TABLE = "{url}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def runs_table_url(url: str, experiment_id: str) -> str:
    return RUNS_TABLE.format(url=url.rstrip("/"), experiment_id=experiment_id)


def links(store: Store, url: str) -> list[str]:
    """The lines ``make ui`` prints: the experiments page, then each experiment's runs table by name."""
    lines = [f"MLflow UI: {EXPERIMENTS_PAGE.format(url=url.rstrip('/'))}",
             "  (pick \"Model training\" atop its sidebar once: the browser keeps it), or an experiment's runs:"]
    experiments = sorted(store.experiments().items(), key=lambda item: item[1])
    return lines + [f"  {name}: {runs_table_url(url, experiment_id)}" for experiment_id, name in experiments]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m svmrepro.store.ui", description=__doc__.splitlines()[0])
    parser.add_argument("--tracking-uri", required=True, help="the store the UI serves")
    parser.add_argument("--url", required=True, help="where the UI listens, e.g. http://127.0.0.1:5000")
    args = parser.parse_args(argv)
    print("\n".join(links(Store(args.tracking_uri), args.url)), flush=True)


if __name__ == "__main__":
    main()
