//! Host runs: the DBMS host engine (`host` crate) on the device a `Config` describes, with
//! the `[host]` section — the world's side of `workload.kind = "host"` and
//! `commitlab run|crash --host S`.

use crate::config::{Config, WorkloadKind};
use crate::run::{build_device, WorldError};
use host::check::{CheckReport, HostRecording, Mode};
use host::HostError;
pub use host::HostMetrics;

fn herr(e: HostError) -> WorldError {
    match e {
        HostError::Config { .. } | HostError::Workload(_) => WorldError::Config(e.to_string()),
        HostError::Device { at, what, error } => WorldError::Device {
            at,
            request: what,
            error,
        },
        other => WorldError::Io(other.to_string()),
    }
}

/// Runs the host engine on the configured device; returns its metrics.
pub fn run_host(cfg: &Config) -> Result<HostMetrics, WorldError> {
    run_host_traced(cfg, None)
}

/// As `run_host`, writing the device commands the host issued to `trace` as a `txn` trace
/// (docs/TRACES.md), so device protocols can be replayed on exactly this I/O.
pub fn run_host_traced(
    cfg: &Config,
    trace: Option<&std::path::Path>,
) -> Result<HostMetrics, WorldError> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = WorkloadKind::Host;
    cfg.validate()?;
    let device = build_device(&cfg, None)?;
    run_host_on(&cfg, device, trace)
}

/// How a host run treats a device too small for its database.
#[derive(Clone, Debug)]
pub enum Sizing {
    /// The geometry was chosen (named by the string, e.g. "--set nand.blocks_per_plane"):
    /// a device too small is refused with the keys that shrink the database or grow it.
    Fixed(String),
    /// Grow `nand.blocks_per_plane` until the database fills at most `HOST_FILL` of the
    /// device's logical pages (docs/HOST.md, "Host runs size the default device").
    Auto,
}

/// The keys that choose the device's geometry (its size): a host run keeps a geometry set
/// by any of them, and sizes the device when none is set. Other `nand.*` keys (the record
/// area, the data mode, timing) say nothing about the size.
pub const GEOMETRY_KEYS: [&str; 7] = [
    "nand.channels",
    "nand.chips_per_channel",
    "nand.dies_per_chip",
    "nand.planes_per_die",
    "nand.blocks_per_plane",
    "nand.pages_per_block",
    "nand.page_bytes",
];

/// The largest share of the logical pages an automatically sized device gives the host's
/// database: the rest is free space for GC.
pub const HOST_FILL: f64 = 0.8;

/// The keys that shrink the host's database for `workload` (and its log for `strategy`).
fn shrink_keys(workload: &str, strategy: &str) -> String {
    let mut k: Vec<&str> = match workload {
        "tpcc" => vec![
            "host.tpcc.warehouses",
            "host.tpcc.items",
            "host.tpcc.max_txns",
        ],
        "tpcb" => vec![
            "host.tpcb.branches",
            "host.tpcb.accounts_per_branch",
            "host.tpcb.max_txns",
        ],
        "tatp" => vec!["host.tatp.subscribers"],
        "records" => vec!["host.records.records", "host.records.record_bytes"],
        // A recorded database's size is the trace's: a trace of a smaller one.
        "trace" => vec!["host.trace.path"],
        _ => vec!["host.bank.accounts", "host.bank.history_pages"],
    };
    if matches!(
        strategy,
        "wal" | "flagcommit-ex" | "cfc-ex" | "afc-ex" | "wal-pcm"
    ) {
        k.push("host.log_pages");
    }
    k.join(", ")
}

/// As `run_host_traced`, sizing the device as `sizing` says first; returns the metrics and,
/// when the device was sized, the one line that says how.
pub fn run_host_sized(
    cfg: &Config,
    trace: Option<&std::path::Path>,
    sizing: &Sizing,
) -> Result<(HostMetrics, Option<String>), WorldError> {
    let (cfg, device, note) = size_host_device(cfg, sizing)?;
    run_host_on(&cfg, device, trace).map(|m| (m, note))
}

/// The configuration a host run uses after `sizing`, and the line that says how the device
/// was sized (None when it was large enough): what `run_host_sized` runs, for callers that
/// run the host another way (the host crash checker, Python).
pub fn size_host(cfg: &Config, sizing: &Sizing) -> Result<(Config, Option<String>), WorldError> {
    size_host_device(cfg, sizing).map(|(c, _, note)| (c, note))
}

