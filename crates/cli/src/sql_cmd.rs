//! `commitlab sqlite run | compare | speedtest1 | crash`: SQLite on the emulated device.
//!
//! The device comes from the usual configuration layers (`--preset`, `--config`, `--set`,
//! `--seed`; `--protocol` sets `protocol.name`); the SQLite side from the flags below.
//! Exit codes: 0 done (crash: no violation), 1 a run that failed or a violation, 2 bad
//! input (an unknown mode, protocol or workload, a page size that does not divide the
//! flash page, batch mode on a protocol without transactions, a database larger than the
//! device).

use crate::crash::say;
use crate::{bad, load, quote, ConfigArgs, Fail, Out};
use clap::{Args, Subcommand};
use sqlite::crash as sqcrash;
use sqlite::run::{Mode, RunError, SqliteMetrics, SqliteOptions, Workload};
use sqlite::speedtest1::{self as st1, Speedtest1Options};
use sqlite::{Layout, Plant};
use std::path::PathBuf;

#[derive(Args, Clone)]
pub struct SqlArgs {
    /// Workload: mobile (X-FTL-style insert/update/delete of small rows, a commit each),
    /// bank (transfers between accounts, some rolled back) or tpcb (TPC-B in SQL: one
    /// branch, --rows accounts, --rollback-ratio as its δ).
    #[arg(long, default_value = "mobile", conflicts_with = "sql")]
    pub workload: String,
    /// Run this SQL file instead, statement by statement.
    #[arg(long, value_name = "FILE")]
    pub sql: Option<PathBuf>,
    /// Measured transactions of the built-in workload.
    #[arg(long, default_value_t = 1000)]
    pub transactions: u64,
    /// Rows (mobile) or accounts (bank) created before the measured transactions.
    #[arg(long, default_value_t = 1000)]
    pub rows: u64,
    /// SQLite page size in bytes (must divide the flash page; 0 = the flash page size).
    #[arg(long, default_value_t = 0)]
    pub page_size: u32,
    /// SQLite page cache in pages.
    #[arg(long, default_value_t = 2000)]
    pub cache_pages: u32,
    /// WAL mode: checkpoint every N frames.
    #[arg(long, default_value_t = 1000)]
    pub wal_autocheckpoint: u32,
    /// Bank and tpcb: the fraction of transactions rolled back (tpcb: at most 0.5).
    #[arg(long, default_value_t = 0.1)]
    pub rollback_ratio: f64,
    /// Extent of the database file in flash pages (with --journal-pages and --wal-pages;
    /// all 0 = 40 % / 40 % / 20 % of the logical space).
    #[arg(long, default_value_t = 0)]
    pub db_pages: u32,
    #[arg(long, default_value_t = 0)]
    pub journal_pages: u32,
    #[arg(long, default_value_t = 0)]
    pub wal_pages: u32,
    /// Do not sync the journal before the first database write after a batch fell back
    /// to the journal (SQLite's own order; not crash-safe, see docs/SQLITE.md).
    #[arg(long)]
    pub no_fallback_journal_sync: bool,
}

