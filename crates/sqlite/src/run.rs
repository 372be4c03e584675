//! A SQLite run on a configured device: the options, the session (a connection through a
//! registered VFS), the built-in workloads and the run's metrics.
//!
//! Workloads:
//! - `mobile`: X-FTL's (SIGMOD 2013) picture of Android apps: small rows inserted (50 %),
//!   updated (30 %) and deleted (20 %), each statement its own transaction;
//! - `bank`: transfers between accounts (two UPDATEs and an INSERT into a transfer log per
//!   transaction), a fraction rolled back; the crash checker's application oracle;
//! - `sql`: a user's file, statement by statement; a transaction ends whenever SQLite is
//!   back in autocommit mode after a statement that changed rows.
//!
//! Simulated time is device time only: SQLite's own CPU time is not on the clock.

use crate::store::{DeviceFs, FsOptions, FsStats, Layout, Plant};
use crate::vfs::Registered;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use sim::histogram::{Histogram, Percentiles};
use sim::{Rng, SimTime};
use workload::db::{FieldOp, RecOp, TxnSource};
use workload::tpcb::{Tpcb, TpcbConfig};
use world::Config;

/// How SQLite gets atomicity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Delete,
    Truncate,
    Persist,
    Wal,
    /// Batch-atomic writes on a device transaction (journal_mode DELETE for fallbacks).
    Batch,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Delete,
        Mode::Truncate,
        Mode::Persist,
        Mode::Wal,
        Mode::Batch,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Delete => "delete",
            Mode::Truncate => "truncate",
            Mode::Persist => "persist",
            Mode::Wal => "wal",
            Mode::Batch => "batch",
        }
    }
    pub fn parse(s: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "sqlite.mode: unknown mode '{s}' (known: delete, truncate, persist, wal, batch)"
                )
            })
    }
    pub(crate) fn journal_mode(self) -> &'static str {
        match self {
            Mode::Delete | Mode::Batch => "DELETE",
            Mode::Truncate => "TRUNCATE",
            Mode::Persist => "PERSIST",
            Mode::Wal => "WAL",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Workload {
    Mobile,
    Bank,
    /// TPC-B in SQL, its transactions drawn by `workload::tpcb` (one branch, `rows`
    /// accounts, `rollback_ratio` as δ).
    Tpcb,
    /// A SQL file's text and its name.
    Sql {
        name: String,
        text: String,
    },
}

impl Workload {
    pub fn name(&self) -> String {
        match self {
            Workload::Mobile => "mobile".into(),
            Workload::Bank => "bank".into(),
            Workload::Tpcb => "tpcb".into(),
            Workload::Sql { name, .. } => format!("sql:{name}"),
        }
    }
}

/// Everything a SQLite run needs besides the device configuration.
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    pub mode: Mode,
    pub workload: Workload,
    /// Measured transactions (built-in workloads).
    pub transactions: u64,
    /// Rows (mobile) or accounts (bank) created before the measured transactions.
    pub rows: u64,
    /// SQLite's page size in bytes; must divide the flash page. 0: the flash page size
    /// (at most 65536).
    pub page_size: u32,
    /// SQLite's page cache, in pages.
    pub cache_pages: u32,
    /// WAL mode: checkpoint when the WAL holds this many frames.
    pub wal_autocheckpoint: u32,
    /// Bank: fraction of transfers that end in ROLLBACK.
    pub rollback_ratio: f64,
    pub layout: Layout,
    pub fallback_journal_sync: bool,
    pub plant: Option<Plant>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            mode: Mode::Delete,
            workload: Workload::Mobile,
            transactions: 1000,
            rows: 1000,
            page_size: 0,
            cache_pages: 2000,
            wal_autocheckpoint: 1000,
            rollback_ratio: 0.1,
            layout: Layout::default(),
            fallback_journal_sync: true,
            plant: None,
        }
    }
}

/// A bad option: the key and why (exit code 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct OptionError {
    pub key: String,
    pub reason: String,
}

