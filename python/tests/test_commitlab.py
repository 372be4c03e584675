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
        with pytest.raises(commitlab.CommitlabError, match="local engine"):
            commitlab.reproduce("flagcommit", quick=True, engine="ray")
    finally:
        ray.shutdown()
    assert remote.attrs["claims_json"] == txflash_local.attrs["claims_json"]
    assert remote.to_json() == txflash_local.to_json()


@pytest.mark.ray
def test_cli_reproduce_on_ray_writes_the_local_claims(txflash_local, tmp_path):
    """``commitlab reproduce --engine ray`` (the release binary .ci/run builds) runs its
    points through this Python's Ray driver, on the Ray instance RAY_ADDRESS names, and
    writes the claims.json the local engine computes."""
    import os
    import pathlib
    import subprocess
    import sys

    ray = pytest.importorskip("ray")
    cli = pathlib.Path(__file__).resolve().parents[2] / "target" / "release" / "commitlab"
    if not cli.exists():
        pytest.skip(f"{cli} not built (cargo build --release -p commitlab)")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        env = dict(os.environ, COMMITLAB_PYTHON=sys.executable,
                   RAY_ADDRESS=ray.get_runtime_context().gcs_address)
        r = subprocess.run([str(cli), "reproduce", "--paper", "txflash", "--quick", "--engine", "ray",
                            "--out", str(tmp_path), "-q"], env=env, capture_output=True, text=True)
        refused = subprocess.run([str(cli), "reproduce", "--paper", "ipa", "--quick", "--engine", "ray",
                                  "--out", str(tmp_path / "ipa")], env=env, capture_output=True, text=True)
    finally:
        ray.shutdown()
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "claims.json").read_text() == txflash_local.attrs["claims_json"]
    assert refused.returncode == 2 and "local engine" in refused.stderr, refused.stderr
