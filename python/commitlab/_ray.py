"""The Ray engine: one Ray task per point, for ``commitlab.sweep`` and ``commitlab.reproduce``
(and ``commitlab reproduce --engine ray``, which runs ``python -m commitlab._ray``).

Each task calls the same Rust entry point the local engine uses for a point
(``_commitlab.point_json`` for a sweep, ``_commitlab.reproduce_point_json`` for a
reproduction, with the point's task: ``run_all``'s run or a paper's own function, such as
Flag Commit's host run on its aged device), so a point gives the same record wherever it runs. Results are gathered in
plan order. Works unchanged on a cluster: connect first with
``ray.init(address="ray://head:10001")`` (or ``address="auto"`` on a cluster node); the
workers need the ``commitlab`` package installed (``pip install ./python`` on every node, or a
``runtime_env``). Without a prior ``ray.init``, a local Ray is started with default settings.

Memory: a reproduction's point declares what the local engine's admission rule charges it
(``runner::job_bytes``: its device, and what measuring recovery adds) as the task's
``memory=``, so Ray's scheduler starts a point on a node only while the memory declared by the
points running there leaves room for it: the local rule, kept per node. A point larger than
every node's memory resource declares the largest one (it then runs alone on that node), as the
local rule lets a job larger than the budget run alone.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict, List, Optional


def _point(config_json: str, preset: Optional[str], swept_json: str, protocol: str, adapt: bool) -> Dict[str, Any]:
    from . import _commitlab

    return json.loads(_commitlab.point_json(config_json, preset, swept_json, protocol, adapt))


def _init():
    import ray

    if not ray.is_initialized():
        ray.init()
    return ray


def run_points(config_json: str, preset: Optional[str], points: List[list], adapt: bool) -> List[Dict[str, Any]]:
    ray = _init()
    task = ray.remote(num_cpus=1)(_point)
    refs = [task.remote(config_json, preset, json.dumps(swept), protocol, adapt) for swept, protocol in points]
    return ray.get(refs)


def _reproduce_point(config_json: str, task_json: str) -> str:
    from . import _commitlab

    return _commitlab.reproduce_point_json(config_json, task_json)


def _largest_node_memory(ray) -> int:
    """The largest ``memory`` resource of a live node (0 if Ray reports none)."""
    best = 0
    for n in ray.nodes():
        if n.get("Alive"):
            best = max(best, int(n.get("Resources", {}).get("memory", 0)))
    return best


def run_reproduce_points(points: List[Dict[str, Any]], say: Optional[Callable[[str], None]] = None) -> List[str]:
    """Runs a round's pending points, one Ray task each (costliest first), each declaring its
    admission charge as ``memory=``; returns their results (JSON text) in ``points`` order."""
    ray = _init()
    task = ray.remote(num_cpus=1)(_reproduce_point)
    cap = _largest_node_memory(ray)
    order = sorted(range(len(points)), key=lambda i: (-points[i]["cost_estimate"], i))
    refs: Dict[Any, int] = {}
    for i in order:
        mem = int(points[i]["memory_bytes"])
        if cap:
            mem = min(mem, cap)
        opts = {"memory": mem} if mem > 0 else {}
        refs[task.options(**opts).remote(points[i]["config"], json.dumps(points[i]["task"]))] = i
    out: List[Optional[str]] = [None] * len(points)
    waiting = list(refs)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        for ref in done:
            i = refs[ref]
            out[i] = ray.get(ref)
            if say is not None:
                r = json.loads(out[i])
                say(f"{points[i]['label']} ({r['cpu_s']:.1f} CPU-s on Ray)")
    return [o for o in out if o is not None]


def reproduce_rounds(paper: str, quick: bool, say: Optional[Callable[[str], None]] = None) -> Dict[str, Any]:
    """Reproduces ``paper`` with every point a Ray task, round by round (the Rust side's
    ``reproduce::remote``): returns the last round (claims) and every point's result."""
    from . import _commitlab

    results: List[Dict[str, Any]] = []
    while True:
        r = json.loads(_commitlab.reproduce_round_json(paper, bool(quick), json.dumps(results)))
        pending = r["pending"]
        if not pending:
            r["results"] = results
            return r
        if say is not None:
            say(f"running {len(pending)} points on Ray")
        for text in run_reproduce_points(pending, say):
            results.append(json.loads(text))


def main(argv: List[str]) -> int:
    """``python -m commitlab._ray reproduce PAPER quick|full OUT [--quiet]``: what
    ``commitlab reproduce --engine ray`` runs. Writes every point's result (JSON) to OUT; the
    command line then computes the claims and writes the report from them."""
    if len(argv) < 4 or argv[0] != "reproduce" or argv[2] not in ("quick", "full"):
        print("usage: python -m commitlab._ray reproduce PAPER quick|full OUT [--quiet]", file=sys.stderr)
        return 2
    quiet = "--quiet" in argv[4:]
    done = [0]

    def say(line: str) -> None:
        if not line.startswith("running "):
            done[0] += 1
            line = f"[{done[0]}] {line}"
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    r = reproduce_rounds(argv[1], argv[2] == "quick", say)
    with open(argv[3], "w") as f:
        json.dump(r["results"], f)
    return 0


if __name__ == "__main__":
    from ._commitlab import CommitlabError

    try:
        import ray  # noqa: F401
    except ImportError:
        print("error: the Ray engine needs Ray in this Python (pip install ray)", file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1:]))
    except CommitlabError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