fn bad(key: &str, reason: impl Into<String>) -> OptionError {
    OptionError {
        key: key.into(),
        reason: reason.into(),
    }
}

/// Why a run failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Input(#[from] OptionError),
    #[error("config: {0}")]
    Config(String),
    /// SQLite or the device failed during the run.
    #[error("{0}")]
    Run(String),
}

impl SqliteOptions {
    /// The SQLite page size for a flash page of `flash` bytes, or why it cannot be used.
    pub fn effective_page_size(&self, flash: u32) -> Result<u32, OptionError> {
        let p = if self.page_size == 0 {
            flash.min(65_536)
        } else {
            self.page_size
        };
        if !(512..=65_536).contains(&p) || !p.is_power_of_two() {
            return Err(bad(
                "sqlite.page_size",
                format!("{p}: SQLite page sizes are powers of two from 512 to 65536"),
            ));
        }
        if flash % p != 0 {
            return Err(bad(
                "sqlite.page_size",
                format!("{p} does not divide the flash page ({flash} bytes, nand.page_bytes)"),
            ));
        }
        Ok(p)
    }

    /// Checks the options against the device configuration.
    pub fn validate(&self, cfg: &Config) -> Result<(), OptionError> {
        let info = ssd::protocol::lookup(&cfg.protocol.name)
            .map_err(|e| bad("protocol.name", e.to_string()))?;
        if self.mode == Mode::Batch && !info.atomic {
            return Err(bad(
                "sqlite.mode",
                format!(
                    "batch-atomic writes need a protocol with atomic transactions; {} has none (use delete, truncate, persist or wal)",
                    info.name
                ),
            ));
        }
        if self.mode == Mode::Batch && !crate::vfs::batch_atomic_compiled() {
            return Err(bad(
                "sqlite.mode",
                "this SQLite library was built without SQLITE_ENABLE_BATCH_ATOMIC_WRITE",
            ));
        }
        if self.plant == Some(Plant::AckCommitEarly) && self.mode != Mode::Batch {
            return Err(bad(
                "sqlite.plant",
                "ack-commit-early concerns batch mode only",
            ));
        }
        self.effective_page_size(cfg.nand.page_bytes)?;
        if self.cache_pages == 0 {
            return Err(bad("sqlite.cache_pages", "must be at least 1"));
        }
        if self.wal_autocheckpoint == 0 {
            return Err(bad("sqlite.wal_autocheckpoint", "must be at least 1"));
        }
        if !(0.0..=1.0).contains(&self.rollback_ratio) {
            return Err(bad("sqlite.rollback_ratio", "must be in [0, 1]"));
        }
        if self.workload == Workload::Tpcb && self.rollback_ratio > 0.5 {
            return Err(bad(
                "sqlite.rollback_ratio",
                format!(
                    "{}: tpcb rolls back at most half its transactions (the generator's delta_abort is in [0, 0.5])",
                    self.rollback_ratio
                ),
            ));
        }
        if self.workload == Workload::Tpcb {
            tpcb_config(self)
                .validate()
                .map_err(|e| bad("sqlite.workload", format!("tpcb: {e}")))?;
        }
        if self.rows == 0 && !matches!(self.workload, Workload::Sql { .. }) {
            return Err(bad("sqlite.rows", "must be at least 1"));
        }
        Ok(())
    }

    pub fn fs_options(&self) -> FsOptions {
        FsOptions {
            batch: self.mode == Mode::Batch,
            fallback_journal_sync: self.fallback_journal_sync,
            plant: self.plant,
            ..Default::default()
        }
    }
}

/// A connection through a registered VFS. Field order matters: the connection is closed
/// before the VFS is unregistered.
pub struct Session {
    pub conn: Connection,
    pub vfs: Registered,
}

