"""Runs say where their sub-fits ran: the ``parallel.*`` tags (svmrepro.placement).

A separate-process dask cluster's tags are checked in tests/test_cluster_cli.py."""

import socket

from joblib import cpu_count

from svmrepro import placement
from svmrepro.placement import hosts_text, placement_tags
from svmrepro.runner import FINISHED, run
from svmrepro.store import Store


def test_a_local_run_tags_this_host_and_the_workers_its_n_jobs_gives(tiny_cfg, store_uri):
    cfg = tiny_cfg("algorithm=cross_training", "algorithm.n_subsets=2", "algorithm.n_jobs=-1",
                   "parallel.backend=threading")
    result = run(cfg, {"experiment": "test/placement", "algorithm": "cross_training"})
    assert result.status == FINISHED
    tags = Store(store_uri).runs_frame("test/placement").iloc[0].filter(like="tags.parallel")
    workers = cpu_count()
    assert tags.to_dict() == {
        "tags.parallel.backend": "threading",
        "tags.parallel.workers": str(workers),
        "tags.parallel.hosts": f"{socket.gethostname()}: {workers} worker{'s' * (workers > 1)} x 1 thread",
        "tags.parallel.n_jobs": str(workers),
    }


def test_a_cluster_address_is_tagged_with_its_password_masked(monkeypatch):
    secret = "s3cr@t:pw"

    def cluster():  # a scheduler behind TLS with credentials in its address, three workers on two hosts
        return f"tls://svm:{secret}@10.0.0.1:8786", [("10.0.0.2", 4), ("10.0.0.1", 2), ("10.0.0.2", 4)]

    monkeypatch.setitem(placement.CLUSTERS, "dask", cluster)
    tags = placement_tags("dask", 2)
    assert tags == {
        "parallel.address": "tls://svm:***@10.0.0.1:8786",
        "parallel.workers": "3",
        "parallel.hosts": "10.0.0.1: 1 worker x 2 threads; 10.0.0.2: 2 workers x 4 threads",
        "parallel.n_jobs": "2",
    }
    assert not any("s3cr" in value for value in tags.values())


def test_a_large_cluster_is_summed_up_within_mlflow_s_tag_limit():
    workers = [(f"node-{i:04d}.cluster.example.org", 8) for i in range(5000)] * 2
    text = hosts_text(workers)
    assert len(text) < 8000
    assert text.startswith("node-0000.cluster.example.org: 2 workers x 8 threads; ")
    assert text.endswith(f"; ... and {2 * (5000 - placement.MAX_LISTED)} other workers on "
                         f"{5000 - placement.MAX_LISTED} hosts")


def test_a_benchmark_s_worker_counts_are_tagged_each():
    assert placement_tags("loky", [1, 2])["parallel.n_jobs"] == "1,2"
