"""The Python bindings as a notebook user meets them, on one machine and on Ray. Small
workloads: each test runs in seconds."""

import threading
import time

import pandas as pd
import pytest

import commitlab

SMALL = {"workload.txn.transactions": 200, "run.measure_recovery": False}


def test_compare_is_a_dataframe_with_every_protocol():
    df = commitlab.compare(SMALL)
    assert isinstance(df, pd.DataFrame)
    assert list(df["protocol"]) == commitlab.protocols()
    assert len(df) == 10
    for col in ["status", "reason", "seed", "committed", "aborted", "throughput_per_s",
                "commit_latency_ns_mean", "write_amplification", "config"]:
        assert col in df.columns, col
    assert (df["committed"] > 0).all()
    assert set(df["status"]) <= {"ok", "adapted"}
    # none cannot abort, aw supports only strict isolation: adapted, and said so.
    none = df[df["protocol"] == "none"].iloc[0]
    assert none["status"] == "adapted" and "abort" in none["reason"]
    assert none["config"]["workload"]["txn"]["abort_ratio"] == 0


def test_run_returns_the_metrics_dict():
    m = commitlab.run({"workload": {"synthetic": {"requests": 500}}, "protocol.name": "scc"})
    assert m["protocol"] == "scc"
    assert m["host_requests"] == 500
    assert m["latency_ns"]["p99"] > 0


def test_errors_are_exceptions_with_the_cli_message():
    with pytest.raises(commitlab.CommitlabError, match="chanels"):
        commitlab.run({"nand.chanels": 2})
    with pytest.raises(ValueError, match="protocol tc does not support TRIM"):
        commitlab.run({"protocol.name": "tc", "workload.synthetic.trim_ratio": 0.1})
    with pytest.raises(commitlab.CommitlabError, match="unknown protocol 'bogus'"):
        commitlab.compare(SMALL, protocols=["tc", "bogus"])
    with pytest.raises(commitlab.CommitlabError, match="ftl.gc_threshold"):
        commitlab.sweep({"ftl.gc_threshold": [0.05, 0.95]}, SMALL, protocols="scc")


def test_sweep_has_a_column_per_key_and_one_row_per_point():
    df = commitlab.sweep(
        {"ftl.gc_policy": ["greedy", "cost-benefit"], "workload.txn.abort_ratio": [0.0, 0.1]},
        SMALL,
        protocols=["scc", "lighttx"],
        jobs=2,
    )
    assert list(df.columns[:3]) == ["ftl.gc_policy", "workload.txn.abort_ratio", "protocol"]
    assert len(df) == 8
    assert list(df["ftl.gc_policy"]) == ["greedy"] * 4 + ["cost-benefit"] * 4
    assert (df[df["workload.txn.abort_ratio"] == 0.0]["aborted"] == 0).all()
    assert (df[df["workload.txn.abort_ratio"] == 0.1]["aborted"] > 0).all()


def test_the_gil_is_released_while_simulating():
    # A Python thread keeps counting while a simulation runs; with the GIL held it could
    # not advance at all until the run returned.
    ticks = []
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=counter)
    t.start()
    try:
        start = time.perf_counter()
        commitlab.compare(jobs=1)
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if start < x < end]
    assert end - start > 0.05, "the run was too short to tell"
    assert len(during) >= 10, f"{len(during)} ticks in {end - start:.3f} s"


def _without_wall_clock(df):
    return df.drop(columns=["wall_time_s"]).to_json()


def test_ray_engine_gives_the_same_rows_as_the_local_one():
    ray = pytest.importorskip("ray")
    grid = {"ftl.gc_policy": ["greedy", "cost-benefit"], "workload.txn.size_max": [4, 8]}
    local = commitlab.sweep(grid, SMALL, protocols=["tc", "lighttx"])
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        remote = commitlab.sweep(grid, SMALL, protocols=["tc", "lighttx"], engine="ray")
    finally:
        ray.shutdown()
    assert len(remote) == 8
    assert _without_wall_clock(local) == _without_wall_clock(remote)


def test_frames_put_the_configuration_last():
    df = commitlab.compare(SMALL, protocols=["tc"])
    assert list(df.columns)[-1] == "config"
    assert list(df.columns)[:3] == ["protocol", "status", "reason"]