#[derive(Subcommand, Clone)]
pub enum SqliteCmd {
    /// Run a SQL workload through SQLite on one configured device and print its metrics.
    Run {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Commit protocol (overrides protocol.name).
        #[arg(long)]
        protocol: Option<String>,
        /// Atomicity: delete, truncate, persist (rollback journal), wal, or batch
        /// (batch-atomic writes on device transactions; atomic protocols only).
        #[arg(long, default_value = "delete")]
        mode: String,
        #[command(flatten)]
        sql: SqlArgs,
        /// Write the metrics as JSON to this file (`-`: stdout).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Run the same SQL on SQLite's in-memory database instead, without a device (the
        /// CPU baseline of docs/PERFORMANCE.md; mobile workload only, no metrics).
        #[arg(long, conflicts_with = "json")]
        in_memory: bool,
    },
    /// Journal mode × protocol: transactions/s, device writes per transaction, write
    /// amplification, commit latency mean/p99.
    Compare {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Journal modes, comma-separated (default delete,truncate,persist,wal), each run
        /// over every protocol of --journal-protocols.
        #[arg(long, default_value = "delete,truncate,persist,wal")]
        modes: String,
        /// Protocols the journal modes run over, comma-separated, or `all` (every protocol;
        /// the journal's writes are plain one-page writes on each). Default: none.
        #[arg(long, default_value = "none")]
        journal_protocols: String,
        /// Protocols batch mode runs over, comma-separated (default every atomic one).
        #[arg(long, default_value = "tc,scc,bpcc,cfc,afc,lighttx,aw,mhl-d,mhl-m")]
        protocols: String,
        #[command(flatten)]
        sql: SqlArgs,
        /// With --workload speedtest1: speedtest1.c (default target/speedtest1/speedtest1.c,
        /// where scripts/fetch-speedtest1.sh puts it).
        #[arg(long, value_name = "FILE")]
        source: Option<PathBuf>,
        /// With --workload speedtest1: its --size (default 100).
        #[arg(long)]
        size: Option<u32>,
        /// Write every row's metrics as JSON to this file (`-`: stdout).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// SQLite's own benchmark, speedtest1 (SQLite's test/speedtest1.c, fetched by
    /// scripts/fetch-speedtest1.sh and compiled against the bundled SQLite), on one
    /// configured device: its per-test times in simulated time, then the run's metrics; the
    /// database must pass PRAGMA integrity_check afterwards (else exit 1). Everything after
    /// the commitlab options is speedtest1's (--size N, --testset T, --nosync, ...).
    Speedtest1 {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Commit protocol (overrides protocol.name).
        #[arg(long)]
        protocol: Option<String>,
        /// Atomicity: delete, truncate, persist (rollback journal), wal, or batch
        /// (batch-atomic writes on device transactions; atomic protocols only).
        #[arg(long, default_value = "delete")]
        mode: String,
        /// speedtest1.c (default target/speedtest1/speedtest1.c).
        #[arg(long, value_name = "FILE")]
        source: Option<PathBuf>,
        /// SQLite page size in bytes (must divide the flash page; 0 = the flash page size).
        #[arg(long, default_value_t = 0)]
        page_size: u32,
        /// Extents of the database, journal and WAL files in flash pages (all 0 = 40 % /
        /// 40 % / 20 % of the logical space).
        #[arg(long, default_value_t = 0)]
        db_pages: u32,
        #[arg(long, default_value_t = 0)]
        journal_pages: u32,
        #[arg(long, default_value_t = 0)]
        wal_pages: u32,
        /// Do not sync the journal before the first database write after a batch fell back.
        #[arg(long)]
        no_fallback_journal_sync: bool,
        /// Write the metrics and the per-test device counters as JSON (`-`: stdout).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Run the same speedtest1 on SQLite's in-memory database (its --memdb) with no
        /// device: the CPU baseline of docs/PERFORMANCE.md (wall-clock times, no metrics).
        #[arg(long, conflicts_with = "json")]
        in_memory: bool,
        /// speedtest1's own options.
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "SPEEDTEST1_OPTIONS"
        )]
        args: Vec<String>,
    },
    /// Crash-check SQLite on the device: record a bank workload's NAND operations, crash
    /// at each (or at N random states), recover the device alone, and judge the database
    /// (integrity_check, acked transfers present, nothing of others, total invariant).
    Crash {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Commit protocol (overrides protocol.name), or `all`: every protocol.
        #[arg(long, required = true)]
        protocol: Option<String>,
        /// delete, truncate, persist, wal, batch, or `all` (every journal mode, and batch
        /// over the atomic protocols).
        #[arg(long, default_value = "delete")]
        mode: String,
        /// Bank transfers in the recorded run.
        #[arg(long, default_value_t = 12)]
        transfers: u64,
        /// Every crash state (the default without --schedules).
        #[arg(long, conflicts_with = "schedules")]
        exhaustive: bool,
        /// N seeded random crash states instead.
        #[arg(long)]
        schedules: Option<u64>,
        /// Exhaustive mode refuses recordings with more operations in progress at once.
        #[arg(long, default_value_t = 10)]
        max_in_flight: usize,
        /// Plant a bug to see the checker catch it: ack-commit-early (batch) or
        /// skip-journal-sync.
        #[arg(long, hide = true)]
        plant: Option<String>,
        #[arg(long)]
        no_fallback_journal_sync: bool,
        /// Invert the verdict, to show the checker catches a planted bug: exit 0 only if
        /// every cell has a violation (exit 1 names the cells without one).
        #[arg(long, requires = "plant")]
        expect_violations: bool,
    },
}

