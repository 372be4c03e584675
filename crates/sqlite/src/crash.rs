//! Crash checking a real database.
//!
//! A bank workload runs through SQLite on a small device with the NAND operation log on
//! (from the moment the schema and accounts are durable). Each crash state is the device
//! checker's (`check::for_each_crash_image`: a crash instant, the in-flight operations
//! that persisted, optionally one torn): the device recovers from that image alone, the
//! VFS opens its superblock, SQLite opens the database (rolling back a hot journal or
//! replaying the WAL as it would after a power cut), and the oracle requires:
//!
//! 1. `PRAGMA integrity_check` returns exactly `ok`;
//! 2. every transfer whose COMMIT returned by the crash instant is in the transfer log
//!    (durability);
//! 3. no transfer that was rolled back, or whose COMMIT had not been issued by the crash
//!    instant, is in the log (nothing of an unacked or rolled-back transaction);
//! 4. every account's balance is its opening balance plus exactly the visible transfers
//!    (atomicity: a transfer is both its UPDATEs and its INSERT, or none of them), so the
//!    total is invariant;
//! 5. the database accepts one more committed transaction.
//!
//! Crash instants are the operations' starts and ends plus every COMMIT's issue and
//! return. What it does not check: crashes before the schema is durable, concurrent
//! connections, and reads' isolation.

use crate::run::{bank_setup, bank_transfer, Mode, Session, SqliteOptions, Transfer, BANK_BALANCE};
use crate::run::{build_fs, RunError, Workload};
use crate::store::{DeviceFs, FsOptions, Versions};
use check::{CrashState, Mode as CheckMode};
use media::{LoggedOp, Nand, NandImage, OpKind};
use sim::histogram::Histogram;
use sim::{Rng, SimTime};
use ssd::Device;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use world::Config;

/// The device the crash checker uses unless told otherwise: the device checker's small
/// configuration (2 planes × 12 blocks × 8 pages of 512 bytes), which GC runs on often.
pub fn small_config(protocol: &str) -> Config {
    check::small_config(protocol)
}

/// The options the crash checker uses: `transfers` bank transfers between 6 accounts,
/// one in five rolled back, 512-byte SQLite pages, a WAL checkpoint every 4 frames.
pub fn small_options(mode: Mode, transfers: u64) -> SqliteOptions {
    SqliteOptions {
        mode,
        workload: Workload::Bank,
        transactions: transfers,
        rows: 6,
        page_size: 512,
        cache_pages: 100,
        wal_autocheckpoint: 4,
        rollback_ratio: 0.2,
        ..Default::default()
    }
}

/// A recorded SQLite run.
pub struct SqlRecording {
    pub cfg: Config,
    pub opts: SqliteOptions,
    pub base: NandImage,
    pub ops: Vec<LoggedOp>,
    pub versions: Rc<Vec<Box<[u8]>>>,
    pub transfers: Vec<Transfer>,
    pub accounts: u64,
    pub batch_fallbacks: u64,
}

/// Runs the bank workload with the operation log on.
pub fn record(cfg: &Config, o: &SqliteOptions) -> Result<SqlRecording, RunError> {
    cfg.validate()
        .map_err(|e| RunError::Config(e.to_string()))?;
    o.validate(cfg)?;
    if o.workload != Workload::Bank {
        return Err(RunError::Input(crate::run::OptionError {
            key: "sqlite.workload".into(),
            reason: "the crash checker's oracle is the bank workload's".into(),
        }));
    }
    let fs = build_fs(cfg, o)?;
    let s = Session::open(fs, cfg.seed, o).map_err(RunError::Run)?;
    bank_setup(&s, o.rows).map_err(RunError::Run)?;
    let base = {
        let mut fs = s.vfs.ctx().fs.borrow_mut();
        let now = fs.now;
        fs.now = fs.dev.barrier(now);
        let img = fs.dev.core.nand.image().clone();
        fs.dev.core.nand.enable_log();
        img
    };
    let mut r = Rng::new(cfg.seed).fork("sqlite-bank");
    let mut lat = Histogram::new();
    let mut transfers = Vec::new();
    for id in 0..o.transactions {
        let t = bank_transfer(&s, &mut r, id, o.rows, o.rollback_ratio, &mut lat)
            .map_err(RunError::Run)?;
        transfers.push(t);
    }
    let mut fs = s.close().map_err(RunError::Run)?;
    let ops = fs.dev.core.nand.take_log();
    let batch_fallbacks = fs.stats.batch_fallbacks;
    let versions = std::mem::take(&mut fs.versions).into_shared();
    Ok(SqlRecording {
        cfg: cfg.clone(),
        opts: o.clone(),
        base,
        ops,
        versions,
        transfers,
        accounts: o.rows,
        batch_fallbacks,
    })
}

