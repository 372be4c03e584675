//! `cargo bench -p commitlab --bench trace_replay`: replay of the PostgreSQL TPC-C
//! page-access trace shipped in examples/traces (docs/TRACES.md) through the DBMS host, in
//! transactions per CPU-second. Each case is what `commitlab run --host S --trace F
//! --set host.transactions=N` does inside the process: size the device from the trace's
//! head, build it, read the whole trace, run every transaction. Process start-up and the
//! printing of the report are not in it. The CPU time is the thread's
//! (`/proc/thread-self/schedstat`: the run is single-threaded); each case runs `REPEAT`
//! times and the median is reported.
//!
//! Cases: `wal` over `none` (the target: at least 20,000 transactions per CPU-second),
//! `device-tx` over `bpcc` and `cfc-ex` (reported, no target). `COMMITLAB_TRACE=F` replays
//! another trace in the same format (every transaction of it).

use world::host_run::{run_host_sized, Sizing};
use world::{Config, ConfigSource};

const REPEAT: usize = 5;

// The allocator of the `commitlab` binary, so that the figures are the command's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traces/pg-tpcc.trace.gz");
    let path =
        std::env::var("COMMITLAB_TRACE").unwrap_or_else(|_| shipped.to_string_lossy().into_owned());
    let txns = match workload::pagetrace::read(&path) {
        Ok(t) => t.txns.len(),
        Err(e) => {
            eprintln!("trace_replay: {}", e.what);
            std::process::exit(2);
        }
    };
    let cases: [(&str, &[&str]); 3] = [
        (
            "wal over none",
            &["host.strategy=\"wal\"", "protocol.name=\"none\""],
        ),
        (
            "device-tx over bpcc",
            &["host.strategy=\"device-tx\"", "protocol.name=\"bpcc\""],
        ),
        (
            // Flag Commit's extended scheme needs a record area in each flash page, and a
            // device sized by hand (one data copy per version slot), as in tests/pgtrace.rs.
            "cfc-ex",
            &[
                "host.strategy=\"cfc-ex\"",
                "nand.append_bytes=8",
                "nand.blocks_per_plane=1600",
            ],
        ),
    ];
    let mut wal_rate = 0.0;
    for (name, extra) in cases {
        let mut sets = vec![
            "workload.kind=\"host\"".to_string(),
            "host.workload=\"trace\"".into(),
            format!("host.trace.path={}", toml_string(&path)),
            format!("host.transactions={txns}"),
        ];
        sets.extend(extra.iter().map(|s| s.to_string()));
        let sizing = if extra.iter().any(|s| s.starts_with("nand.blocks_per_plane")) {
            Sizing::Fixed("--set nand.blocks_per_plane".into())
        } else {
            Sizing::Auto
        };
        let cfg = match Config::load(&ConfigSource {
            preset: None,
            file: None,
            sets,
        }) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("trace_replay: {name}: {e}");
                std::process::exit(2);
            }
        };
        let mut cpu = Vec::new();
        let mut done = 0;
        for _ in 0..REPEAT {
            let c0 = world::bench::cpu_time_ns();
            let m = match run_host_sized(&cfg, None, &sizing) {
                Ok((m, _)) => m,
                Err(e) => {
                    eprintln!("trace_replay: {name}: {e}");
                    std::process::exit(1);
                }
            };
            let c1 = world::bench::cpu_time_ns();
            cpu.push((c1.saturating_sub(c0)) as f64 / 1e9);
            done = m.txns_committed + m.txns_aborted;
        }
        cpu.sort_by(f64::total_cmp);
        let med = cpu[cpu.len() / 2];
        let rate = done as f64 / med.max(1e-9);
        if name.starts_with("wal") {
            wal_rate = rate;
        }
        println!(
            "{name:<20} {done} transactions, CPU-s median {med:.3} (min {:.3}, max {:.3}): {rate:.0} transactions per CPU-second",
            cpu[0],
            cpu[cpu.len() - 1]
        );
    }
    println!(
        "target 20,000 transactions per CPU-second through wal: {} ({wal_rate:.0})",
        if wal_rate >= 20_000.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}

/// `s` as a TOML basic string (a path may hold quotes or backslashes).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