fn options(mode: &str, a: &SqlArgs) -> Result<SqliteOptions, Fail> {
    let mode = Mode::parse(mode).map_err(bad)?;
    let workload = match (&a.sql, a.workload.as_str()) {
        (Some(p), _) => Workload::Sql {
            name: p.display().to_string(),
            text: std::fs::read_to_string(p)
                .map_err(|e| bad(format!("--sql {}: {e}", p.display())))?,
        },
        (None, "mobile") => Workload::Mobile,
        (None, "bank") => Workload::Bank,
        (None, "tpcb") => Workload::Tpcb,
        (None, w) => {
            return Err(bad(format!(
                "--workload: unknown workload '{w}' (known: mobile, bank, tpcb; or --sql FILE)"
            )))
        }
    };
    Ok(SqliteOptions {
        mode,
        workload,
        transactions: a.transactions,
        rows: a.rows,
        page_size: a.page_size,
        cache_pages: a.cache_pages,
        wal_autocheckpoint: a.wal_autocheckpoint,
        rollback_ratio: a.rollback_ratio,
        layout: Layout {
            db_pages: a.db_pages,
            journal_pages: a.journal_pages,
            wal_pages: a.wal_pages,
        },
        fallback_journal_sync: !a.no_fallback_journal_sync,
        plant: None,
    })
}

/// A SQLite run takes the device from the configuration (`seed`, `nand`, `ftl`, `protocol`)
/// and its workload from the flags: keys of the other sections would be silently unused,
/// so they are refused.
fn device_only(a: &ConfigArgs) -> Result<(), Fail> {
    if a.update.is_some() {
        return Err(bad(
            "--update: SQLite runs have no DBMS host; the update strategy does not apply",
        ));
    }
    for set in &a.sets {
        let key = set.split('=').next().unwrap_or("");
        for section in ["workload", "host", "run"] {
            if key == section || key.starts_with(&format!("{section}.")) {
                return Err(bad(format!(
                    "--set {key}: SQLite runs use the seed, nand, ftl and protocol sections; the workload comes from --workload / --sql / --transactions, so {section}.* does not apply"
                )));
            }
        }
    }
    Ok(())
}

fn fail_of(e: RunError) -> Fail {
    match e {
        RunError::Input(_) | RunError::Config(_) => bad(e),
        // A database past its extent is bad input too: the device is too small for it.
        RunError::Run(m) if m.contains("larger than the device") => bad(m),
        RunError::Run(m) => Fail(1, m),
    }
}