/// A crash state the oracle rejected.
#[derive(Clone, Debug)]
pub struct SqlViolation {
    pub state: CrashState,
    pub findings: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct SqlCheckReport {
    pub states: u64,
    pub violations: u64,
    pub first: Vec<SqlViolation>,
    pub ops: usize,
    /// Of the recorded operations, erases (GC ran during the recording if nonzero).
    pub erases: usize,
    pub max_in_flight_seen: usize,
    pub transfers_committed: u64,
    pub batch_fallbacks: u64,
}

/// Checks every crash state of `rec` (`mode`), stopping after `stop_after` violations
/// (0: never).
pub fn check(
    rec: &SqlRecording,
    mode: CheckMode,
    seed: u64,
    stop_after: u64,
) -> Result<SqlCheckReport, String> {
    let mut rep = SqlCheckReport {
        ops: rec.ops.len(),
        erases: rec
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Erase { .. }))
            .count(),
        transfers_committed: rec.transfers.iter().filter(|t| !t.rolled_back).count() as u64,
        batch_fallbacks: rec.batch_fallbacks,
        ..Default::default()
    };
    let mut bounds = Vec::new();
    for t in &rec.transfers {
        bounds.push(t.issued);
        if let Some(a) = t.acked {
            bounds.push(a);
        }
    }
    let seen =
        check::for_each_crash_image(&rec.base, &rec.ops, &bounds, mode, seed, &mut |st, img| {
            let findings = judge(rec, img, st.t);
            rep.states += 1;
            if !findings.is_empty() {
                rep.violations += 1;
                if rep.first.len() < 5 {
                    rep.first.push(SqlViolation {
                        state: st.clone(),
                        findings,
                    });
                }
            }
            Ok(stop_after == 0 || rep.violations < stop_after)
        })?;
    rep.max_in_flight_seen = seen;
    Ok(rep)
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Recovers `img` and judges the database it holds at crash instant `t`.
pub fn judge(rec: &SqlRecording, img: NandImage, t: SimTime) -> Vec<String> {
    match catch_unwind(AssertUnwindSafe(|| judge_inner(rec, img, t))) {
        Ok(Ok(f)) => f,
        Ok(Err(e)) => vec![e],
        Err(p) => vec![format!("panic while judging: {}", panic_text(p))],
    }
}