impl Session {
    /// Opens the database on `fs` and sets the run's pragmas.
    pub fn open(fs: DeviceFs, seed: u64, o: &SqliteOptions) -> Result<Session, String> {
        let flash = fs.page_bytes() as u32;
        let vfs = Registered::new(fs, seed)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags_and_vfs("commitlab.db", flags, vfs.name())
            .map_err(|e| with_vfs_error(&vfs, e))?;
        let s = Session { conn, vfs };
        let page = o.effective_page_size(flash).map_err(|e| e.to_string())?;
        let mut pragmas = String::new();
        if o.mode == Mode::Wal {
            // No shared-memory methods: WAL needs exclusive locking (the index in heap),
            // set before anything reads the database: opening a WAL database without it
            // is SQLITE_CANTOPEN (found by `commitlab sqlite crash --protocol none --mode
            // wal`, seed=1: every crash state failed to reopen while page_size came first).
            pragmas.push_str(&format!(
                "PRAGMA locking_mode = EXCLUSIVE; PRAGMA wal_autocheckpoint = {}; ",
                o.wal_autocheckpoint
            ));
        }
        pragmas.push_str(&format!(
            "PRAGMA page_size = {page}; PRAGMA cache_size = {}; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;",
            o.cache_pages
        ));
        s.conn.execute_batch(&pragmas).map_err(|e| s.err(e))?;
        let jm: String = s
            .conn
            .query_row(
                &format!("PRAGMA journal_mode = {}", o.mode.journal_mode()),
                [],
                |r| r.get(0),
            )
            .map_err(|e| s.err(e))?;
        if !jm.eq_ignore_ascii_case(o.mode.journal_mode()) {
            return Err(format!(
                "SQLite refused journal_mode = {} (it reports {jm})",
                o.mode.journal_mode()
            ));
        }
        Ok(s)
    }

    /// A SQLite error with the VFS's message, if it left one.
    pub fn err(&self, e: rusqlite::Error) -> String {
        with_vfs_error(&self.vfs, e)
    }

    pub fn now(&self) -> SimTime {
        self.vfs.ctx().fs.borrow().now
    }

    /// The device's counters and simulated clock now (a live connection's metrics are the
    /// difference of two of these).
    pub fn counters(&self) -> Counters {
        let s = snapshot(self);
        Counters {
            sim_time_ns: s.t.as_ns(),
            device_writes: s.writes,
            device_reads: s.reads,
            nand_programs: s.programs,
            nand_erases: s.erases,
            gc_page_migrations: s.migrations,
            vfs: s.fs,
        }
    }

    /// Closes the connection and hands back the file layer.
    pub fn close(self) -> Result<DeviceFs, String> {
        let Session { conn, vfs } = self;
        if let Err((_, e)) = conn.close() {
            return Err(with_vfs_error(&vfs, e));
        }
        Ok(vfs.into_fs())
    }
}

fn with_vfs_error(vfs: &Registered, e: rusqlite::Error) -> String {
    match vfs.take_error() {
        Some(m) => format!("sqlite: {e} (vfs: {m})"),
        None => format!("sqlite: {e}"),
    }
}

/// One bank transfer as the application saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub id: u64,
    pub src: u64,
    pub dst: u64,
    pub amount: i64,
    /// When COMMIT (or ROLLBACK) was issued.
    pub issued: SimTime,
    /// When it returned; `None` if it did not return successfully.
    pub acked: Option<SimTime>,
    pub rolled_back: bool,
}

pub const BANK_BALANCE: i64 = 1000;

/// Creates the bank schema with `accounts` accounts of `BANK_BALANCE` each.
pub fn bank_setup(s: &Session, accounts: u64) -> Result<(), String> {
    let mut sql = String::from(
        "BEGIN; CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
         CREATE TABLE transfers(id INTEGER PRIMARY KEY, src INTEGER, dst INTEGER, amount INTEGER);",
    );
    for a in 0..accounts {
        sql.push_str(&format!(
            "INSERT INTO accounts VALUES({a}, {BANK_BALANCE});"
        ));
    }
    sql.push_str("COMMIT;");
    s.conn.execute_batch(&sql).map_err(|e| s.err(e))
}