fn print_metrics(m: &SqliteMetrics) -> Result<(), Fail> {
    say(&format!(
        "sqlite {} over {} ({}, SQLite {} with {}-byte pages on {}-byte flash pages)",
        m.mode.name(),
        m.protocol,
        m.workload,
        m.sqlite_version,
        m.sqlite_page_bytes,
        m.flash_page_bytes
    ))?;
    say(&format!(
        "  transactions {} committed, {} rolled back in {:.3} ms simulated: {:.1} txn/s",
        m.transactions,
        m.rolled_back,
        m.sim_time_ns as f64 / 1e6,
        m.transactions_per_s
    ))?;
    say(&format!(
        "  device writes {} ({:.2}/txn), reads {}, NAND programs {} ({:.2}/txn), erases {}, GC migrations {}, write amplification {:.3}",
        m.device_writes,
        m.device_writes_per_txn,
        m.device_reads,
        m.nand_programs,
        m.nand_programs_per_txn,
        m.nand_erases,
        m.gc_page_migrations,
        m.write_amplification
    ))?;
    say(&format!(
        "  commit latency mean {:.1} us, p50 {:.1} us, p99 {:.1} us",
        m.commit_latency_ns.mean / 1e3,
        m.commit_latency_ns.p50 as f64 / 1e3,
        m.commit_latency_ns.p99 as f64 / 1e3
    ))?;
    let v = &m.vfs;
    say(&format!(
        "  vfs: {} syncs, flash pages written db {} / journal {} / wal {} / superblock {}, {} read-modify-write reads, batches {} committed / {} fell back",
        v.syncs,
        v.db_page_writes,
        v.journal_page_writes,
        v.wal_page_writes,
        v.superblock_writes,
        v.rmw_reads,
        v.batch_commits,
        v.batch_fallbacks
    ))
}

