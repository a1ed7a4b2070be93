"""A real `dask.distributed.LocalCluster` of worker processes, started once for the tests that
need one (``cluster_client``); the others compute with Dask's local threaded scheduler."""

from __future__ import annotations

import pytest

pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="package")
def cluster_client():
    """A client of two worker processes (one thread each, 1 GiB each) on this machine."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="1GiB", dashboard_address=None)  # fmt: skip
    client = distributed.Client(cluster, set_as_default=False)  # others use local threads
    yield client
    client.close()
    cluster.close()