fn size_host_device(
    cfg: &Config,
    sizing: &Sizing,
) -> Result<(Config, ssd::Device, Option<String>), WorldError> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = WorkloadKind::Host;
    cfg.validate()?;
    let need =
        host::engine::device_pages_needed(&cfg.host, cfg.nand.geometry().page_bytes, cfg.seed)
            .map_err(herr)?;
    let mut device = build_device(&cfg, None)?;
    let mut note = None;
    if need > u64::from(device.logical_pages()) {
        match sizing {
            Sizing::Fixed(by) => {
                return Err(WorldError::Config(format!(
                    "config: host {} needs {need} logical device pages for its {} database but the device set by {by} has {}: shrink the database ({}) or grow the device (nand.blocks_per_plane, nand.planes_per_die, nand.dies_per_chip, nand.chips_per_channel, nand.channels)",
                    cfg.host.strategy,
                    cfg.host.workload,
                    device.logical_pages(),
                    shrink_keys(&cfg.host.workload, &cfg.host.strategy)
                )))
            }
            Sizing::Auto => {
                let target = (need as f64 / HOST_FILL).ceil();
                // Logical pages grow about linearly with blocks per plane (the FTL's
                // reserves are per parallel unit); grow by the ratio, then re-check.
                for _ in 0..8 {
                    let have = f64::from(device.logical_pages().max(1));
                    if have >= target {
                        break;
                    }
                    let bpp = f64::from(cfg.nand.blocks_per_plane);
                    let grown = (bpp * (target / have) * 1.02).ceil().max(bpp + 1.0);
                    if grown > f64::from(u32::MAX) {
                        break;
                    }
                    cfg.nand.blocks_per_plane = grown as u32;
                    device = build_device(&cfg, None).map_err(|e| {
                        WorldError::Config(format!(
                            "config: host {} needs {need} logical device pages for its {} database, and a device that large cannot be built here ({e}): shrink the database ({})",
                            cfg.host.strategy,
                            cfg.host.workload,
                            shrink_keys(&cfg.host.workload, &cfg.host.strategy)
                        ))
                    })?;
                }
                if f64::from(device.logical_pages()) < target {
                    return Err(WorldError::Config(format!(
                        "config: host {} needs {need} logical device pages; no nand.blocks_per_plane gives them on this geometry: shrink the database ({})",
                        cfg.host.strategy,
                        shrink_keys(&cfg.host.workload, &cfg.host.strategy)
                    )));
                }
                let gib = cfg.nand.geometry().capacity_bytes() as f64 / (1u64 << 30) as f64;
                note = Some(format!(
                    "device: {gib:.1} GiB ({} blocks per plane), sized to the database with {:.0} % free space for GC",
                    cfg.nand.blocks_per_plane,
                    (1.0 - HOST_FILL) * 100.0
                ));
            }
        }
    }
    Ok((cfg, device, note))
}

/// Runs the host on `device`, built from `cfg`.
fn run_host_on(
    cfg: &Config,
    mut device: ssd::Device,
    trace: Option<&std::path::Path>,
) -> Result<HostMetrics, WorldError> {
    // A PCM strategy over the emulated SSD: the loaded database goes onto the device first.
    host::external::load_database(&cfg.host, cfg.seed, &mut device).map_err(herr)?;
    let run = host::engine::run_traced(
        &cfg.host,
        &cfg.device(),
        device,
        cfg.seed,
        false,
        trace.is_some(),
    )
    .map_err(herr)?;
    if let (Some(path), Some(cmds)) = (trace, run.trace.as_ref()) {
        write_trace(path, cmds)?;
    }
    Ok(run.metrics)
}