/// Runs one transfer; returns it as the application saw it.
pub fn bank_transfer(
    s: &Session,
    r: &mut Rng,
    id: u64,
    accounts: u64,
    rollback_ratio: f64,
    lat: &mut Histogram,
) -> Result<Transfer, String> {
    let src = r.below(accounts);
    let mut dst = r.below(accounts);
    if dst == src {
        dst = (dst + 1) % accounts;
    }
    let amount = 1 + r.below(100) as i64;
    let rollback = r.chance(rollback_ratio);
    s.conn
        .execute_batch(&format!(
            "BEGIN; UPDATE accounts SET balance = balance - {amount} WHERE id = {src};
             UPDATE accounts SET balance = balance + {amount} WHERE id = {dst};
             INSERT INTO transfers VALUES({id}, {src}, {dst}, {amount});"
        ))
        .map_err(|e| s.err(e))?;
    let issued = s.now();
    let end = if rollback { "ROLLBACK" } else { "COMMIT" };
    s.conn.execute_batch(end).map_err(|e| s.err(e))?;
    let acked = s.now();
    if !rollback {
        lat.record(acked - issued);
    }
    Ok(Transfer {
        id,
        src,
        dst,
        amount,
        issued,
        acked: Some(acked),
        rolled_back: rollback,
    })
}

/// Loads TPC-B and runs `o.transactions` of it on an open session: returns
/// (committed, rolled back).
pub fn tpcb_load_and_run(s: &Session, o: &SqliteOptions, seed: u64) -> Result<(u64, u64), String> {
    let mut g = tpcb_setup(s, o)?;
    let mut r = Rng::new(seed).fork("sqlite-workload");
    let mut lat = Histogram::new();
    let (mut c, mut rb) = (0, 0);
    for id in 0..o.transactions {
        if tpcb_txn(s, &mut g, &mut r, id, &mut lat)? {
            rb += 1;
        } else {
            c += 1;
        }
    }
    Ok((c, rb))
}

fn tpcb_config(o: &SqliteOptions) -> TpcbConfig {
    TpcbConfig {
        branches: 1,
        accounts_per_branch: u32::try_from(o.rows).unwrap_or(u32::MAX),
        delta_abort: o.rollback_ratio,
        max_txns: o.transactions.max(1),
    }
}

/// TPC-B's tables in SQL (TPC-B 2.0 §1.3: branch, teller and account rows of at least
/// 100 bytes, history rows of at least 50), loaded in one transaction.
fn tpcb_setup(s: &Session, o: &SqliteOptions) -> Result<Tpcb, String> {
    let cfg = tpcb_config(o);
    let g = Tpcb::new(&cfg).map_err(|e| e.to_string())?;
    let tellers = workload::tpcb::TELLERS_PER_BRANCH;
    let mut sql = String::from(
        "BEGIN;
         CREATE TABLE branches(bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE tellers(tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, tbalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE accounts(aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, abalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE history(tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime INTEGER, filler TEXT);
         INSERT INTO branches VALUES(0, 0, printf('%88s', ''));",
    );
    sql.push_str(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i+1 < {tellers})
         INSERT INTO tellers SELECT i, 0, 0, printf('%84s', '') FROM n;
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i+1 < {})
         INSERT INTO accounts SELECT i, 0, 0, printf('%84s', '') FROM n;
         COMMIT;",
        cfg.accounts_per_branch
    ));
    s.conn.execute_batch(&sql).map_err(|e| s.err(e))?;
    Ok(g)
}