pub fn cmd_sqlite(c: &SqliteCmd) -> Result<(), Fail> {
    match c {
        SqliteCmd::Run {
            cfg,
            protocol,
            mode,
            sql,
            json,
            in_memory,
        } => {
            let mut extra = Vec::new();
            if let Some(p) = protocol {
                extra.push(format!("protocol.name={}", toml::Value::String(p.clone())));
            }
            device_only(cfg)?;
            let cfg = load(cfg, None, &extra)?;
            let o = options(mode, sql)?;
            if *in_memory {
                let n = sqlite::run::run_in_memory(&cfg, &o).map_err(fail_of)?;
                return say(&format!(
                    "sqlite {} in memory (no device): {n} transactions",
                    o.workload.name()
                ));
            }
            let out = Out::check(json)?;
            let m = sqlite::run(&cfg, &o).map_err(fail_of)?;
            match out {
                Some(Out::Stdout) => {}
                _ => print_metrics(&m)?,
            }
            if let Some(o) = out {
                let text = serde_json::to_string_pretty(&m).map_err(|e| Fail(2, e.to_string()))?;
                o.write(&(text + "\n"))?;
            }
            Ok(())
        }
        SqliteCmd::Compare {
            cfg,
            modes,
            journal_protocols,
            protocols,
            sql,
            source,
            size,
            json,
        } => {
            device_only(cfg)?;
            let speedtest = sql.workload == "speedtest1" && sql.sql.is_none();
            if !speedtest && (source.is_some() || size.is_some()) {
                return Err(bad("--source and --size go with --workload speedtest1"));
            }
            let base = load(cfg, None, &[])?;
            let out = Out::check(json)?;
            let mut rows: Vec<(Mode, String)> = Vec::new();
            let jps: Vec<String> = if journal_protocols.trim() == "all" {
                ssd::protocol::names()
                    .iter()
                    .map(|p| p.to_string())
                    .collect()
            } else {
                let mut v = Vec::new();
                for p in journal_protocols
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                {
                    ssd::protocol::lookup(p)
                        .map_err(|e| bad(format!("--journal-protocols: {e}")))?;
                    v.push(p.to_string());
                }
                v
            };
            for m in modes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let mode = Mode::parse(m).map_err(bad)?;
                if mode == Mode::Batch {
                    return Err(bad(
                        "--modes: batch runs over --protocols; list journal modes here",
                    ));
                }
                for p in &jps {
                    rows.push((mode, p.clone()));
                }
            }
            for p in protocols
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                let info =
                    ssd::protocol::lookup(p).map_err(|e| bad(format!("--protocols: {e}")))?;
                if !info.atomic {
                    return Err(bad(format!(
                        "--protocols: {p} has no atomic transactions, so no batch-atomic writes"
                    )));
                }
                rows.push((Mode::Batch, p.to_string()));
            }
            let mut all = Vec::new();
            say(&format!(
                "{:<9} {:<8} {:>11} {:>12} {:>10} {:>7} {:>14} {:>13} {:>9}",
                "mode",
                "protocol",
                "txn/s",
                "writes/txn",
                "progs/txn",
                "WA",
                "commit mean us",
                "commit p99 us",
                "fallbacks"
            ))?;
            for (mode, p) in rows {
                let mut c = base.clone();
                c.protocol.name = p.clone();
                let m = if speedtest {
                    let mut args = Vec::new();
                    if let Some(n) = size {
                        args = vec!["--size".to_string(), n.to_string()];
                    }
                    let o = speedtest1_options(mode.name(), sql, source, args)?;
                    st1::run_speedtest1(&c, &o).map_err(fail_of)?.metrics
                } else {
                    let mut o = options(mode.name(), sql)?;
                    o.mode = mode;
                    sqlite::run(&c, &o).map_err(fail_of)?
                };
                say(&format!(
                    "{:<9} {:<8} {:>11.1} {:>12.2} {:>10.2} {:>7.3} {:>14.1} {:>13.1} {:>9}",
                    mode.name(),
                    p,
                    m.transactions_per_s,
                    m.device_writes_per_txn,
                    m.nand_programs_per_txn,
                    m.write_amplification,
                    m.commit_latency_ns.mean / 1e3,
                    m.commit_latency_ns.p99 as f64 / 1e3,
                    m.vfs.batch_fallbacks
                ))?;
                all.push(m);
            }
            if let Some(o) = out {
                let text =
                    serde_json::to_string_pretty(&all).map_err(|e| Fail(2, e.to_string()))?;
                o.write(&(text + "\n"))?;
            }
            Ok(())
        }
        SqliteCmd::Speedtest1 {
            cfg,
            protocol,
            mode,
            source,
            page_size,
            db_pages,
            journal_pages,
            wal_pages,
            no_fallback_journal_sync,
            json,
            in_memory,
            args,
        } => {
            let mut extra = Vec::new();
            if let Some(p) = protocol {
                extra.push(format!("protocol.name={}", toml::Value::String(p.clone())));
            }
            device_only(cfg)?;
            let c = load(cfg, None, &extra)?;
            let sql = SqlArgs {
                workload: "mobile".into(),
                sql: None,
                transactions: 1,
                rows: 1,
                page_size: *page_size,
                cache_pages: 2000,
                wal_autocheckpoint: 1000,
                rollback_ratio: 0.0,
                db_pages: *db_pages,
                journal_pages: *journal_pages,
                wal_pages: *wal_pages,
                no_fallback_journal_sync: *no_fallback_journal_sync,
            };
            let o = speedtest1_options(mode, &sql, source, args.clone())?;
            if *in_memory {
                let text = st1::run_in_memory(&o).map_err(fail_of)?;
                print!("{text}");
                return say(
                    "speedtest1 on SQLite's in-memory database (no device; wall-clock times)",
                );
            }
            let out = Out::check(json)?;
            let r = match st1::run_speedtest1(&c, &o) {
                Ok(r) => r,
                Err(e) => {
                    let mut f = fail_of(e);
                    if f.0 == 1 {
                        f.1 = format!(
                            "{}\nseed={} replay: {}",
                            f.1,
                            c.seed,
                            speedtest1_replay(cfg, protocol, mode, source, &o.args, c.seed)
                        );
                    }
                    return Err(f);
                }
            };
            if !matches!(out, Some(Out::Stdout)) {
                print!("{}", r.output);
                eprint!("{}", r.errors);
                print_metrics(&r.metrics)?;
                say(&format!(
                    "  speedtest1 --size {} --testset {}: {} tests; integrity_check: {}",
                    r.size,
                    r.testset,
                    r.tests.len(),
                    r.integrity_check
                ))?;
            }
            if let Some(o) = out {
                let text = serde_json::to_string_pretty(&r).map_err(|e| Fail(2, e.to_string()))?;
                o.write(&(text + "\n"))?;
            }
            if r.integrity_check != "ok" {
                return Err(Fail(
                    1,
                    format!(
                        "PRAGMA integrity_check after speedtest1: {}\nseed={} replay: {}",
                        r.integrity_check,
                        c.seed,
                        speedtest1_replay(cfg, protocol, mode, source, &o.args, c.seed)
                    ),
                ));
            }
            Ok(())
        }
        SqliteCmd::Crash {
            cfg,
            protocol,
            mode,
            transfers,
            exhaustive,
            schedules,
            max_in_flight,
            plant,
            no_fallback_journal_sync,
            expect_violations,
        } => {
            device_only(cfg)?;
            let p = protocol.clone().unwrap_or_default();
            let plant = match plant {
                None => None,
                Some(pl) => Some(Plant::parse(pl).ok_or_else(|| {
                    bad(format!(
                        "--plant: unknown bug '{pl}' (known: {})",
                        Plant::NAMES.join(", ")
                    ))
                })?),
            };
            let cells = sqcrash::matrix(&p, mode).map_err(bad)?;
            let a = CrashArgs {
                cfg,
                transfers: *transfers,
                exhaustive: *exhaustive,
                schedules: *schedules,
                max_in_flight: *max_in_flight,
                plant,
                no_fallback_journal_sync: *no_fallback_journal_sync,
            };
            // Every cell runs (a violation in one does not hide the others).
            let (mut states, mut fewest, mut violations) = (0u64, u64::MAX, 0u64);
            let (mut bad_cells, mut missed, mut seed) = (0, Vec::new(), 0);
            for (p, m) in &cells {
                let (s, v, sd) = crash_cell(&a, p, *m)?;
                seed = sd;
                states += s;
                fewest = fewest.min(s);
                violations += v;
                bad_cells += usize::from(v > 0);
                if v == 0 {
                    missed.push(format!("{} over {p}", m.name()));
                }
            }
            if cells.len() > 1 {
                say(&format!(
                    "sqlite crash matrix: {} cells (mode x protocol), {states} crash states in all, fewest in one cell {fewest}, {violations} violations in {bad_cells} cells",
                    cells.len()
                ))?;
            }
            if *expect_violations {
                if !missed.is_empty() {
                    return Err(Fail(
                        1,
                        format!(
                            "the planted bug went unnoticed in {} (seed={seed})",
                            missed.join(", ")
                        ),
                    ));
                }
                say("the planted bug was caught in every cell")?;
                return Ok(());
            }
            if violations > 0 {
                return Err(Fail(1, format!("{violations} violations")));
            }
            Ok(())
        }
    }
}

