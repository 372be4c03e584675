//! `commitlab bench`: how fast the simulator runs, in the terms the issue sets targets in.
//!
//! The measurement is 4 KiB uniformly random page writes, closed loop at queue depth 32, on
//! a device 90 % full (prefilled sequentially, then warmed up with random writes until GC
//! runs in steady state), in tag data mode. It reports host writes and NAND operations per
//! CPU-second of the measured phase only, and the process's peak resident set size. The
//! full bench uses the 32 GiB TxFlash preset; `quick` uses a 2 GiB device of the same shape
//! so it can run in CI; `run_bench_gib` any whole number of GiB of that shape (more or
//! fewer blocks per plane), to see how the speed scales with the device's size.
//!
//! CPU time is this thread's on-CPU time from `/proc/thread-self/schedstat` (nanoseconds,
//! unaffected by other load on the machine); where that file is missing, wall time is used
//! and the result says so.

use crate::config::{Config, ConfigSource};
use crate::run::{RunOptions, World, WorldError};
use serde::Serialize;

/// On-CPU time of the calling thread in ns, or 0 if unknown.
pub fn cpu_time_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

/// Peak resident set size of the whole process so far in bytes (VmHWM, the high-water
/// mark, not the current size), or 0 if unknown.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<u64>().ok())
                    .map(|kb| kb * 1024)
            })
        })
        .unwrap_or(0)
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    pub preset: String,
    pub capacity_bytes: u64,
    pub measured_host_writes: u64,
    pub measured_nand_ops: u64,
    pub gc_erases: u64,
    pub write_amplification: f64,
    pub cpu_s: f64,
    pub cpu_time_source: &'static str,
    pub wall_s: f64,
    pub host_writes_per_cpu_s: f64,
    pub nand_ops_per_cpu_s: f64,
    /// The process's peak RSS when the device phase ended (`commitlab bench` reports the
    /// whole process's at its end beside it).
    pub peak_rss_bytes: u64,
    pub setup_wall_s: f64,
}

/// The full bench's device size, GiB (the `txflash` preset).
pub const FULL_GIB: u32 = 32;
/// The quick bench's device size, GiB.
pub const QUICK_GIB: u32 = 2;
/// The largest `run_bench_gib` size: 128 K blocks per plane (about 1.5 GiB of memory per
/// 128 GiB of device).
pub const MAX_GIB: u32 = 1024;

/// The bench configuration: `txflash` preset (or a 2 GiB cut of it when `quick`).
pub fn bench_config(quick: bool) -> Result<Config, WorldError> {
    bench_config_gib(if quick { QUICK_GIB } else { FULL_GIB })
}

/// The bench configuration for a device of `gib` GiB: the `txflash` preset's geometry with
/// `128 × gib` blocks per plane (4,096 at 32 GiB).
pub fn bench_config_gib(gib: u32) -> Result<Config, WorldError> {
    if !(1..=MAX_GIB).contains(&gib) {
        return Err(WorldError::Config(format!(
            "the bench's device size must be 1 to {MAX_GIB} GiB, got {gib}"
        )));
    }
    let mut sets = vec![
        "nand.data_mode=\"tag\"".to_string(),
        "workload.kind=\"synthetic\"".into(),
        "workload.prefill=0.9".into(),
        "workload.synthetic.span=0.9".into(),
        "workload.synthetic.address=\"uniform\"".into(),
        "workload.synthetic.queue_depth=32".into(),
        "run.measure_recovery=false".into(),
        "protocol.name=\"none\"".into(),
    ];
    if gib != FULL_GIB {
        sets.push(format!("nand.blocks_per_plane={}", 128 * gib));
    }
    let mut cfg = Config::load(&ConfigSource {
        preset: Some("txflash".into()),
        file: None,
        sets,
    })?;
    // Warm up until the free pool is used up and GC runs, then measure as many writes again.
    let g = cfg.nand.geometry();
    let pages = u64::from(g.pages());
    cfg.workload.warmup_requests = pages * 3 / 10;
    cfg.workload.synthetic.requests = cfg.workload.warmup_requests + pages / 4;
    Ok(cfg)
}

pub fn run_bench(quick: bool) -> Result<BenchResult, WorldError> {
    run_bench_gib(if quick { QUICK_GIB } else { FULL_GIB })
}

/// The device bench on a device of `gib` GiB (`bench_config_gib`).
pub fn run_bench_gib(gib: u32) -> Result<BenchResult, WorldError> {
    let setup = std::time::Instant::now();
    let cfg = bench_config_gib(gib)?;
    let mut w = World::new(&cfg, &RunOptions::default())?;
    let setup_wall_s = setup.elapsed().as_secs_f64();
    w.run()?;
    let cpu_end = cpu_time_ns();
    let wall_s = w.wall_start.elapsed().as_secs_f64();
    let (cpu_s, src) = if cpu_end > 0 && w.cpu_start_ns > 0 {
        (
            (cpu_end - w.cpu_start_ns) as f64 / 1e9,
            "/proc/thread-self/schedstat",
        )
    } else {
        (wall_s, "wall clock (no per-thread CPU time available)")
    };
    let m = w.metrics(wall_s);
    let ops = m.nand_reads + m.nand_programs + m.nand_partial_programs + m.nand_erases;
    Ok(BenchResult {
        preset: match gib {
            FULL_GIB => "txflash (32 GiB)".into(),
            g => format!("txflash ({g} GiB cut)"),
        },
        capacity_bytes: cfg.nand.geometry().capacity_bytes(),
        measured_host_writes: m.host_writes,
        measured_nand_ops: ops,
        gc_erases: m.gc_erases,
        write_amplification: m.write_amplification,
        cpu_s,
        cpu_time_source: src,
        wall_s,
        host_writes_per_cpu_s: m.host_writes as f64 / cpu_s.max(1e-9),
        nand_ops_per_cpu_s: ops as f64 / cpu_s.max(1e-9),
        peak_rss_bytes: peak_rss_bytes(),
        setup_wall_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_scale_the_blocks_per_plane_and_bad_sizes_are_config_errors() {
        let g = |gib| {
            bench_config_gib(gib)
                .unwrap()
                .nand
                .geometry()
                .capacity_bytes()
        };
        assert_eq!(g(FULL_GIB), 32 << 30);
        assert_eq!(g(QUICK_GIB), 2 << 30);
        assert_eq!(g(5), 5 << 30);
        assert_eq!(
            bench_config(true).unwrap().nand.blocks_per_plane,
            256,
            "quick is the 2 GiB cut"
        );
        for bad in [0, MAX_GIB + 1] {
            assert!(matches!(bench_config_gib(bad), Err(WorldError::Config(_))));
        }
    }
}