/// One TPC-B transaction (§1.2: account, its balance read back, history, teller, branch)
/// as the generator draws it; returns whether it rolled back.
fn tpcb_txn(
    s: &Session,
    g: &mut Tpcb,
    r: &mut Rng,
    id: u64,
    lat: &mut Histogram,
) -> Result<bool, String> {
    let spec = g.next_txn(0, r);
    // The generator names records by (page, slot); a heap record's ordinal is
    // page × records per page + slot (workload::btree::Heap::loaded_rid).
    let ord = |op: &RecOp| -> Option<(u64, i64)> {
        let RecOp::Update { rid, changes } = op else {
            return None;
        };
        let rpp = u64::from(g.schema().tables[rid.table.0 as usize].records_per_page);
        let FieldOp::AddI64(d) = changes.first()?.op else {
            return None;
        };
        Some((u64::from(rid.page) * rpp + u64::from(rid.slot), d))
    };
    let (Some((aid, delta)), Some((tid, _)), Some((bid, _))) = (
        spec.ops.first().and_then(ord),
        spec.ops.get(2).and_then(ord),
        spec.ops.get(3).and_then(ord),
    ) else {
        return Err(format!("tpcb: unexpected transaction shape {:?}", spec.ops));
    };
    s.conn
        .execute_batch(&format!(
            "BEGIN; UPDATE accounts SET abalance = abalance + {delta} WHERE aid = {aid};"
        ))
        .map_err(|e| s.err(e))?;
    let _balance: i64 = s
        .conn
        .query_row(
            &format!("SELECT abalance FROM accounts WHERE aid = {aid}"),
            [],
            |x| x.get(0),
        )
        .map_err(|e| s.err(e))?;
    s.conn
        .execute_batch(&format!(
            "INSERT INTO history VALUES({tid}, {bid}, {aid}, {delta}, {id}, printf('%22s', ''));
             UPDATE tellers SET tbalance = tbalance + {delta} WHERE tid = {tid};
             UPDATE branches SET bbalance = bbalance + {delta} WHERE bid = {bid};"
        ))
        .map_err(|e| s.err(e))?;
    let t0 = s.now();
    let end = if spec.rollback { "ROLLBACK" } else { "COMMIT" };
    s.conn.execute_batch(end).map_err(|e| s.err(e))?;
    if !spec.rollback {
        lat.record(s.now() - t0);
    }
    Ok(spec.rollback)
}

/// What a run measured. Deterministic: a function of the configuration, the options and
/// the seed.
#[derive(Clone, Debug, Serialize)]
pub struct SqliteMetrics {
    pub protocol: String,
    pub mode: Mode,
    pub workload: String,
    pub seed: u64,
    pub sqlite_version: String,
    pub sqlite_page_bytes: u32,
    pub flash_page_bytes: u32,
    /// Measured SQL transactions that committed, and that rolled back.
    pub transactions: u64,
    pub rolled_back: u64,
    /// Simulated time of the measured phase.
    pub sim_time_ns: u64,
    /// Committed transactions per simulated second.
    pub transactions_per_s: f64,
    /// Device WRITEs (plain and transactional pages) in the measured phase.
    pub device_writes: u64,
    pub device_reads: u64,
    pub device_writes_per_txn: f64,
    pub nand_programs: u64,
    pub nand_erases: u64,
    pub gc_page_migrations: u64,
    /// NAND programs per device WRITE.
    pub write_amplification: f64,
    /// NAND programs per committed transaction.
    pub nand_programs_per_txn: f64,
    /// From COMMIT issued to COMMIT returned, simulated ns.
    pub commit_latency_ns: Percentiles,
    pub vfs: FsStats,
}

/// A session's device counters at one instant (docs/METRICS.md, "SQLite runs").
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Counters {
    pub sim_time_ns: u64,
    pub device_writes: u64,
    pub device_reads: u64,
    pub nand_programs: u64,
    pub nand_erases: u64,
    pub gc_page_migrations: u64,
    pub vfs: FsStats,
}