fn speedtest1_options(
    mode: &str,
    a: &SqlArgs,
    source: &Option<PathBuf>,
    args: Vec<String>,
) -> Result<Speedtest1Options, Fail> {
    let mut sqlo = options(
        mode,
        &SqlArgs {
            workload: "mobile".into(),
            sql: None,
            ..a.clone()
        },
    )?;
    sqlo.workload = Workload::Mobile;
    Ok(Speedtest1Options {
        sql: sqlo,
        source: source
            .clone()
            .unwrap_or_else(|| PathBuf::from(st1::DEFAULT_SOURCE)),
        args,
        in_memory: false,
    })
}

/// The command that repeats a speedtest1 run.
fn speedtest1_replay(
    cfg: &ConfigArgs,
    protocol: &Option<String>,
    mode: &str,
    source: &Option<PathBuf>,
    args: &[String],
    seed: u64,
) -> String {
    let mut cmd = format!(
        "commitlab sqlite speedtest1 --mode {} --seed {seed}",
        quote(mode)
    );
    if let Some(p) = protocol {
        cmd.push_str(&format!(" --protocol {}", quote(p)));
    }
    if let Some(s) = source {
        cmd.push_str(&format!(" --source {}", quote(&s.display().to_string())));
    }
    if let Some(x) = &cfg.preset {
        cmd.push_str(&format!(" --preset {}", quote(x)));
    }
    if let Some(x) = &cfg.config {
        cmd.push_str(&format!(" --config {}", quote(&x.display().to_string())));
    }
    for s in &cfg.sets {
        cmd.push_str(&format!(" --set {}", quote(s)));
    }
    for a in args {
        cmd.push_str(&format!(" {}", quote(a)));
    }
    cmd
}