def test_host_settings_outside_a_host_run_are_refused():
    with pytest.raises(commitlab.CommitlabError, match=r"host\.strategy.*workload\.kind = \"host\""):
        commitlab.run({"host.strategy": "wal", "host.workload": "tpcc"})
    with pytest.raises(commitlab.CommitlabError, match=r"host\.strategy"):
        commitlab.compare({"host.strategy": "wal"}, protocols=["tc"])


def test_run_with_a_host_configuration_runs_the_host_on_a_sized_device():
    m = commitlab.run({"workload.kind": "host", "host.strategy": "wal", "host.workload": "tpcc",
                       "host.transactions": 50})
    assert m["strategy"] == "wal"
    assert m["workload"].startswith("tpcc")
    assert m["committed"] == 50


def test_crash_is_a_frame_of_state_groups():
    df = commitlab.crash({"protocol.name": "bpcc"}, schedules=600)
    assert list(df["mode"]) == ["random", "random"]
    assert list(df["schedules"]) == ["0..512", "512..600"]
    assert df["states"].sum() >= 600
    assert (df["violations"] == 0).all() and (df["replay"] == "").all()
    ex = commitlab.crash({"protocol.name": "tc"})
    assert len(ex) == 7 and set(ex["mode"]) == {"exhaustive"} and (ex["states"] > 0).all()
    host = commitlab.crash({"workload.kind": "host", "host.strategy": "wal"}, schedules=200)
    assert list(host["host"]) == ["wal"] and host["states"][0] == 200
    with pytest.raises(commitlab.CommitlabError, match="did you mean lighttx"):
        commitlab.crash({"protocol.name": "lightx"})


def test_device_and_host_metrics_share_one_vocabulary():
    device = commitlab.run({"protocol.name": "tc", "workload.kind": "txn",
                            "workload.txn.transactions": 50, "run.measure_recovery": False})
    host = commitlab.run({"workload.kind": "host", "host.strategy": "wal", "host.transactions": 20})
    for m in (device, host):
        for k in ("committed", "aborted", "throughput_per_s", "txn_time_ns"):
            assert k in m, (k, sorted(m))
        assert not [k for k in m if k.startswith(("txs_", "txns_", "tx_"))], sorted(m)
    assert device["committed"] == 50 - device["aborted"]
    assert "restarted" in host


def test_crash_min_states_goes_on_until_the_floor():
    df = commitlab.crash({"protocol.name": "tc"}, schedules=100, min_states=700)
    assert list(df["mode"]) == ["random"] * 3
    # Schedule numbers continue past --schedules, as the command line numbers them.
    assert list(df["schedules"]) == ["0..100", "512..1024", "1024..1536"]
    assert df["states"].sum() >= 700 and df["states"][:2].sum() < 700
    assert (df["violations"] == 0).all()


def test_crash_variants_checks_each_safety_variant():
    df = commitlab.crash({"protocol.name": "none", "workload.synthetic.requests": 40}, variants=True)
    assert set(df["protocol"]) == {"none"}
    assert (df["variant"] != "").all() and (df["mode"] == "exhaustive").all()
    assert df["variant"].str.startswith("checkpoints:").any(), set(df["variant"])
    assert (df["states"] > 0).all() and (df["violations"] == 0).all()
    with pytest.raises(commitlab.CommitlabError, match="device checks"):
        commitlab.crash({"workload.kind": "host"}, variants=True)


def test_crash_host_by_name_and_the_host_matrix():
    one = commitlab.crash({"host.bank.accounts": 8}, host="wal", schedules=50)
    assert list(one["host"]) == ["wal"] and one["states"][0] == 50
    with pytest.raises(commitlab.CommitlabError, match="did you mean wal"):
        commitlab.crash(host="walx")
    df = commitlab.crash({"host.transactions": 3}, host="all")
    cells = df[["host", "protocol", "update", "external"]].drop_duplicates()
    assert len(cells) == len(df) and len(df) > 40
    assert {"wal", "device-tx", "cfc-ex", "pcmlogging"} <= set(df["host"])
    assert set(df[df["host"] == "wal"]["update"]) == {"out-of-place", "ipa", "ipa-block", "ipl"}
    assert set(df[df["external"] == "emulated"]["host"]) == {"pcmlogging", "pcmlogging-page", "wal-pcm", "scmlogging"}
    ran = df[df["refused"] == ""]
    assert len(ran) > 20 and (ran["states"] > 0).all() and (df["violations"] == 0).all()
    assert (df[df["refused"] != ""]["states"] == 0).all()
    with pytest.raises(commitlab.CommitlabError, match="cannot be set"):
        commitlab.crash({"protocol.name": "tc"}, host="all")


