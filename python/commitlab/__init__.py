"""commitlab from Python: run, compare and sweep commit protocols on emulated NAND flash.

    import commitlab
    df = commitlab.compare()                       # the main job: every protocol
    df = commitlab.sweep({"ftl.gc_policy": ["greedy", "cost-benefit"]}, protocols=["scc", "lighttx"])
    m = commitlab.run({"protocol.name": "tc", "workload.kind": "txn"})
    h = commitlab.run({"workload.kind": "host", "host.strategy": "wal", "host.workload": "tpcc"})
    c = commitlab.crash({"protocol.name": "bpcc"}, schedules=1000)   # one row per state group
    r = commitlab.reproduce("txflash", quick=True)                   # one row per claim
    s = commitlab.soak(schedules=5000, state_file="soak.json")        # random double crashes

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
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from . import _commitlab
from . import sqlite  # commitlab.sqlite.connect: SQLite on an emulated device
from ._commitlab import CommitlabError

__all__ = [
    "run",
    "compare",
    "sweep",
    "crash",
    "reproduce",
    "soak",
    "SoakResult",
    "protocols",
    "presets",
    "effective_config",
    "trace_stats",
    "explain",
    "CommitlabError",
    "records_to_frame",
]


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
            if k not in ("swept", "metrics", "config"):
                row[k] = v
        # Last, so that head() shows the metrics before a column of dicts.
        row["config"] = r.get("config")
        rows.append(row)
    return pd.DataFrame(rows)


def run(config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None) -> Dict[str, Any]:
    """Runs one configuration (over the built-in defaults, as ``commitlab run``) and returns
    its metrics as a dict (docs/METRICS.md).

    With ``"workload.kind": "host"`` it runs the DBMS host (``host.strategy``,
    ``host.workload``, ...) as ``commitlab run --host S`` does, on a device sized to the
    database unless a preset or a geometry key (``nand.channels``, ``nand.blocks_per_plane``,
    ...) chose it. A key the chosen run does not read (a ``host.*`` key without
    ``workload.kind = "host"``) raises ``CommitlabError`` naming what would read it."""
    return json.loads(_commitlab.run_json(_config_json(config), preset))


def crash(
    config: Optional[Mapping[str, Any]] = None,
    *,
    schedules: Optional[int] = None,
    double: bool = False,
    preset: Optional[str] = None,
    min_states: Optional[int] = None,
    variants: bool = False,
    host: Optional[str] = None,
):
    """Crash-checks a configuration, as ``commitlab crash`` does: the protocol
    ``protocol.name`` (default ``none``) on the crash checker's small device under
    ``config``, or with ``"workload.kind": "host"`` (or ``host="wal"``, ...) the host strategy
    ``host.strategy`` over it (``commitlab crash --host S``).

    ``schedules=None`` checks every crash state (exhaustive; a device protocol under each
    timing profile of ``check::timing``), ``schedules=N`` N random ones; ``double=True``
    also crashes inside recovery. ``min_states=K`` (device) goes on drawing random schedules,
    in batches, until the protocol has K crash states in all (``--min-states``).
    ``variants=True`` (device) checks every safety variant (``crash --variants``): the
    non-default position of each option that switches a protocol's safety mechanism, for the
    protocol ``config`` names or for every protocol, exhaustively plus ``schedules`` random
    states each. ``host="all"`` checks the host matrix (``crash --host all``): every recovery
    strategy x protocol (and wal x update strategy), exhaustively on the tiny host run, plus
    ``schedules`` random states with crashes inside recovery on a larger one; pairs a
    strategy does not support are rows with ``refused`` set.

    Returns a DataFrame with one row per group of states checked together (protocol, host,
    update, external, variant, mode, timing, schedules, states, nested_states, violations,
    first_violation, replay, refused): ``replay`` is the command line that replays the
    group's first violation, empty when it has none."""
    import pandas as pd

    if schedules is not None and (not isinstance(schedules, int) or schedules < 1):
        raise CommitlabError("schedules must be a positive integer (or None: exhaustive)")
    if min_states is not None and (not isinstance(min_states, int) or min_states < 1):
        raise CommitlabError("min_states must be a positive integer")
    if host is not None and not isinstance(host, str):
        raise CommitlabError("host must be a recovery strategy's name or \"all\"")
    text = _commitlab.crash_json(
        _config_json(config), preset, schedules, bool(double), min_states, bool(variants), host
    )
    return pd.DataFrame(json.loads(text))


def reproduce(paper: str, *, quick: bool = True, jobs: int = 0, engine: str = "local"):
    """Reproduces one paper's claims (``txflash``, ``lighttx``, ``flagcommit``, ``ipa``,
    ``pcmlogging`` or ``all``) as ``commitlab reproduce --paper P [--quick]`` measures them,
    without writing report files. Returns a DataFrame with one row per claim: paper, id,
    claim, paper_value, measured, direction and magnitude (the verdict's two axes in words),
    ratio (measured / paper, when the paper gives a number) and note; ``df.attrs["claims_json"]``
    holds the text the command line writes as claims.json.

    ``engine="local"`` runs the points on ``jobs`` threads here (0: one per core).
    ``engine="ray"`` runs every point as a Ray task (on the cluster ``ray.init`` connected to,
    or a local Ray), each declaring the memory the local engine's admission rule charges it
    as its ``memory=`` resource; the claims are the local engine's, byte for byte, for every
    paper (the host-engine points of Flag Commit, In-Place Appends and PCMLogging travel as
    their paper's task and come back with their full metrics, histograms included)."""
    import pandas as pd

    if engine == "local":
        r = json.loads(_commitlab.reproduce_json(paper, bool(quick), jobs))
    elif engine == "ray":
        from ._ray import reproduce_rounds

        r = reproduce_rounds(paper, bool(quick))
    else:
        raise CommitlabError(f"reproduce: unknown engine '{engine}' (known: local, ray)")
    df = pd.DataFrame(r["claims"])
    df.attrs["claims_json"] = r["claims_json"]
    return df


