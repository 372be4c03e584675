"""Markers of the Python tests: ``ray`` runs on a local Ray instance (Ray is installed by
.ci/run; select with ``-m ray``)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: runs on a local Ray instance (Ray installed by .ci/run)")