@pytest.fixture(scope="module")
def txflash_local():
    return commitlab.reproduce("txflash", quick=True)


def test_reproduce_is_a_frame_of_claims(txflash_local):
    with pytest.raises(commitlab.CommitlabError, match="unknown paper"):
        commitlab.reproduce("nope")
    df = txflash_local
    assert len(df) > 5
    assert set(df["paper"]) == {"txflash"}
    for col in ["id", "claim", "paper_value", "measured", "direction", "magnitude", "note"]:
        assert col in df.columns, col
    assert not any(d.startswith("{") for d in df["direction"])
    assert df.attrs["claims_json"].lstrip().startswith("[")


@pytest.mark.ray
def test_reproduce_on_ray_equals_the_local_engine(txflash_local):
    """Every point of TxFlash's quick reproduction runs as a Ray task (a local Ray of two
    CPUs); the claims, and claims.json's text, are the local engine's byte for byte."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        remote = commitlab.reproduce("txflash", quick=True, engine="ray")
    finally:
        ray.shutdown()
    assert remote.attrs["claims_json"] == txflash_local.attrs["claims_json"]
    assert remote.to_json() == txflash_local.to_json()


def _cli():
    import pathlib

    cli = pathlib.Path(__file__).resolve().parents[2] / "target" / "release" / "commitlab"
    if not cli.exists():
        pytest.skip(f"{cli} not built (cargo build --release -p commitlab)")
    return cli


@pytest.mark.ray
def test_cli_reproduce_on_ray_writes_the_local_files(tmp_path):
    """``commitlab reproduce --engine ray`` (the release binary .ci/run builds) runs its
    points through this Python's Ray driver, on the Ray instance RAY_ADDRESS names. In-Place
    Appends, the cheapest paper whose points run the host engine through the paper's own
    function (aged devices, windowed runs, histograms), writes the claims.json, every CSV and
    every plot the local engine writes, byte for byte (timings.csv, the machine's costs,
    aside)."""
    import os
    import subprocess
    import sys

    ray = pytest.importorskip("ray")
    cli = _cli()
    local = subprocess.run([str(cli), "reproduce", "--paper", "ipa", "--quick", "--out", str(tmp_path / "local"), "-q"],
                           capture_output=True, text=True)
    assert local.returncode == 0, local.stderr
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        env = dict(os.environ, COMMITLAB_PYTHON=sys.executable,
                   RAY_ADDRESS=ray.get_runtime_context().gcs_address)
        r = subprocess.run([str(cli), "reproduce", "--paper", "ipa", "--quick", "--engine", "ray",
                            "--out", str(tmp_path / "ray"), "-q"], env=env, capture_output=True, text=True)
    finally:
        ray.shutdown()
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "local").iterdir()
                   if p.suffix in (".json", ".csv", ".svg") and p.name != "timings.csv")
    assert "claims.json" in names and any(n.endswith(".csv") for n in names), names
    assert names == sorted(p.name for p in (tmp_path / "ray").iterdir()
                           if p.suffix in (".json", ".csv", ".svg") and p.name != "timings.csv")
    for n in names:
        assert (tmp_path / "ray" / n).read_bytes() == (tmp_path / "local" / n).read_bytes(), n


def test_soak_checks_random_double_crashes_and_resumes(tmp_path):
    """``commitlab.soak`` as ``commitlab soak``: batches of 512 double-crash schedules per
    protocol under drawn timing profiles, totals per protocol, a state file it resumes."""
    state = tmp_path / "soak.json"
    r = commitlab.soak(protocols=["tc", "NONE"], schedules=1500, seed=3, state_file=str(state))
    assert r.seed == 3 and not r.drawn and r.ok and r.violations == 0 and r.failures == []
    assert r.schedules >= 1500 and r.schedules % 512 == 0
    assert r.states >= r.schedules  # tc and none recover without writing: no nested states
    assert list(r.per_item["item"]) == ["none", "tc"]
    assert r.per_item["states"].sum() == r.states
    assert r.repeat.startswith("commitlab soak --seed 3 --protocols tc,none --schedules 1500")
    assert state.exists()
    # Resumed: the same batches are not checked again; totals grow.
    again = commitlab.soak(protocols=["tc", "none"], schedules=3000, seed=3, state_file=str(state))
    assert again.schedules >= 3000 and again.states > r.states
    with pytest.raises(commitlab.CommitlabError, match="used seed 3"):
        commitlab.soak(protocols=["tc", "none"], schedules=3000, seed=4, state_file=str(state))
    with pytest.raises(commitlab.CommitlabError, match="exclude each other"):
        commitlab.soak(seed=1, draw_seed=True, state_file=str(tmp_path / "x.json"))
    with pytest.raises(commitlab.CommitlabError, match="did you mean lighttx"):
        commitlab.soak(protocols=["lightx"], state_file=str(tmp_path / "y.json"))
    drawn = commitlab.soak(protocols=["tc"], schedules=1, draw_seed=True, state_file=str(tmp_path / "d.json"))
    assert drawn.drawn and 0 <= drawn.seed < 2**53 and drawn.repeat.startswith(f"commitlab soak --seed {drawn.seed}")


def test_soak_with_hosts_adds_the_host_cells(tmp_path):
    r = commitlab.soak(protocols=["tc"], hosts=True, schedules=1, seed=5, state_file=str(tmp_path / "h.json"))
    hosts = r.per_item[r.per_item["item"].str.startswith("host ")]
    assert len(hosts) >= 1 and (hosts["schedules"] == 1000).all() and (hosts["states"] > 0).all()
    assert r.ok


def test_soak_states_are_the_command_lines(tmp_path):
    """The same soak from Python and from the command line checks the same states: the two
    state files agree on every count, and each resumes the other's."""
    import json
    import subprocess

    cli = _cli()
    py_file, cli_file = tmp_path / "py.json", tmp_path / "cli.json"
    r = commitlab.soak(protocols=["scc", "lighttx"], schedules=1024, seed=11, state_file=str(py_file))
    out = subprocess.run([str(cli), "soak", "--protocols", "scc,lighttx", "--schedules", "1024", "--seed", "11",
                          "--state-file", str(cli_file)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    a, b = json.loads(py_file.read_text()), json.loads(cli_file.read_text())
    for k in ("seed", "protocols", "hosts", "next_unit", "schedules", "states", "nested_states", "violations",
              "per_protocol", "failures"):
        assert a[k] == b[k], k
    assert r.states == b["states"]
    more = commitlab.soak(protocols=["scc", "lighttx"], schedules=3000, seed=11, state_file=str(cli_file))
    assert more.schedules >= 3000 and more.states > r.states


def test_presets_and_the_effective_configuration():
    p = commitlab.presets()
    assert len(p) >= 2 and (p["error"] == "").all() and (p["capacity_bytes"] > 0).all()
    c = commitlab.effective_config({"nand.channels": 4})
    assert c["nand"]["channels"] == 4 and "ftl" in c and "protocol" in c
    main = commitlab.effective_config(main_job=True)
    assert main["workload"] != commitlab.effective_config()["workload"] or main["nand"] != c["nand"]
    with pytest.raises(commitlab.CommitlabError, match="chanels"):
        commitlab.effective_config({"nand.chanels": 4})


def test_trace_stats_compares_a_trace_with_the_generator(tmp_path):
    import pathlib

    shipped = pathlib.Path(__file__).resolve().parents[2] / "examples" / "traces" / "pg-tpcc.trace.gz"
    s = commitlab.trace_stats(str(shipped), {"host.tpcc.warehouses": 1})
    assert set(s) == {"trace", "generator_tpcc"}
    assert s["trace"] and s["trace"] != s["generator_tpcc"]
    bad = tmp_path / "bad.trace"
    bad.write_text("not a trace\n")
    with pytest.raises(commitlab.CommitlabError, match="bad.trace"):
        commitlab.trace_stats(str(bad))