impl Counters {
    /// What happened between `before` and `self`, with the write amplification.
    pub fn since(&self, before: &Counters) -> serde_json::Value {
        let writes = self.device_writes - before.device_writes;
        let programs = self.nand_programs - before.nand_programs;
        serde_json::json!({
            "sim_time_ns": self.sim_time_ns - before.sim_time_ns,
            "device_writes": writes,
            "device_reads": self.device_reads - before.device_reads,
            "nand_programs": programs,
            "nand_erases": self.nand_erases - before.nand_erases,
            "gc_page_migrations": self.gc_page_migrations - before.gc_page_migrations,
            "write_amplification": if writes == 0 { 0.0 } else { programs as f64 / writes as f64 },
            "vfs": diff_stats(before.vfs, self.vfs),
        })
    }
}

/// The device's counters and clock at one instant.
#[derive(Clone, Copy)]
pub(crate) struct Snapshot {
    pub(crate) t: SimTime,
    pub(crate) writes: u64,
    pub(crate) reads: u64,
    pub(crate) programs: u64,
    pub(crate) erases: u64,
    pub(crate) migrations: u64,
    pub(crate) fs: FsStats,
}

fn snapshot(s: &Session) -> Snapshot {
    snapshot_fs(&s.vfs.ctx().fs.borrow())
}

pub(crate) fn snapshot_fs(fs: &DeviceFs) -> Snapshot {
    let n = fs.dev.core.nand.counters();
    Snapshot {
        t: fs.now,
        writes: fs.dev.core.stats.host_writes,
        reads: fs.dev.core.stats.host_reads,
        programs: n.programs,
        erases: n.erases,
        migrations: fs.dev.core.stats.gc_page_migrations,
        fs: fs.stats,
    }
}

/// What the SQL side of a measured phase counted.
pub(crate) struct Txns {
    pub(crate) committed: u64,
    pub(crate) rolled_back: u64,
    pub(crate) latency: Histogram,
}

/// The metrics of the measured phase from `before` to `after`.
pub(crate) fn metrics_between(
    cfg: &Config,
    o: &SqliteOptions,
    workload: String,
    flash: u32,
    before: &Snapshot,
    after: &Snapshot,
    t: &Txns,
) -> SqliteMetrics {
    let committed = t.committed;
    let sim_ns = after.t - before.t;
    let writes = after.writes - before.writes;
    let programs = after.programs - before.programs;
    let per = |x: u64| {
        if committed == 0 {
            0.0
        } else {
            x as f64 / committed as f64
        }
    };
    SqliteMetrics {
        protocol: cfg.protocol.name.clone(),
        mode: o.mode,
        workload,
        seed: cfg.seed,
        sqlite_version: crate::vfs::sqlite_version(),
        sqlite_page_bytes: o.effective_page_size(flash).unwrap_or(0),
        flash_page_bytes: flash,
        transactions: committed,
        rolled_back: t.rolled_back,
        sim_time_ns: sim_ns,
        transactions_per_s: if sim_ns == 0 {
            0.0
        } else {
            committed as f64 / (sim_ns as f64 / 1e9)
        },
        device_writes: writes,
        device_reads: after.reads - before.reads,
        device_writes_per_txn: per(writes),
        nand_programs: programs,
        nand_erases: after.erases - before.erases,
        gc_page_migrations: after.migrations - before.migrations,
        write_amplification: if writes == 0 {
            0.0
        } else {
            programs as f64 / writes as f64
        },
        nand_programs_per_txn: per(programs),
        commit_latency_ns: t.latency.percentiles(),
        vfs: diff_stats(before.fs, after.fs),
    }
}

pub(crate) fn diff_stats(a: FsStats, b: FsStats) -> FsStats {
    FsStats {
        file_reads: b.file_reads - a.file_reads,
        file_writes: b.file_writes - a.file_writes,
        syncs: b.syncs - a.syncs,
        db_page_writes: b.db_page_writes - a.db_page_writes,
        journal_page_writes: b.journal_page_writes - a.journal_page_writes,
        wal_page_writes: b.wal_page_writes - a.wal_page_writes,
        superblock_writes: b.superblock_writes - a.superblock_writes,
        rmw_reads: b.rmw_reads - a.rmw_reads,
        batch_begins: b.batch_begins - a.batch_begins,
        batch_commits: b.batch_commits - a.batch_commits,
        batch_fallbacks: b.batch_fallbacks - a.batch_fallbacks,
        fallback_journal_syncs: b.fallback_journal_syncs - a.fallback_journal_syncs,
    }
}

