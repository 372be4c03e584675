//! `commitlab sqlite run | compare | crash`: SQLite on the emulated device.
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
use sqlite::{Layout, Plant};
use std::path::PathBuf;

#[derive(Args, Clone)]
pub struct SqlArgs {
    /// Workload: mobile (X-FTL-style insert/update/delete of small rows, a commit each) or
    /// bank (transfers between accounts, some rolled back).
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
    /// Bank: the fraction of transfers rolled back.
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
    },
    /// Journal mode × protocol: transactions/s, device writes per transaction, write
    /// amplification, commit latency mean/p99.
    Compare {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Journal modes over `none`, comma-separated (default delete,truncate,persist,wal).
        #[arg(long, default_value = "delete,truncate,persist,wal")]
        modes: String,
        /// Protocols batch mode runs over, comma-separated (default every atomic one).
        #[arg(long, default_value = "tc,scc,bpcc,cfc,afc,lighttx,aw,mhl-d,mhl-m")]
        protocols: String,
        #[command(flatten)]
        sql: SqlArgs,
        /// Write every row's metrics as JSON to this file (`-`: stdout).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Crash-check SQLite on the device: record a bank workload's NAND operations, crash
    /// at each (or at N random states), recover the device alone, and judge the database
    /// (integrity_check, acked transfers present, nothing of others, total invariant).
    Crash {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Commit protocol (overrides protocol.name).
        #[arg(long, required = true)]
        protocol: Option<String>,
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
        (None, w) => {
            return Err(bad(format!(
                "--workload: unknown workload '{w}' (known: mobile, bank; or --sql FILE)"
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
        } => {
            let mut extra = Vec::new();
            if let Some(p) = protocol {
                extra.push(format!("protocol.name={}", toml::Value::String(p.clone())));
            }
            device_only(cfg)?;
            let cfg = load(cfg, None, &extra)?;
            let o = options(mode, sql)?;
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
            protocols,
            sql,
            json,
        } => {
            device_only(cfg)?;
            let base = load(cfg, None, &[])?;
            let out = Out::check(json)?;
            let mut rows: Vec<(Mode, String)> = Vec::new();
            for m in modes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let mode = Mode::parse(m).map_err(bad)?;
                if mode == Mode::Batch {
                    return Err(bad(
                        "--modes: batch runs over --protocols; list journal modes here",
                    ));
                }
                rows.push((mode, "none".into()));
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
                let mut o = options(mode.name(), sql)?;
                o.mode = mode;
                let m = sqlite::run(&c, &o).map_err(fail_of)?;
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
        SqliteCmd::Crash {
            cfg,
            protocol,
            mode,
            transfers,
            exhaustive: _,
            schedules,
            max_in_flight,
            plant,
            no_fallback_journal_sync,
        } => {
            device_only(cfg)?;
            let p = protocol.clone().unwrap_or_default();
            let base = sqcrash::small_config(&p);
            let extra = vec![format!("protocol.name={}", toml::Value::String(p.clone()))];
            let c = load(cfg, Some(base), &extra)?;
            let m = Mode::parse(mode).map_err(bad)?;
            let mut o = sqcrash::small_options(m, *transfers);
            o.fallback_journal_sync = !no_fallback_journal_sync;
            if let Some(pl) = plant {
                o.plant = Some(Plant::parse(pl).ok_or_else(|| {
                    bad(format!(
                        "--plant: unknown bug '{pl}' (known: {})",
                        Plant::NAMES.join(", ")
                    ))
                })?);
            }
            let rec = sqcrash::record(&c, &o).map_err(fail_of)?;
            let cm = match schedules {
                Some(n) => check::Mode::Random { schedules: *n },
                None => check::Mode::Exhaustive {
                    max_in_flight: *max_in_flight,
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
                    quote(&p),
                    m.name(),
                    transfers,
                    c.seed
                );
                if let Some(n) = schedules {
                    cmd.push_str(&format!(" --schedules {n}"));
                }
                for s in &cfg.sets {
                    cmd.push_str(&format!(" --set {}", quote(s)));
                }
                say(&format!("seed={} replay: {cmd}", c.seed))?;
                return Err(Fail(1, format!("{} violations", rep.violations)));
            }
            Ok(())
        }
    }
}