fn judge_inner(rec: &SqlRecording, img: NandImage, t: SimTime) -> Result<Vec<String>, String> {
    let nand = Nand::from_image(img, rec.cfg.nand.timing.clone());
    let (dev, _) = Device::recover(&rec.cfg.device(), nand)
        .map_err(|e| format!("device recovery failed on a legitimate crash image: {e}"))?;
    let fs_opts = FsOptions {
        batch: rec.opts.mode == Mode::Batch,
        fallback_journal_sync: rec.opts.fallback_journal_sync,
        plant: None,
        ..Default::default()
    };
    let fs = DeviceFs::open(
        dev,
        Versions::over(rec.versions.clone()),
        fs_opts,
        SimTime::ZERO,
    )
    .map_err(|e| format!("the VFS cannot open the recovered device: {e}"))?;
    let mut o = rec.opts.clone();
    o.plant = None;
    let s = Session::open(fs, rec.cfg.seed, &o)
        .map_err(|e| format!("SQLite cannot open the recovered database: {e}"))?;
    let mut f = Vec::new();
    let ic: Vec<String> = {
        let mut st = s
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| s.err(e))?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| s.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| s.err(e))?
    };
    if ic != ["ok"] {
        f.push(format!("integrity_check: {}", ic.join("; ")));
        return Ok(f);
    }
    let read = |q: &str| -> Result<Vec<[i64; 4]>, String> {
        let mut st = s.conn.prepare(q).map_err(|e| s.err(e))?;
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                let mut v = [0i64; 4];
                for (k, x) in v.iter_mut().enumerate().take(n) {
                    *x = r.get(k)?;
                }
                Ok(v)
            })
            .map_err(|e| s.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| s.err(e))
    };
    let accounts = read("SELECT id, balance FROM accounts ORDER BY id")?;
    let visible = read("SELECT id, src, dst, amount FROM transfers ORDER BY id")?;
    let by_id: BTreeMap<u64, &Transfer> = rec.transfers.iter().map(|x| (x.id, x)).collect();
    let mut expect: Vec<i64> = vec![BANK_BALANCE; rec.accounts as usize];
    let mut seen = std::collections::BTreeSet::new();
    for v in &visible {
        let id = v[0] as u64;
        seen.insert(id);
        match by_id.get(&id) {
            None => f.push(format!("transfer {id} is visible but was never issued")),
            Some(x) if x.rolled_back => {
                f.push(format!("transfer {id} was rolled back but is visible"))
            }
            Some(x) if x.issued > t => f.push(format!(
                "transfer {id} is visible but its COMMIT was issued at {} after the crash at {t}",
                x.issued
            )),
            Some(x) => {
                if [x.src as i64, x.dst as i64, x.amount] != [v[1], v[2], v[3]] {
                    f.push(format!("transfer {id} reads {v:?}, wrote {x:?}"));
                }
                expect[x.src as usize] -= x.amount;
                expect[x.dst as usize] += x.amount;
            }
        }
    }
    for x in &rec.transfers {
        if !x.rolled_back && x.acked.is_some_and(|a| a <= t) && !seen.contains(&x.id) {
            f.push(format!(
                "transfer {} was acked at {} before the crash at {t} but is lost",
                x.id,
                x.acked.unwrap_or(SimTime::ZERO)
            ));
        }
    }
    let got: Vec<i64> = accounts.iter().map(|a| a[1]).collect();
    if accounts.len() != rec.accounts as usize {
        f.push(format!(
            "{} accounts, expected {}",
            accounts.len(),
            rec.accounts
        ));
    } else if got != expect {
        f.push(format!(
            "balances {got:?} are not the opening balances plus the visible transfers {expect:?} (total {} of {})",
            got.iter().sum::<i64>(),
            BANK_BALANCE * rec.accounts as i64
        ));
    }
    if f.is_empty() {
        s.conn
            .execute_batch("BEGIN; INSERT INTO transfers VALUES(1000000000, 0, 1, 0); COMMIT;")
            .map_err(|e| format!("the recovered database refuses a transaction: {}", s.err(e)))?;
    }
    drop(s);
    Ok(f)
}

/// Describes a crash state for people.
pub fn describe(rec: &SqlRecording, s: &CrashState) -> String {
    let g = rec.base.geometry();
    let mut out = format!("state {} at T={}\n", s.index, s.t);
    for &i in &s.in_flight {
        let o = &rec.ops[i];
        let what = match &o.kind {
            OpKind::Program { ppa, .. } => format!("program {}", g.addr(*ppa)),
            OpKind::PartialProgram { ppa, .. } => format!("partial program {}", g.addr(*ppa)),
            OpKind::Erase { block } => format!("erase block {}", block.0),
            OpKind::SetMode { block, mode } => format!("set block {} {}", block.0, mode.name()),
        };
        let fate = if s.persisted.contains(&i) {
            "persisted".to_string()
        } else if let Some((_, k)) = s.torn.filter(|(j, _)| *j == i) {
            format!("torn ({k:?})")
        } else {
            "lost".to_string()
        };
        out.push_str(&format!(
            "  in flight: #{i} {what} [{}..{}] -> {fate}\n",
            o.start, o.end
        ));
    }
    out
}