/// Builds the device `cfg` describes and formats it for the VFS.
pub fn build_fs(cfg: &Config, o: &SqliteOptions) -> Result<DeviceFs, RunError> {
    let dev = world::build_device(cfg, None).map_err(|e| RunError::Config(e.to_string()))?;
    DeviceFs::format(dev, o.layout, o.fs_options(), SimTime::ZERO).map_err(|e| match e {
        crate::store::FsError::Layout(m) => RunError::Input(bad("sqlite.layout", m)),
        other => RunError::Run(other.to_string()),
    })
}

/// Runs the workload on the device `cfg` describes.
pub fn run(cfg: &Config, o: &SqliteOptions) -> Result<SqliteMetrics, RunError> {
    cfg.validate()
        .map_err(|e| RunError::Config(e.to_string()))?;
    o.validate(cfg)?;
    let mut fs = build_fs(cfg, o)?;
    // Nothing reads an overwritten page version in a run (crash recording keeps them all).
    fs.opts.reclaim_versions = true;
    let s = Session::open(fs, cfg.seed, o).map_err(RunError::Run)?;
    let mut r = Rng::new(cfg.seed).fork("sqlite-workload");
    let mut lat = Histogram::new();
    let mut committed = 0u64;
    let mut rolled_back = 0u64;
    let before;
    match &o.workload {
        Workload::Bank => {
            bank_setup(&s, o.rows).map_err(RunError::Run)?;
            before = snapshot(&s);
            for id in 0..o.transactions {
                let t = bank_transfer(&s, &mut r, id, o.rows, o.rollback_ratio, &mut lat)
                    .map_err(RunError::Run)?;
                if t.rolled_back {
                    rolled_back += 1;
                } else {
                    committed += 1;
                }
            }
        }
        Workload::Tpcb => {
            let mut g = tpcb_setup(&s, o).map_err(RunError::Run)?;
            before = snapshot(&s);
            for id in 0..o.transactions {
                let rb = tpcb_txn(&s, &mut g, &mut r, id, &mut lat).map_err(RunError::Run)?;
                if rb {
                    rolled_back += 1;
                } else {
                    committed += 1;
                }
            }
        }
        Workload::Mobile => {
            let mut g = Mobile::default();
            let setup = g.setup(o.rows, &mut r);
            s.conn
                .execute_batch(&setup)
                .map_err(|e| RunError::Run(s.err(e)))?;
            before = snapshot(&s);
            for _ in 0..o.transactions {
                let stmt = g.next(&mut r);
                // Autocommit: the statement is its own transaction.
                let t0 = s.now();
                s.conn
                    .execute_batch(&stmt)
                    .map_err(|e| RunError::Run(s.err(e)))?;
                lat.record(s.now() - t0);
                committed += 1;
            }
        }
        Workload::Sql { text, .. } => {
            before = snapshot(&s);
            let mut batch = rusqlite::Batch::new(&s.conn, text);
            let mut changes_at_start = s.conn.total_changes();
            loop {
                let t0 = s.now();
                let next = batch.next().map_err(|e| RunError::Run(s.err(e)))?;
                let Some(mut stmt) = next else { break };
                let is_rollback = stmt
                    .expanded_sql()
                    .is_some_and(|q| q.trim_start().to_ascii_uppercase().starts_with("ROLLBACK"));
                let mut rows = stmt.raw_query();
                while rows.next().map_err(|e| RunError::Run(s.err(e)))?.is_some() {}
                drop(rows);
                if s.conn.is_autocommit() {
                    let ch = s.conn.total_changes();
                    if is_rollback {
                        rolled_back += 1;
                    } else if ch != changes_at_start {
                        committed += 1;
                        lat.record(s.now() - t0);
                    }
                    changes_at_start = ch;
                }
            }
        }
    }
    let after = snapshot(&s);
    let fs = s.close().map_err(RunError::Run)?;
    let flash = fs.page_bytes() as u32;
    let t = Txns {
        committed,
        rolled_back,
        latency: lat,
    };
    Ok(metrics_between(
        cfg,
        o,
        o.workload.name(),
        flash,
        &before,
        &after,
        &t,
    ))
}