/// Writes captured device commands as a `txn` trace.
pub(crate) fn write_trace(
    path: &std::path::Path,
    cmds: &[workload::txn::Timed],
) -> Result<(), WorldError> {
    use std::io::Write;
    let io = |e: std::io::Error| WorldError::Io(format!("{}: {e}", path.display()));
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    writeln!(w, "{}", workload::txtrace::HEADER).map_err(io)?;
    for t in cmds {
        workload::txtrace::write_line(&mut w, t).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// The configuration `commitlab crash --host S --protocol P` starts from: the host
/// checker's tiny database on a small device (`host::check::tiny_config`).
pub fn host_crash_config(strategy: &str, protocol: &str) -> Config {
    let (h, d) = host::check::tiny_config(strategy, protocol);
    let mut c = Config {
        nand: d.nand,
        ftl: d.ftl,
        protocol: d.protocol,
        host: h,
        ..Config::default()
    };
    c.workload.kind = WorkloadKind::Host;
    c
}

/// `host_crash_config` with what an update strategy needs on the tiny device (the settings
/// `crates/host/tests/ipa.rs` crash-checks them with): IPA keeps one DB page per flash page
/// with 256 B for delta records and N×M = 2×8 (bank updates change 8-byte balances); IPL
/// gets erase units of 4 one-flash-page DB pages and 4 log pages, one per block, so merges,
/// their erases and cross-unit reads occur.
pub fn host_crash_config_for(strategy: &str, protocol: &str, update: Option<&str>) -> Config {
    let mut c = host_crash_config(strategy, protocol);
    match update {
        Some("ipa") | Some("ipa-block") => {
            c.host.page_bytes = c.nand.page_bytes;
            c.nand.append_bytes = 256;
            c.host.ipa.n = 2;
            c.host.ipa.m = 8;
        }
        Some("ipl") => {
            // One erase unit per 8-page block: 4 DB pages of one flash page each and a log
            // region of 4 log pages (16 sectors of 512 B; NOP 4 per page).
            c.host.page_bytes = c.nand.page_bytes;
            c.host.ipl.unit_pages = 4;
        }
        _ => {}
    }
    c
}

/// The `--set`s of the crash checker's larger host run (random schedules): five times the
/// tiny run's transactions over three times its accounts, four clients, twice the blocks
/// (CFC_ex's three version slots of the larger database need them).
pub const HOST_CRASH_LARGER: &[&str] = &[
    "host.transactions=300",
    "host.clients=4",
    "host.bank.accounts=120",
    "nand.blocks_per_plane=32",
];

/// The `--set`s of the PCM strategies' cells over the emulated SSD as external store
/// (`host::external`): the store, and 10 blocks per plane so GC runs (and erases) during
/// the tiny run (`host/tests/pcm_emulated.rs` checks the same configuration).
pub const HOST_CRASH_EMULATED: &[&str] =
    &["host.pcm.external=\"emulated\"", "nand.blocks_per_plane=10"];

/// One cell of the host crash matrix (`commitlab crash --host all`, Python
/// `crash(host="all")`): recovery strategy, device protocol, update strategy, and the PCM
/// strategies' external store when it is not the tiny configuration's (the emulated SSD's
/// cells add `HOST_CRASH_EMULATED`).
pub type CrashCell = (
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
);

/// The cells of the host crash matrix: every recovery strategy (its aliases once) over
/// every device protocol with out-of-place writes, `wal` with each other update strategy,
/// and the PCM strategies over the emulated SSD as their external store
/// (`host::external`, on the `none` FTL they need).
pub fn crash_cells() -> Vec<CrashCell> {
    let mut cells = Vec::new();
    for s in host::strategy::names() {
        if s == "flagcommit-ex" {
            continue; // another name for cfc-ex
        }
        for p in ssd::protocol::names() {
            cells.push((s, p, "out-of-place", None));
            if s == "wal" {
                for &u in host::update::NAMES.iter().filter(|&&u| u != "out-of-place") {
                    cells.push((s, p, u, None));
                }
            }
        }
        if matches!(
            s,
            "pcmlogging" | "pcmlogging-page" | "wal-pcm" | "scmlogging"
        ) {
            cells.push((s, "none", "out-of-place", Some(host::external::EMULATED)));
        }
    }
    cells
}

/// Records a host run for the crash checker.
pub fn record_host(cfg: &Config) -> Result<HostRecording, WorldError> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = WorkloadKind::Host;
    cfg.validate()?;
    // A mutants build plants the host fault `COMMITLAB_MUTANT` names (`host::planted`).
    #[cfg(feature = "mutants")]
    host::planted::apply(&mut cfg.host);
    host::check::record(&cfg.host, &cfg.device(), cfg.seed).map_err(herr)
}

/// Crash-checks a recorded host run.
pub fn check_host(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
) -> Result<CheckReport, WorldError> {
    check_host_with(rec, mode, seed, only, false)
}

/// As `check_host`; with `double`, also crashes inside the recoveries (`host::check::check_with`).
pub fn check_host_with(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
    double: bool,
) -> Result<CheckReport, WorldError> {
    host::check::check_with(rec, mode, seed, only, double).map_err(WorldError::Config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_captured_host_trace_replays_the_same_device_commands() {
        let dir = std::env::temp_dir().join(format!("commitlab-hosttrace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (s, p) in [("device-tx", "cfc"), ("wal", "none")] {
            let path = dir.join(format!("{s}.txn"));
            let c = host_crash_config(s, p);
            let m = run_host_traced(&c, Some(&path)).unwrap();
            let mut r = c.clone();
            r.workload.kind = WorkloadKind::Trace;
            r.workload.trace.path = path.display().to_string();
            r.workload.trace.format = crate::config::TraceFormat::Txn;
            r.workload.prefill = 0.0;
            r.run.measure_recovery = false;
            let out = crate::run::run(&r, &Default::default()).unwrap();
            // The same commands reach the device: as many page writes (every DB page is
            // `parts` device pages; log and master pages one each) and reads, commits, aborts.
            let parts = 4;
            let host_writes = (m.stats.page_writes * parts
                + m.stats.log_page_writes
                + m.stats.checkpoints) as u64;
            assert_eq!(out.metrics.host_writes, host_writes, "{s}/{p}");
            assert_eq!(
                out.metrics.host_reads,
                m.stats.page_reads * parts + m.stats.log_page_reads,
                "{s}/{p}"
            );
            if s == "device-tx" {
                assert_eq!(
                    out.metrics.txs_committed, m.strategy_counters["device_commits"],
                    "{s}/{p}"
                );
            }
        }
    }

    /// A PCM strategy over the emulated SSD through the world: the loaded database is on the
    /// device (every page read hits flash; fails with `load_database` left out), reads
    /// return what was written, and the run is deterministic.
    #[test]
    fn pcm_strategies_run_on_the_loaded_emulated_ssd() {
        for s in ["pcmlogging", "wal-pcm"] {
            let mut c = host_crash_config(s, "none");
            c.host.pcm.external = "emulated".into();
            let m = run_host(&c).unwrap();
            let k = &m.strategy_counters;
            assert!(m.txns_committed > 0, "{s}");
            assert!(
                k["disk_reads"] > 0 && k["ext_flash_reads"] > 0,
                "{s}: {k:?}"
            );
            assert_eq!(k["ext_unmapped_page_reads"], 0, "{s}: {k:?}");
            assert_eq!(k["ext_readback_mismatches"], 0, "{s}: {k:?}");
            let again = run_host(&c).unwrap();
            assert_eq!(again.sim_time_ns, m.sim_time_ns, "{s}");
            assert_eq!(&again.strategy_counters, k, "{s}");
        }
    }

    #[test]
    fn a_host_run_from_a_config_and_its_errors() {
        let mut c = host_crash_config("wal", "none");
        c.host.measure_recovery = true;
        let m = run_host(&c).unwrap();
        assert!(m.txns_committed > 0);
        let r = m.recovery.unwrap();
        assert!(
            r.pages_read > r.device_pages_read && r.time_ns > r.device_time_ns,
            "{r:?}"
        );
        c.host.clients = 0;
        let e = run_host(&c).unwrap_err().to_string();
        assert!(e.contains("host.clients"), "{e}");
        let c = Config::load(&crate::ConfigSource {
            sets: vec![
                "host.strategy=\"aries\"".into(),
                "workload.kind=\"host\"".into(),
            ],
            ..Default::default()
        })
        .unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("host.strategy"), "{e}");
        let e = Config::load(&crate::ConfigSource {
            sets: vec!["host.buffer_frame=3".into()],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("buffer_frame"), "{e}");
    }
}

/// The host bench ("Performance"): simulated transactions per CPU-second of the
/// run, all layers included (workload generator, lock manager, buffer pool, strategy,
/// device), device construction excluded. The case the issue sets its target on
/// (`host_bench`): TPC-C at 20 warehouses, `wal` over `none`, 50 clients, a 512-frame pool,
/// δ = 5 % (Flag Commit §5's default), on the `flagcommit` device (Table 2: 32 GiB, 2 KiB
/// pages, 64 pages per block). `quick`: 2 warehouses with insert regions for 100,000
/// transactions on a 2 GiB cut of that device. `host_bank_bench` runs the host's `bank`
/// test source on the same device, for comparison with earlier measurements.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HostBench {
    pub device: String,
    pub workload: String,
    pub txns: u64,
    pub cpu_s: f64,
    pub host_txns_per_cpu_s: f64,
    pub sim_throughput_per_s: f64,
    pub buffer_hit_ratio: f64,
    pub gc_share: f64,
    /// Wall time of building the device (formatting the 32 GiB medium), not in `cpu_s`.
    pub setup_wall_s: f64,
}

/// The settings every host bench case shares: `wal` over `none`, 50 clients, 512 frames on
/// the `flagcommit` device (`quick`: a 2 GiB cut).
fn host_bench_sets(quick: bool) -> Vec<String> {
    let mut sets = vec![
        "nand.data_mode=\"tag\"".to_string(),
        "workload.kind=\"host\"".into(),
        "host.strategy=\"wal\"".into(),
        "protocol.name=\"none\"".into(),
        "host.clients=50".into(),
        "host.buffer_frames=512".into(),
        "host.log_pages=65536".into(),
        "host.checkpoint_log_bytes=16777216".into(),
    ];
    if quick {
        sets.push("nand.blocks_per_plane=512".into());
        sets.push("host.log_pages=8192".into());
    }
    sets
}

/// TPC-C at 20 warehouses (the configuration); see `HostBench`.
pub fn host_bench(quick: bool) -> Result<HostBench, WorldError> {
    let mut sets = host_bench_sets(quick);
    sets.extend([
        "host.workload=\"tpcc\"".to_string(),
        "host.tpcc.warehouses=20".into(),
        "host.tpcc.delta_abort=0.05".into(),
        "host.transactions=100000".into(),
    ]);
    if quick {
        sets.extend([
            "host.tpcc.warehouses=2".to_string(),
            "host.tpcc.max_txns=100000".into(),
            "host.transactions=10000".into(),
        ]);
    }
    host_bench_case(sets, quick)
}

/// The `bank` test source with a database of about 2 GB (20 M accounts, 250 k DB pages;
/// quick: 2 M accounts); the first host bench, kept for comparison.
pub fn host_bank_bench(quick: bool) -> Result<HostBench, WorldError> {
    let mut sets = host_bench_sets(quick);
    sets.extend([
        "host.workload=\"bank\"".to_string(),
        "host.bank.accounts=20000000".into(),
        "host.transactions=100000".into(),
    ]);
    if quick {
        sets.extend([
            "host.bank.accounts=2000000".to_string(),
            "host.transactions=20000".into(),
        ]);
    }
    host_bench_case(sets, quick)
}

/// PCMLogging's case ("Performance": a full-scale point, 100,000 TPC-C
/// transactions with a 128 MiB PCM, in at most 2 minutes of CPU): `pcmlogging` at 20
/// warehouses, 50 clients, DRAM and PCM at §6.1's 128 MiB per 2.4 GB, the HDD of Table 2;
/// the flash device is built (the engine needs one) but unused. No warm-up is excluded: the
/// CPU time covers every transaction from the start. `quick`: 2 warehouses, 10,000.
pub fn host_pcm_bench(quick: bool) -> Result<HostBench, WorldError> {
    let mut sets = host_bench_sets(quick);
    sets.extend([
        "host.strategy=\"pcmlogging\"".to_string(),
        "host.workload=\"tpcc\"".into(),
        "host.tpcc.warehouses=20".into(),
        "host.tpcc.delta_abort=0.05".into(),
        "host.transactions=100000".into(),
    ]);
    if quick {
        sets.extend([
            "host.tpcc.warehouses=2".to_string(),
            "host.tpcc.max_txns=100000".into(),
            "host.transactions=10000".into(),
        ]);
    }
    host_bench_case(sets, quick)
}

/// IPA's overhead case ("Performance": `--update ipa` within 20 % of
/// `out-of-place` in transactions per CPU-second): `host_bench`'s TPC-C run with 8 KiB flash
/// pages carrying a 512 B append area (IPA keeps one DB page per flash page; 2,048 blocks per
/// plane keep the device at 32 GiB, quick 128 → 2 GiB), once per update strategy. Returns
/// (out-of-place, ipa).
pub fn host_ipa_bench(quick: bool) -> Result<(HostBench, HostBench), WorldError> {
    let case = |update: &str| host_bench_case(ipa_bench_sets(update, quick), quick);
    Ok((case("out-of-place")?, case("ipa")?))
}

fn ipa_bench_sets(update: &str, quick: bool) -> Vec<String> {
    {
        let mut sets = host_bench_sets(quick);
        sets.extend([
            "nand.page_bytes=8192".to_string(),
            "nand.append_bytes=512".into(),
            "nand.blocks_per_plane=2048".into(),
            "host.page_bytes=8192".into(),
            format!("host.update=\"{update}\""),
            "host.workload=\"tpcc\"".into(),
            "host.tpcc.warehouses=20".into(),
            "host.tpcc.delta_abort=0.05".into(),
            "host.transactions=100000".into(),
        ]);
        if quick {
            sets.extend([
                "nand.blocks_per_plane=128".to_string(),
                "host.tpcc.warehouses=2".into(),
                "host.tpcc.max_txns=100000".into(),
                "host.transactions=10000".into(),
            ]);
        }
        sets
    }
}

fn host_bench_case(sets: Vec<String>, quick: bool) -> Result<HostBench, WorldError> {
    let cfg = Config::load(&crate::ConfigSource {
        preset: Some("flagcommit".into()),
        file: None,
        sets,
    })?;
    cfg.validate()?;
    let setup = std::time::Instant::now();
    let device = build_device(&cfg, None)?;
    let setup_wall_s = setup.elapsed().as_secs_f64();
    let cpu0 = crate::bench::cpu_time_ns();
    let wall = std::time::Instant::now();
    let m = host::run(&cfg.host, &cfg.device(), device, cfg.seed, false)
        .map_err(herr)?
        .metrics;
    let cpu1 = crate::bench::cpu_time_ns();
    let cpu_s = if cpu0 > 0 && cpu1 > cpu0 {
        (cpu1 - cpu0) as f64 / 1e9
    } else {
        wall.elapsed().as_secs_f64()
    };
    let txns = m.txns_committed + m.txns_aborted;
    Ok(HostBench {
        device: if quick {
            "flagcommit (2 GiB cut)".into()
        } else {
            "flagcommit (32 GiB)".into()
        },
        workload: m.workload.clone(),
        txns,
        cpu_s,
        host_txns_per_cpu_s: txns as f64 / cpu_s.max(1e-9),
        sim_throughput_per_s: m.throughput_per_s,
        buffer_hit_ratio: m.buffer_hit_ratio,
        gc_share: m.gc_share,
        setup_wall_s,
    })
}

#[cfg(test)]
mod bench_tests {
    /// The host bench alone (the device bench takes minutes):
    /// `cargo test --release -p commitlab-world host_bench_alone -- --ignored --nocapture`
    /// (`HOST_BENCH_QUICK=1` for the 2 GiB cut).
    #[test]
    #[ignore]
    fn host_ipa_bench_alone() {
        let quick = std::env::var_os("HOST_BENCH_QUICK").is_some();
        let (oop, ipa) = super::host_ipa_bench(quick).unwrap();
        println!("{}", serde_json::to_string_pretty(&oop).unwrap());
        println!("{}", serde_json::to_string_pretty(&ipa).unwrap());
        println!(
            "ipa / out-of-place = {:.3}",
            ipa.host_txns_per_cpu_s / oop.host_txns_per_cpu_s
        );
    }

    /// The IPA bench's two configurations are ones the host accepts (IPA needs one DB page
    /// per flash page and room for its delta area), so `commitlab bench` cannot fail on them.
    #[test]
    fn the_ipa_bench_configurations_validate() {
        for quick in [true, false] {
            for u in ["out-of-place", "ipa"] {
                let cfg = crate::Config::load(&crate::ConfigSource {
                    preset: Some("flagcommit".into()),
                    file: None,
                    sets: super::ipa_bench_sets(u, quick),
                })
                .unwrap();
                cfg.validate().unwrap();
                assert_eq!(cfg.host.update, u);
                cfg.host.validate().unwrap();
                if u == "ipa" {
                    host::update::ipa::check(
                        &cfg.host,
                        cfg.nand.page_bytes,
                        cfg.nand.append_bytes,
                        true,
                    )
                    .unwrap();
                }
            }
        }
    }

    #[test]
    #[ignore]
    fn host_pcm_bench_alone() {
        let quick = std::env::var_os("HOST_BENCH_QUICK").is_some();
        let h = super::host_pcm_bench(quick).unwrap();
        println!("{}", serde_json::to_string_pretty(&h).unwrap());
    }

    #[test]
    #[ignore]
    fn host_bench_alone() {
        let quick = std::env::var_os("HOST_BENCH_QUICK").is_some();
        let h = super::host_bench(quick).unwrap();
        println!("{}", serde_json::to_string_pretty(&h).unwrap());
        println!("peak RSS {} MiB", crate::bench::peak_rss_bytes() >> 20);
    }
}
