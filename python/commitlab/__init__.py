"""commitlab from Python: run, compare and sweep commit protocols on emulated NAND flash.

    import commitlab
    df = commitlab.compare()                       # the main job: every protocol
    df = commitlab.sweep({"ftl.gc_policy": ["greedy", "cost-benefit"]}, protocols=["scc", "lighttx"])
    m = commitlab.run({"protocol.name": "tc", "workload.kind": "txn"})

Configurations are dicts, nested (``{"nand": {"channels": 4}}``) or with dotted keys
(``{"nand.channels": 4}``); they mean exactly what ``--set key=value`` means on the command
line (``commitlab.explain(key)`` or docs/CONFIG.md describe every key). Results are the same
records the command line writes with ``--json``/``--csv`` (docs/METRICS.md): one DataFrame row
per point, swept keys first, then protocol, status, reason, seed and the metrics in the units
their names say; ``config`` holds each point's full effective configuration.

Simulations run in Rust with the GIL released. Bad input raises ``CommitlabError`` (a
``ValueError``) with the command line's message.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from . import _commitlab
from . import sqlite  # commitlab.sqlite.connect: SQLite on an emulated device
from ._commitlab import CommitlabError

__all__ = ["run", "compare", "sweep", "protocols", "explain", "CommitlabError", "records_to_frame"]


def _config_json(config: Optional[Mapping[str, Any]]) -> str:
    if config is None:
        return "{}"
    if not isinstance(config, Mapping):
        raise CommitlabError("config must be a dict")
    return json.dumps(dict(config))


def _protocol_list(protocols: Optional[Iterable[str] | str]) -> List[str]:
    if protocols is None:
        return []
    if isinstance(protocols, str):
        return [protocols]
    return list(protocols)


def _grid_pairs(grid: Optional[Mapping[str, Sequence[Any]]]) -> List[list]:
    if grid is None:
        return []
    if not isinstance(grid, Mapping):
        raise CommitlabError("grid must be a dict of key -> list of values")
    out = []
    for k, vs in grid.items():
        if isinstance(vs, (str, bytes)) or not isinstance(vs, Iterable):
            vs = [vs]
        out.append([k, list(vs)])
    return out


def records_to_frame(records: List[Dict[str, Any]]):
    """Records (as the command line's ``--json`` writes them) as a DataFrame: swept keys
    first, then the row's columns, then ``config`` (a dict per row). ``metrics`` (the full
    run metrics) stays out of the frame; use ``run`` or the JSON for it."""
    import pandas as pd

    rows = []
    for r in records:
        row: Dict[str, Any] = {}
        row.update(r.get("swept", {}))
        for k, v in r.items():
            if k not in ("swept", "metrics"):
                row[k] = v
        rows.append(row)
    return pd.DataFrame(rows)


def run(config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None) -> Dict[str, Any]:
    """Runs one configuration (over the built-in defaults, as ``commitlab run``) and returns
    its metrics as a dict (docs/METRICS.md)."""
    return json.loads(_commitlab.run_json(_config_json(config), preset))


def compare(
    config: Optional[Mapping[str, Any]] = None,
    *,
    protocols: Optional[Iterable[str] | str] = None,
    preset: Optional[str] = None,
    jobs: int = 0,
    adapt: bool = True,
):
    """Every protocol (or ``protocols``) on one configuration, as ``commitlab compare``:
    the main job's transactional workload unless ``config``/``preset`` change it. Returns a
    DataFrame with one row per protocol. ``jobs`` = 0 uses one thread per core."""
    text = _commitlab.study_json(_config_json(config), preset, "[]", _protocol_list(protocols), jobs, adapt)
    return records_to_frame(json.loads(text))


def sweep(
    grid: Mapping[str, Sequence[Any]],
    config: Optional[Mapping[str, Any]] = None,
    *,
    protocols: Optional[Iterable[str] | str] = None,
    preset: Optional[str] = None,
    jobs: int = 0,
    adapt: bool = True,
    engine: str = "local",
):
    """Every combination of ``grid``'s values (first key varying slowest) x protocols, as
    ``commitlab sweep``. One row per point, a column per swept key.

    ``engine="local"`` runs the points on a thread pool in this process; ``engine="ray"``
    runs each point as a Ray task (on the cluster ``ray.init`` connected to, or a local Ray
    started with default settings when none is). Both give the same rows in the same order
    (only ``wall_time_s`` differs): the points are planned and checked here first, and every
    task runs the same Rust code."""
    pairs = _grid_pairs(grid)
    cfg = _config_json(config)
    protos = _protocol_list(protocols)
    if engine == "local":
        text = _commitlab.study_json(cfg, preset, json.dumps(pairs), protos, jobs, adapt)
        return records_to_frame(json.loads(text))
    if engine == "ray":
        from ._ray import run_points

        points = json.loads(_commitlab.plan_json(cfg, preset, json.dumps(pairs), protos, adapt))
        records = run_points(cfg, preset, points, adapt)
        return records_to_frame(records)
    raise CommitlabError(f"unknown engine '{engine}' (known: local, ray)")


def protocols() -> List[str]:
    """The registered protocol names."""
    return list(_commitlab.protocols())


def explain(key: str) -> str:
    """One configuration key (or section) explained: type, default, allowed values, unit."""
    return _commitlab.explain(key)


def _expand(grid: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    """The grid's points in run order (first key slowest), for callers planning their own."""
    keys = list(grid)
    return [dict(zip(keys, vs)) for vs in itertools.product(*(grid[k] for k in keys))]