struct CrashArgs<'a> {
    cfg: &'a ConfigArgs,
    transfers: u64,
    exhaustive: bool,
    schedules: Option<u64>,
    max_in_flight: usize,
    plant: Option<Plant>,
    no_fallback_journal_sync: bool,
}

/// Records and checks one (protocol, mode) cell; prints its summary line and, on
/// violations, the first states, the seed and the replay command. Returns (states,
/// violations, seed).
fn crash_cell(a: &CrashArgs, p: &str, m: Mode) -> Result<(u64, u64, u64), Fail> {
    let base = sqcrash::small_config(p);
    let extra = vec![format!(
        "protocol.name={}",
        toml::Value::String(p.to_string())
    )];
    let c = load(a.cfg, Some(base), &extra)?;
    let mut o = sqcrash::small_options(m, a.transfers);
    o.fallback_journal_sync = !a.no_fallback_journal_sync;
    o.plant = a.plant;
    let rec = sqcrash::record(&c, &o).map_err(fail_of)?;
    let cm = match a.schedules {
        Some(n) => check::Mode::Random { schedules: n },
        None => check::Mode::Exhaustive {
            max_in_flight: a.max_in_flight,
        },
    };
    let rep = sqcrash::check(&rec, cm, c.seed, 0).map_err(bad)?;
    say(&format!(
        "sqlite {} over {}: {} states ({} ops recorded of which {} erases, at most {} in flight, {} transfers committed, {} batch fallbacks), {} violations",
        m.name(),
        p,
        rep.states,
        rep.ops,
        rep.erases,
        rep.max_in_flight_seen,
        rep.transfers_committed,
        rep.batch_fallbacks,
        rep.violations
    ))?;
    for v in &rep.first {
        say(&sqcrash::describe(&rec, &v.state))?;
        for f in &v.findings {
            say(&format!("  {f}"))?;
        }
    }
    if rep.violations > 0 {
        let mut cmd = format!(
            "commitlab sqlite crash --protocol {} --mode {} --transfers {} --seed {}",
            quote(p),
            m.name(),
            a.transfers,
            c.seed
        );
        match a.schedules {
            Some(n) => cmd.push_str(&format!(" --schedules {n}")),
            None if a.exhaustive => cmd.push_str(" --exhaustive"),
            None => {}
        }
        if a.max_in_flight != 10 && a.schedules.is_none() {
            cmd.push_str(&format!(" --max-in-flight {}", a.max_in_flight));
        }
        if let Some(pl) = a.plant {
            cmd.push_str(&format!(" --plant {}", pl.name()));
        }
        if a.no_fallback_journal_sync {
            cmd.push_str(" --no-fallback-journal-sync");
        }
        if let Some(x) = &a.cfg.preset {
            cmd.push_str(&format!(" --preset {}", quote(x)));
        }
        if let Some(x) = &a.cfg.config {
            cmd.push_str(&format!(" --config {}", quote(&x.display().to_string())));
        }
        for s in &a.cfg.sets {
            cmd.push_str(&format!(" --set {}", quote(s)));
        }
        say(&format!("seed={} replay: {cmd}", c.seed))?;
    }
    Ok((rep.states, rep.violations, c.seed))
}
