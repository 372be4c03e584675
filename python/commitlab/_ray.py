"""The Ray engine of ``commitlab.sweep``: one Ray task per point.

Each task calls the same Rust entry point the local engine uses for a point
(``_commitlab.point_json``), so a point gives the same record wherever it runs. Results are
gathered in plan order. Works unchanged on a cluster: connect first with
``ray.init(address="ray://head:10001")`` (or ``address="auto"`` on a cluster node); the
workers need the ``commitlab`` package installed (``pip install ./python`` on every node, or a
``runtime_env``). Without a prior ``ray.init``, a local Ray is started with default settings.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


def _point(config_json: str, preset: Optional[str], swept_json: str, protocol: str, adapt: bool) -> Dict[str, Any]:
    from . import _commitlab

    return json.loads(_commitlab.point_json(config_json, preset, swept_json, protocol, adapt))


def run_points(config_json: str, preset: Optional[str], points: List[list], adapt: bool) -> List[Dict[str, Any]]:
    import ray

    if not ray.is_initialized():
        ray.init()
    task = ray.remote(num_cpus=1)(_point)
    refs = [task.remote(config_json, preset, json.dumps(swept), protocol, adapt) for swept, protocol in points]
    return ray.get(refs)
