# %% [markdown]
# # commitlab from a notebook
#
# Notebook-style (cells separated by `# %%`; runs as a plain script too):
#
#     pip install ./python
#     python examples/notebook.py
#
# Every call below runs the simulator in Rust with the GIL released; results are pandas
# DataFrames with the same columns the command line's `--csv` writes (docs/METRICS.md).

# %%
import commitlab

print(commitlab.protocols())
print(commitlab.explain("workload.txn.isolation"))

# %% [markdown]
# ## The main job: every protocol on transactions with 5 % aborts

# %%
df = commitlab.compare()
print(df[["protocol", "status", "committed", "aborted", "throughput_per_s",
          "commit_latency_ns_mean", "write_amplification"]].to_string(index=False))
# Rows that did not run as configured say why:
print(df.loc[df["status"] != "ok", ["protocol", "status", "reason"]].to_string(index=False))

# %% [markdown]
# ## A sweep: abort ratio x GC policy, two protocols, in parallel

# %%
grid = {"workload.txn.abort_ratio": [0.0, 0.05, 0.2], "ftl.gc_policy": ["greedy", "cost-benefit"]}
sw = commitlab.sweep(grid, {"workload.txn.transactions": 2000}, protocols=["scc", "lighttx"])
pivot = sw.pivot_table(index=["workload.txn.abort_ratio", "ftl.gc_policy"], columns="protocol",
                       values="throughput_per_s")
print(pivot)

# %% [markdown]
# ## The same sweep on a Ray cluster
#
# `ray.init(address="ray://head:10001")` first (every node needs `pip install ./python`);
# without it a local Ray starts. Rows are identical to the local engine's except wall time.

# %%
try:
    import ray  # noqa: F401
except ImportError:
    print("ray is not installed: pip install ray")
else:
    import ray

    ray.init(num_cpus=2, include_dashboard=False)
    on_ray = commitlab.sweep(grid, {"workload.txn.transactions": 2000}, protocols=["scc", "lighttx"],
                             engine="ray")
    ray.shutdown()
    same = on_ray.drop(columns="wall_time_s").equals(sw.drop(columns="wall_time_s"))
    print("ray rows identical to local:", same)

# %% [markdown]
# ## One run's full metrics

# %%
m = commitlab.run({"protocol.name": "tc", "workload.kind": "txn", "workload.txn.transactions": 1000})
print(m["committed"], m["commit_latency_ns"], m["ftl"])