/// The mobile mix's statements (X-FTL's picture of Android apps): the statements depend on
/// the random stream only, never on what SQLite returns, so the same seed gives the same
/// SQL on the device and in memory (`run_in_memory`).
#[derive(Default)]
struct Mobile {
    live: Vec<u64>,
    next: u64,
}

impl Mobile {
    /// The table, its index and `rows` rows, in one transaction.
    fn setup(&mut self, rows: u64, r: &mut Rng) -> String {
        let mut sql = String::from(
            "BEGIN; CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT); CREATE INDEX t_k ON t(k);",
        );
        for id in 0..rows {
            sql.push_str(&format!(
                "INSERT INTO t VALUES({id}, {}, '{}');",
                r.below(1 << 30),
                text(r)
            ));
            self.live.push(id);
        }
        sql.push_str("COMMIT;");
        self.next = rows;
        sql
    }

    /// One autocommit statement: INSERT 50 %, UPDATE 30 %, DELETE 20 %.
    fn next(&mut self, r: &mut Rng) -> String {
        let x = r.below(100);
        if x < 50 || self.live.is_empty() {
            self.live.push(self.next);
            self.next += 1;
            format!(
                "INSERT INTO t VALUES({}, {}, '{}')",
                self.next - 1,
                r.below(1 << 30),
                text(r)
            )
        } else if x < 80 {
            let id = self.live[r.below(self.live.len() as u64) as usize];
            format!("UPDATE t SET v = '{}' WHERE id = {id}", text(r))
        } else {
            let i = r.below(self.live.len() as u64) as usize;
            let id = self.live.swap_remove(i);
            format!("DELETE FROM t WHERE id = {id}")
        }
    }
}

/// The same SQL as `run` (mobile mix, same seed, same page size, cache and
/// `synchronous = FULL`) on SQLite's in-memory database, with no device: the baseline of
/// the CPU cost of running SQLite on the emulated device (docs/PERFORMANCE.md). Returns the
/// transactions run.
pub fn run_in_memory(cfg: &Config, o: &SqliteOptions) -> Result<u64, RunError> {
    o.validate(cfg)?;
    if o.workload != Workload::Mobile {
        return Err(RunError::Input(bad(
            "sqlite.workload",
            "the in-memory baseline runs the mobile workload only",
        )));
    }
    let page = o.effective_page_size(cfg.nand.page_bytes)?;
    let c = Connection::open_in_memory().map_err(|e| RunError::Run(e.to_string()))?;
    let run = |q: &str| c.execute_batch(q).map_err(|e| RunError::Run(e.to_string()));
    run(&format!(
        "PRAGMA page_size = {page}; PRAGMA cache_size = {}; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;",
        o.cache_pages
    ))?;
    let mut r = Rng::new(cfg.seed).fork("sqlite-workload");
    let mut g = Mobile::default();
    run(&g.setup(o.rows, &mut r))?;
    for _ in 0..o.transactions {
        run(&g.next(&mut r))?;
    }
    Ok(o.transactions)
}

/// A short row payload (40..120 bytes of lowercase letters).
fn text(r: &mut Rng) -> String {
    let n = 40 + r.below(81) as usize;
    (0..n).map(|_| (b'a' + r.below(26) as u8) as char).collect()
}