@dataclass
class SoakResult:
    """What ``soak`` checked, in all (a resumed soak's totals include the earlier runs').

    ``per_item`` is a DataFrame with one row per protocol or host cell (item, schedules,
    states, violations); ``failures`` holds the command line that replays each violating
    batch's first violation (at most 50); ``repeat`` is the command that repeats the whole
    soak (``commitlab soak --seed S ...``); ``drawn`` says the seed was drawn."""

    seed: int
    drawn: bool
    schedules: int
    states: int
    nested_states: int
    violations: int
    wall_s: float
    per_item: Any
    failures: List[str] = field(default_factory=list)
    repeat: str = ""
    state_file: str = ""

    @property
    def ok(self) -> bool:
        return self.violations == 0


def soak(
    config: Optional[Mapping[str, Any]] = None,
    *,
    protocols: Optional[Iterable[str] | str] = None,
    schedules: int = 10_000_000,
    minutes: Optional[float] = None,
    hosts: bool = False,
    seed: Optional[int] = None,
    draw_seed: bool = False,
    state_file: str = "soak.state.json",
    preset: Optional[str] = None,
) -> SoakResult:
    """Random double-crash schedules over every protocol (or ``protocols``), as ``commitlab
    soak``: batches of 512 schedules per protocol, each under a timing profile drawn from the
    seed and the batch number, on the crash checker's small device under ``config``, until
    ``schedules`` schedules in all (or ``minutes`` minutes, checked between rounds).
    ``hosts=True`` adds every cell of ``crash(host="all")`` that is not refused, a fresh
    recording (seed + batch) with 1,000 random crash states per batch. ``seed`` sets the
    seed (default: the configuration's); ``draw_seed=True`` draws a fresh one instead (not
    with ``seed``), so each call explores other schedules. The progress is saved to
    ``state_file`` after every round, and a call whose ``state_file`` exists resumes it (the
    same seed, protocols and hosts are required; the command line's state files are the same
    format, so either resumes the other's).

    Returns a ``SoakResult`` (totals, ``per_item`` DataFrame, the replay command of each
    violating batch's first violation in ``failures``). Violations do not raise: check
    ``result.violations`` or ``result.ok``."""
    import pandas as pd

    if not isinstance(schedules, int) or schedules < 1:
        raise CommitlabError("schedules must be a positive integer")
    if minutes is not None and (not isinstance(minutes, (int, float)) or minutes <= 0):
        raise CommitlabError("minutes must be a positive number")
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise CommitlabError("seed must be a non-negative integer")
    if draw_seed and seed is not None:
        raise CommitlabError("draw_seed and seed exclude each other: the drawn seed replaces seed")
    if draw_seed:
        import secrets

        # Below 2^53, as the command line draws them, so every tool keeps them exact.
        seed = secrets.randbits(53)
    text = _commitlab.soak_json(
        _config_json(config),
        preset,
        _protocol_list(protocols),
        schedules,
        None if minutes is None else float(minutes),
        bool(hosts),
        seed,
        bool(draw_seed),
        str(state_file),
    )
    r = json.loads(text)
    st = r["state"]
    per = pd.DataFrame(
        [
            {"item": k, "schedules": v[0], "states": v[1], "violations": v[2]}
            for k, v in st["per_protocol"].items()
        ],
        columns=["item", "schedules", "states", "violations"],
    )
    return SoakResult(
        seed=st["seed"],
        drawn=bool(r["drawn"]),
        schedules=st["schedules"],
        states=st["states"],
        nested_states=st["nested_states"],
        violations=st["violations"],
        wall_s=st["wall_s"],
        per_item=per,
        failures=list(st["failures"]),
        repeat=r["repeat"],
        state_file=str(state_file),
    )


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


def presets():
    """The presets (as ``commitlab presets``): one DataFrame row per preset with its
    capacity_bytes, planes (parallel units), page_bytes, pages_per_block and cell type."""
    import pandas as pd

    return pd.DataFrame(json.loads(_commitlab.presets_json()))


def effective_config(
    config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None, main_job: bool = False
) -> Dict[str, Any]:
    """The full configuration ``config`` (and ``preset``) give over the built-in defaults, as
    ``commitlab config`` prints it (as a nested dict); ``main_job=True`` starts from the main
    job's base, as ``commitlab config --main-job`` and ``compare`` do."""
    return json.loads(_commitlab.config_json(_config_json(config), preset, bool(main_job)))


def trace_stats(trace: str, config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None) -> Dict[str, Any]:
    """A recorded page-access trace (docs/TRACES.md) next to the generator's TPC-C, as
    ``commitlab trace-stats --trace F`` compares them: ``{"trace": stats, "generator_tpcc":
    stats}`` with transactions by type, pages per transaction, reads against writes and how
    concentrated the accesses are on hot pages; the generator's TPC-C is ``host.tpcc`` of
    ``config`` (the same number of transactions, drawn client by client). A bad trace
    raises ``CommitlabError`` naming the file and line."""
    return json.loads(_commitlab.trace_stats_json(str(trace), _config_json(config), preset))


def explain(key: str) -> str:
    """One configuration key (or section) explained: type, default, allowed values, unit."""
    return _commitlab.explain(key)


def _expand(grid: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    """The grid's points in run order (first key slowest), for callers planning their own."""
    keys = list(grid)
    return [dict(zip(keys, vs)) for vs in itertools.product(*(grid[k] for k in keys))]
