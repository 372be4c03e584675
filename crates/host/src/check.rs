//! The host-level crash checker: crash a recorded host run at media operations, restart
//! with the strategy's own recovery from the surviving image alone, and compare the
//! database with a serial replay of exactly the committed transactions.
//!
//! Crash states are those of the device-level checker (`check` crate, same model), from the
//! enumeration both share (`crashstates`: instants, sweep, fates, numbering): an
//! instant `T`; every NAND operation completed by `T` persisted; of those in progress at
//! `T`, any subset persisted and at most one more was torn; nothing later. The instants
//! tried are every operation start and end and every commit issue and ack, so crashes land
//! inside log forces, page write-backs, checkpoints (master writes included), device
//! COMMITs and GC.
//!
//! The oracle. Commits are ordered by their issue; at `T` a commit is *acked* (ack ≤ T),
//! *in flight* (issue ≤ T < ack) or *not committed*. Locks are released only at the ack,
//! so an in-flight transaction's records were written by no later acked or in-flight one:
//! the expected database is the replay of the acked transactions (from the loaded state),
//! and each in-flight transaction is visible entirely or not at all on top of it. Every
//! record of every page a committed transaction wrote, and of every page the recovered
//! database lists as changed, is compared — so a change of an aborted or unfinished
//! transaction anywhere shows up as a record that differs from the replay.
//!
//! Crashes inside recovery (`check_with`, double mode): the restart runs with the NAND
//! operation log on, and the media operations it issues (the device's recovery writes, and
//! any a strategy's restart writes) are a second tape of crash points, enumerated like the
//! run's — exhaustively every state of every restart, or randomly one state inside the first
//! restart and, with probability 1/2, one inside the second (as the device checker,
//! `check` crate). A state inside a restart is judged at the first crash's instant: a
//! restart acks nothing. A restart that writes nothing has no states of its own; the PCM
//! tier's restarts are pure functions of the PCM and disk images and never write.
//!
//! Two devices (`host.log_device = "separate"`: the WAL log on a device of its own). Both
//! are in one power domain — one host, one power supply, as a DBMS server's data and log
//! SSDs are — so a crash cuts both at the same instant `T`. The run's tape is the data
//! device's operations followed by the log device's (`HostRecording::log`; a state's
//! operation indices count along that tape), and a crash state is the product of one fate
//! per device, each as for one device: of its operations in progress at `T` any subset
//! persisted and at most one more was torn (`CrashState::torn` on the data device,
//! `CrashState::torn_log` on the log device). Restart recovers both devices, then the
//! strategy; a restart's own operations form a tape of the same shape.
//!
//! Recover, run on, crash again (`check_run_on`, run-on mode). For a first crash state whose
//! restart is judged right, the restart runs again from the same crash image with
//! `RecoverCtx::write_back` on — it writes its results back (wal: CLRs, ENDs, an
//! end-of-restart checkpoint and a new master; `strategy::wal`, "Run-on restart"; cfc-ex and
//! afc-ex: void log pages and the flags that settle every old transaction;
//! `strategy::flagcommit_ex`, "Run-on restart") — and its
//! database is judged again. The engine then starts on the recovered medium
//! (`engine::Engine::resume`) with a fresh batch of `host.transactions` transactions drawn
//! from a seed forked per first state, their ids above every id the first run's log names,
//! and runs them to the end. A second crash is drawn on that run's tape (the device's
//! recovery, the restart's write-back, then the run's operations, from the first crash's
//! image): exhaustively every state of the write-back and of the first `RUN_ON_WINDOW`
//! instants of the run after it, or randomly one state anywhere. Its oracle starts from the
//! recovered database (what the first judgement established) and replays the second run's
//! acked commits (`HostRecording::start`). With the log on a device of its own both
//! devices recover, the run on them writes both, and the second crash cuts both at one
//! instant (its tape: the data device's operations, then the log device's). Only
//! strategies whose restart writes back can run on; the others are refused
//! (`run_on_refusal`). With `host.data = "full"` the workload's consistency conditions are
//! checked on the first crash and on every second one, the record contents chained from
//! the crashed run's commits the recovered database holds (`durable_commits`) through the
//! second run's. TPC-C's run on takes up its generator's committed view from the recovered
//! database (`source::take_up`: the crashed run's generator calls replayed with exactly the
//! commits the restart kept), so the values §2.4–§2.7 read at execution (next order ids,
//! undelivered orders, insert runs) are the recovered ones. A run on whose log area cannot
//! carry it (`run_on_log_refusal`) or that cannot go on for lack of space is refused naming the
//! key, not reported as a violation.
//!
//! The PCM tier (pcmlogging, pcmlogging-page) runs on through `pcm_tier::check_run_on`: its
//! crash states are the tier's (PCM line writes and disk page writes), its restart
//! `strategy::pcmlogging::restart` or `strategy::pcmlogging_page::restart` ("Run-on
//! restart" there).
//!
//! What it does not check: run-on for wal-pcm and scmlogging, for the PCMLogging
//! strategies over the emulated SSD, read isolation, and faults
//! other than power loss.

use crate::data::{Effect, Layout, PageNo, TagTable};
use crate::engine::CommitRec;
use crate::strategy::{self, RecoverCtx};
use crate::{HostConfig, HostError};
use media::{LoggedOp, Nand, NandImage};
use sim::{Rng, SimTime};
use ssd::{Device, DeviceConfig};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use workload::db::RecOp;

/// A recorded host run.
pub struct HostRecording {
    pub cfg: HostConfig,
    pub dcfg: DeviceConfig,
    /// The seed the workload's source, and so the loaded database, was built with.
    pub seed: u64,
    pub layout: Layout,
    pub base: NandImage,
    pub ops: Vec<LoggedOp>,
    pub commits: Vec<CommitRec>,
    pub tags: TagTable,
    pub metrics: crate::HostMetrics,
    /// PCM strategies: the PCM and disk write logs (their crash points).
    pub tier: Option<crate::pcm_tier::TierLog>,
    /// The log device's configuration, medium before the run and operations
    /// (`host.log_device = "separate"`); None: one device.
    pub log: Option<LogTape>,
    /// The database the run started from when it ran on a recovered medium (run-on: what
    /// the first crash's judgement established); None: as loaded.
    pub start: Option<BTreeMap<PageNo, Vec<u64>>>,
    /// TPC-C: the calls the run made on its generator (`source::Journaled`), from which a
    /// run on its recovered medium takes up the committed view (`source::take_up`).
    pub journal: Option<Vec<crate::source::GenEvent>>,
}

/// The log device of a recorded run.
pub struct LogTape {
    pub dcfg: DeviceConfig,
    pub base: NandImage,
    pub ops: Vec<LoggedOp>,
}

/// Runs `cfg` on a fresh device of `dcfg` with recording on.
pub fn record(
    cfg: &HostConfig,
    dcfg: &DeviceConfig,
    seed: u64,
) -> Result<HostRecording, HostError> {
    let dev = Device::in_memory(dcfg).map_err(|e| HostError::Config {
        key: "nand".into(),
        reason: e.to_string(),
    })?;
    record_on(cfg, dcfg, seed, dev)
}

/// As `record`, on a device built from `dcfg` that already holds data (a loaded database,
/// `external::load_data_area`): its image at the start is the recording's base.
pub fn record_on(
    cfg: &HostConfig,
    dcfg: &DeviceConfig,
    seed: u64,
    dev: Device,
) -> Result<HostRecording, HostError> {
    let mut run = crate::engine::run(cfg, dcfg, dev, seed, true)?;
    let ops = run.core.device.core.nand.take_log();
    let base = run
        .base_image
        .take()
        .ok_or_else(|| HostError::Stuck("internal: no base image recorded".into()))?;
    let log = match run.core.log_device.as_mut() {
        Some(l) => Some(LogTape {
            dcfg: crate::engine::log_device_config(dcfg),
            base: run.log_base_image.take().ok_or_else(|| {
                HostError::Stuck("internal: no log device base image recorded".into())
            })?,
            ops: l.core.nand.take_log(),
        }),
        None => None,
    };
    Ok(HostRecording {
        cfg: cfg.clone(),
        dcfg: dcfg.clone(),
        seed,
        layout: run.core.layout.clone(),
        base,
        ops,
        commits: run.commits,
        tags: run.core.tags,
        metrics: run.metrics,
        tier: run.tier.take(),
        log,
        start: None,
        journal: run.journal.take(),
    })
}

/// The crash states and how they are visited: the one enumeration every checker shares
/// (`crashstates`; a state's operation indices count along the tape, `tape`).
pub use crashstates::{CrashState, Mode};

#[derive(Clone, Debug)]
pub struct Violation {
    pub state: CrashState,
    /// Crashes inside the recoveries that followed `state` (double mode), first one first;
    /// empty: the violation is of `state` itself.
    pub inside: Vec<CrashState>,
    /// Run-on mode: the second crash, in the run on the medium recovered from `state` (its
    /// instants and operation indices count along that run's tape: the restart's writes,
    /// then the run's). None: the violation is of the first crash.
    pub run_on: Option<CrashState>,
    pub findings: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub states: u64,
    pub violations: u64,
    pub first: Vec<Violation>,
    pub ops: usize,
    pub commits: usize,
    pub max_in_flight_seen: usize,
    /// Of `states`, those inside a recovery (double mode).
    pub states_in_recovery: u64,
    /// The most media operations one recovery issued (double mode).
    pub recovery_ops_max: usize,
    /// Of `states`, those of a second crash after recover and run on (run-on mode).
    pub states_after_run_on: u64,
    /// The most media operations one run on a recovered medium issued, its restart's
    /// write-back included (run-on mode).
    pub run_on_ops_max: usize,
    /// Of the first crash states, those whose restart voided log pages beyond the log's
    /// end (run-on mode: the window a restart that leaves them would open).
    pub run_on_voided: u64,
}

const KEEP: usize = 5;

/// The run's operations on every device: the data device's, then the log device's (module
/// docs, "Two devices"), and where the log device's begin.
fn tape(rec: &HostRecording) -> (std::borrow::Cow<'_, [LoggedOp]>, usize) {
    match &rec.log {
        None => (std::borrow::Cow::Borrowed(&rec.ops[..]), rec.ops.len()),
        Some(l) => (
            std::borrow::Cow::Owned(rec.ops.iter().chain(&l.ops).cloned().collect()),
            rec.ops.len(),
        ),
    }
}

/// The media before the run: the data device's, then the log device's.
fn bases(rec: &HostRecording) -> Vec<NandImage> {
    let mut v = vec![rec.base.clone()];
    if let Some(l) = &rec.log {
        v.push(l.base.clone());
    }
    v
}

/// The crash instants: every operation start and end, every commit issue and ack.
fn boundaries(rec: &HostRecording, ops: &[LoggedOp]) -> Vec<SimTime> {
    let commits = rec.commits.iter().flat_map(|c| [c.issue, c.ack]);
    crashstates::instants(crashstates::op_times(ops).chain(commits))
}

/// The first crash states of a recording (its `tape`, data device's operations before
/// `split`, over the instants `bounds`), as `mode` visits them: `f` gets each state (only
/// state `only`, when given), its images, and the exhaustive bound on operations in flight
/// (None in random mode). Random schedules are drawn from the `host-crash-schedules` stream
/// and swept in one plan. Returns the most operations in flight at once.
#[allow(clippy::too_many_arguments)]
fn for_each_first_crash(
    rec: &HostRecording,
    tape: &[LoggedOp],
    split: usize,
    bounds: &[SimTime],
    mode: Mode,
    seed: u64,
    only: Option<u64>,
    f: &mut dyn FnMut(&CrashState, Vec<NandImage>, Option<usize>) -> Result<(), String>,
) -> Result<usize, String> {
    match mode {
        Mode::Exhaustive { max_in_flight } => {
            let mut sweep = crashstates::Sweep::over(bases(rec), tape, split);
            let too_many = |n: usize, t: SimTime| {
                format!(
                    "{n} operations are in progress at {t}; exhaustive checking allows {max_in_flight}"
                )
            };
            crashstates::for_each_state(
                &mut sweep,
                bounds,
                max_in_flight,
                &too_many,
                &mut |sweep, state| {
                    if only.is_some_and(|o| o != state.index) {
                        return Ok(true);
                    }
                    let img = sweep.state_image(&state)?;
                    f(&state, img, Some(max_in_flight))?;
                    Ok(true)
                },
            )
        }
        Mode::Random { schedules } => {
            let root = Rng::new(seed).fork("host-crash-schedules");
            let range = match only {
                Some(o) if o < schedules => o..o + 1,
                Some(_) => 0..0,
                None => 0..schedules,
            };
            // One plan over all the schedules (no chunks), as this checker has always
            // swept them.
            crashstates::for_each_random(
                &bases(rec),
                tape,
                split,
                bounds,
                &root,
                range,
                u64::MAX,
                &mut |sweep, state| {
                    let img = sweep.state_image(&state)?;
                    f(&state, img, None)?;
                    Ok(true)
                },
            )
        }
    }
}

/// Recovers the device and the database from `img` and judges them against the commits.
pub fn evaluate(rec: &HostRecording, img: NandImage, t: SimTime) -> Vec<String> {
    evaluate_with(rec, img, t, None)
}

/// As `evaluate`; with `full` (`host.data = "full"`), the workload's consistency conditions
/// are checked on the recovered contents too (`consistency.rs`).
pub fn evaluate_with(
    rec: &HostRecording,
    img: NandImage,
    t: SimTime,
    full: Option<&crate::consistency::Contents>,
) -> Vec<String> {
    evaluate_logged(rec, img, t, full, false).findings
}

/// What one restart from a crash image gave.
pub struct Evaluated {
    /// What is wrong (empty: the database is right).
    pub findings: Vec<String>,
    /// With `log`: the media operations the restart issued (device and strategy recovery),
    /// in issue order, timed from the restart's start — the tape of crashes inside it: the
    /// data device's, then (from `recovery_split` on) the log device's.
    pub recovery_ops: Option<Vec<LoggedOp>>,
    pub recovery_split: usize,
}

/// As `evaluate_with`; with `log`, the restart's own media operations are kept.
pub fn evaluate_logged(
    rec: &HostRecording,
    img: NandImage,
    t: SimTime,
    full: Option<&crate::consistency::Contents>,
    log: bool,
) -> Evaluated {
    evaluate_images(rec, vec![img], t, full, log)
}

/// As `evaluate_logged`, from one crash image per device (data, then log: module docs,
/// "Two devices"): both devices recover, then the strategy.
pub fn evaluate_images(
    rec: &HostRecording,
    imgs: Vec<NandImage>,
    t: SimTime,
    full: Option<&crate::consistency::Contents>,
    log: bool,
) -> Evaluated {
    let mut imgs = imgs.into_iter();
    let Some(img) = imgs.next() else {
        return Evaluated {
            findings: vec!["internal: no crash image".into()],
            recovery_ops: None,
            recovery_split: 0,
        };
    };
    let mut nand = Nand::from_image(img, rec.dcfg.nand.timing.clone());
    if log {
        nand.enable_log();
    }
    let log_nand = match (imgs.next(), &rec.log) {
        (Some(i), Some(l)) => {
            let mut n = Nand::from_image(i, l.dcfg.nand.timing.clone());
            if log {
                n.enable_log();
            }
            Some((n, &l.dcfg))
        }
        _ => None,
    };
    type Restart = (crate::strategy::RecoveredDb, Option<(Vec<LoggedOp>, usize)>);
    let out = catch_unwind(AssertUnwindSafe(|| -> Result<Restart, String> {
        let (mut dev, rep) = Device::recover(&rec.dcfg, nand)
            .map_err(|e| format!("device recovery failed on a legitimate crash image: {e}"))?;
        let mut now = rep.time_ns;
        let mut log_dev = match log_nand {
            Some((n, dcfg)) => {
                let (d, r) = Device::recover(dcfg, n).map_err(|e| {
                    format!("log device recovery failed on a legitimate crash image: {e}")
                })?;
                now = now.max(r.time_ns);
                Some(d)
            }
            None => None,
        };
        let info = strategy::lookup(&rec.cfg.strategy).map_err(|e| e.to_string())?;
        let mut ctx = RecoverCtx {
            cfg: &rec.cfg,
            layout: &rec.layout,
            device: &mut dev,
            log_device: log_dev.as_mut(),
            tags: &rec.tags,
            now: SimTime::from_ns(now),
            write_back: None,
        };
        let db = (info.recover)(&mut ctx).map_err(|e| e.to_string())?;
        let ops = log.then(|| {
            let mut o = dev.core.nand.take_log();
            let split = o.len();
            if let Some(l) = log_dev.as_mut() {
                o.extend(l.core.nand.take_log());
            }
            (o, split)
        });
        Ok((db, ops))
    }));
    let (db, recovery_ops) = match out {
        Err(p) => {
            let msg = panic_text(&*p);
            return Evaluated {
                findings: vec![format!("recovery panicked: {msg}")],
                recovery_ops: None,
                recovery_split: 0,
            };
        }
        Ok(Err(e)) => {
            return Evaluated {
                findings: vec![e],
                recovery_ops: None,
                recovery_split: 0,
            }
        }
        Ok(Ok(x)) => x,
    };
    let (recovery_ops, recovery_split) = match recovery_ops {
        Some((o, s)) => (Some(o), s),
        None => (None, 0),
    };
    let mut pages = db.pages;
    if rec.cfg.fault_drop_page {
        crate::consistency::plant_drop_page(&rec.layout, &mut pages);
    }
    let mut findings = judge(rec, t, &pages);
    if let Some(c) = full {
        findings.extend(c.findings(&rec.layout, &pages));
    }
    Evaluated {
        findings,
        recovery_ops,
        recovery_split,
    }
}

/// The oracle (module docs). Returns the findings; empty means the database is right.
pub fn judge(rec: &HostRecording, t: SimTime, db: &BTreeMap<PageNo, Vec<u64>>) -> Vec<String> {
    judge_commits_from(&rec.layout, rec.start.as_ref(), &rec.commits, t, db)
}

/// The serial replay's values, dense over the pages a judgement looks at (every page a
/// commit writes and every page the recovered database lists, in page order): a slot's
/// place is its page's offset plus the slot number. Keys outside those pages' slots (none
/// for a well-formed run) go to `extra`. The judge reads and writes one value per record
/// operation of every acked commit, for every crash state, so this is its hot path.
struct Replay {
    pages: Vec<PageNo>,
    /// `off[i]..off[i + 1]`: the places of `pages[i]`'s slots.
    off: Vec<usize>,
    val: Vec<Option<u64>>,
    extra: BTreeMap<(PageNo, u16), u64>,
}

impl Replay {
    fn new(layout: &Layout, pages: Vec<PageNo>) -> Replay {
        let mut off = Vec::with_capacity(pages.len() + 1);
        let mut n = 0usize;
        off.push(0);
        for &p in &pages {
            if p.0 < layout.pages {
                n += layout.slots(p) as usize;
            }
            off.push(n);
        }
        Replay {
            pages,
            off,
            val: vec![None; n],
            extra: BTreeMap::new(),
        }
    }

    fn place(&self, p: PageNo, s: u16) -> Option<usize> {
        let i = self.pages.binary_search(&p).ok()?;
        let k = self.off[i] + s as usize;
        (k < self.off[i + 1]).then_some(k)
    }

    fn get(&self, p: PageNo, s: u16) -> Option<u64> {
        match self.place(p, s) {
            Some(k) => self.val[k],
            None => self.extra.get(&(p, s)).copied(),
        }
    }

    fn set(&mut self, p: PageNo, s: u16, v: u64) {
        match self.place(p, s) {
            Some(k) => self.val[k] = Some(v),
            None => {
                self.extra.insert((p, s), v);
            }
        }
    }
}

/// `judge` over any list of commits in commit order (`acklog::commits_as_logged` builds one
/// from an ack log).
pub fn judge_commits(
    layout: &Layout,
    commits: &[CommitRec],
    t: SimTime,
    db: &BTreeMap<PageNo, Vec<u64>>,
) -> Vec<String> {
    judge_commits_from(layout, None, commits, t, db)
}

/// As `judge_commits`, for a run that started from the database `start` (run-on: the
/// recovered one) instead of the loaded state; every page of `start` is compared too.
pub fn judge_commits_from(
    layout: &Layout,
    start: Option<&BTreeMap<PageNo, Vec<u64>>>,
    commits: &[CommitRec],
    t: SimTime,
    db: &BTreeMap<PageNo, Vec<u64>>,
) -> Vec<String> {
    let mut pages: Vec<PageNo> = db.keys().copied().collect();
    if let Some(s) = start {
        pages.extend(s.keys().copied());
    }
    for c in commits {
        for op in &c.spec.ops {
            if !matches!(op, RecOp::Read(_)) {
                pages.push(layout.page_of(op.rid()));
            }
        }
    }
    pages.sort_unstable();
    pages.dedup();
    // The replay of the acked commits, in list order, from the loaded values.
    let mut base = Replay::new(layout, pages);
    let loaded = |p: PageNo, s: u16| -> u64 {
        start
            .and_then(|m| m.get(&p))
            .and_then(|v| v.get(s as usize).copied())
            .unwrap_or_else(|| layout.initial_slot(p, s))
    };
    let value =
        |m: &Replay, p: PageNo, s: u16| -> u64 { m.get(p, s).unwrap_or_else(|| loaded(p, s)) };
    let mut in_flight: Vec<(usize, BTreeMap<(PageNo, u16), u64>)> = Vec::new();
    for (i, c) in commits.iter().enumerate() {
        if c.ack <= t {
            for op in &c.spec.ops {
                if let Some(eff) = Effect::of(op) {
                    let rid = op.rid();
                    let p = layout.page_of(rid);
                    let cur = value(&base, p, rid.slot);
                    base.set(p, rid.slot, eff.apply(cur));
                }
            }
        } else if c.issue <= t {
            in_flight.push((i, BTreeMap::new()));
        }
    }
    // Each in-flight commit's values on top of the replay.
    for (i, w) in in_flight.iter_mut() {
        for op in &commits[*i].spec.ops {
            if let Some(eff) = Effect::of(op) {
                let rid = op.rid();
                let p = layout.page_of(rid);
                let cur = w
                    .get(&(p, rid.slot))
                    .copied()
                    .unwrap_or_else(|| value(&base, p, rid.slot));
                w.insert((p, rid.slot), eff.apply(cur));
            }
        }
    }
    let pages = base.pages.clone();
    let mut findings = Vec::new();
    let got = |p: PageNo, s: u16| -> u64 {
        match db.get(&p) {
            Some(v) => v.get(s as usize).copied().unwrap_or(u64::MAX),
            None => layout.initial_slot(p, s),
        }
    };
    // In-flight transactions: all or nothing.
    let mut owned: BTreeMap<(PageNo, u16), usize> = BTreeMap::new();
    for (k, (i, w)) in in_flight.iter().enumerate() {
        let mut with = 0;
        let mut without = 0;
        for (&(p, s), &v) in w {
            owned.insert((p, s), k);
            let g = got(p, s);
            if v == value(&base, p, s) {
                // A write that leaves the record as it was (a delete of a free slot)
                // witnesses neither outcome.
                if g != v {
                    findings.push(format!(
                        "page {} slot {s}: {g:#x} is neither before nor after in-flight {} ({v:#x}, which it does not change)",
                        p.0, commits[*i].txn
                    ));
                }
                continue;
            }
            if g == v {
                with += 1;
            } else if g == value(&base, p, s) {
                without += 1;
            } else {
                findings.push(format!(
                    "page {} slot {s}: {g:#x} is neither before nor after in-flight {} ({:#x} / {v:#x})",
                    p.0,
                    commits[*i].txn,
                    value(&base, p, s)
                ));
            }
        }
        if with > 0 && without > 0 {
            findings.push(format!(
                "in-flight {} is partly visible: {with} records with it, {without} without",
                commits[*i].txn
            ));
        }
    }
    for p in pages {
        if p.0 >= layout.pages {
            findings.push(format!("recovered page {} is beyond the database", p.0));
            continue;
        }
        if let Some(v) = db.get(&p) {
            if v.len() != layout.slots(p) as usize {
                findings.push(format!("recovered page {} has {} slots", p.0, v.len()));
                continue;
            }
        }
        for s in 0..layout.slots(p) {
            if owned.contains_key(&(p, s)) {
                continue;
            }
            let (g, want) = (got(p, s), value(&base, p, s));
            if g != want {
                let who = commits
                    .iter()
                    .rev()
                    .filter(|c| c.ack <= t)
                    .filter(|c| {
                        c.spec.ops.iter().any(|o| {
                            o.writes() && layout.page_of(o.rid()) == p && o.rid().slot == s
                        })
                    })
                    .map(|c| c.txn.to_string())
                    .next()
                    .unwrap_or_else(|| {
                        if start.is_some() {
                            "no acked transaction (the recovered value it started from)".into()
                        } else {
                            "no acked transaction (loaded value)".into()
                        }
                    });
                findings.push(format!(
                    "page {} slot {s}: recovered {g:#x}, serial replay of the acked commits gives {want:#x} (last acked writer: {who})",
                    p.0
                ));
            }
        }
        if findings.len() > 20 {
            break;
        }
    }
    findings
}

/// Checks a recording. With `only`, evaluates just that state and reports it in `first`.
pub fn check(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
) -> Result<CheckReport, String> {
    check_with(rec, mode, seed, only, false)
}

/// As `check`; with `double`, also crashes inside the recovery of every state (module docs,
/// "Crashes inside recovery"): exhaustively every crash state of the recovery's own media
/// operations; randomly one state inside the first recovery and, with probability 1/2, one
/// inside the second. A state inside recovery is judged at the first crash's instant:
/// recovery acks nothing, so the contract is the same.
pub fn check_with(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
    double: bool,
) -> Result<CheckReport, String> {
    if let Some(tier) = &rec.tier {
        // The PCM tier's restarts are pure functions of the PCM and disk images
        // (`pcm_tier::recover_for`): they write nothing, so no state lies inside them.
        return crate::pcm_tier::check(rec, tier, mode, seed, only);
    }
    let (tape, split) = tape(rec);
    let tape = &tape[..];
    let mut rep = CheckReport {
        ops: tape.len(),
        commits: rec.commits.len(),
        ..Default::default()
    };
    let bounds = boundaries(rec, tape);
    let full = if rec.cfg.data == "full" {
        crate::consistency::Contents::new(rec)?
    } else {
        None
    };
    let full = full.as_ref();
    let note = |rep: &mut CheckReport,
                state: &CrashState,
                inside: Vec<CrashState>,
                findings: Vec<String>| {
        rep.states += 1;
        if !inside.is_empty() {
            rep.states_in_recovery += 1;
        }
        if !findings.is_empty() {
            rep.violations += 1;
        }
        if (!findings.is_empty() && rep.first.len() < KEEP) || (only.is_some() && inside.is_empty())
        {
            rep.first.push(Violation {
                state: state.clone(),
                inside,
                run_on: None,
                findings,
            });
        }
    };
    // The states inside the recovery of `state` (whose image is `img`, whose recovery issued
    // `rops`), exhaustively.
    let exhaustive_inside = |rep: &mut CheckReport,
                             state: &CrashState,
                             img: &[NandImage],
                             rops: &[LoggedOp],
                             rsplit: usize,
                             max_in_flight: usize|
     -> Result<(), String> {
        rep.recovery_ops_max = rep.recovery_ops_max.max(rops.len());
        let mut sweep = crashstates::Sweep::over(img.to_vec(), rops, rsplit);
        let bounds = crashstates::instants(crashstates::op_times(rops));
        let too_many = |n: usize, t2: SimTime| {
            format!(
                "{n} recovery operations are in progress at {t2}; exhaustive checking allows {max_in_flight}"
            )
        };
        crashstates::for_each_state(
            &mut sweep,
            &bounds,
            max_in_flight,
            &too_many,
            &mut |sweep, inner| {
                let img2 = sweep.state_image(&inner)?;
                let f = evaluate_images(rec, img2, state.t, full, false).findings;
                note(rep, state, vec![inner], f);
                Ok(true)
            },
        )?;
        Ok(())
    };
    let root = Rng::new(seed).fork("host-crash-schedules");
    rep.max_in_flight_seen = for_each_first_crash(
        rec,
        tape,
        split,
        &bounds,
        mode,
        seed,
        only,
        &mut |state, img, exhaustive| {
            let t = state.t;
            let ev = evaluate_images(rec, img.clone(), t, full, double);
            let failed = !ev.findings.is_empty();
            note(&mut rep, state, vec![], ev.findings);
            if let Some(max_in_flight) = exhaustive {
                // A restart that wrote nothing has no crash point of its own.
                match ev.recovery_ops {
                    Some(rops) if !failed && !rops.is_empty() => {
                        exhaustive_inside(
                            &mut rep,
                            state,
                            &img,
                            &rops,
                            ev.recovery_split,
                            max_in_flight,
                        )?;
                    }
                    _ => {}
                }
                return Ok(());
            }
            if failed || !double {
                return Ok(());
            }
            // Up to two crashes inside the recoveries that follow, as the device checker
            // draws them.
            let mut r = root.fork(&format!("{}/double", state.index));
            let mut inside: Vec<CrashState> = Vec::new();
            let mut base = img;
            let mut rsplit = ev.recovery_split;
            let mut rops = ev.recovery_ops.unwrap_or_default();
            for depth in 0..2u64 {
                rep.recovery_ops_max = rep.recovery_ops_max.max(rops.len());
                if rops.is_empty() || (depth > 0 && !r.chance(0.5)) {
                    break;
                }
                let rb = crashstates::instants(crashstates::op_times(&rops));
                let (inner, img2) =
                    crashstates::draw_state(base.clone(), &rops, rsplit, &rb, &mut r, depth)?;
                inside.push(inner);
                let ev2 = evaluate_images(rec, img2.clone(), t, full, depth == 0);
                let failed = !ev2.findings.is_empty();
                note(&mut rep, state, inside.clone(), ev2.findings);
                if failed {
                    break;
                }
                base = img2;
                rsplit = ev2.recovery_split;
                rops = ev2.recovery_ops.unwrap_or_default();
            }
            Ok(())
        },
    )?;
    Ok(rep)
}

/// The message of a caught panic's payload (`String` or `&str`; empty otherwise).
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Why run-on mode (`check_run_on`) cannot be honoured for `cfg`, naming the key; None: it
/// can. A strategy can run on only if its restart writes its results back
/// (`strategy::WriteBack`) and its `create` takes up the restart's state.
pub fn run_on_refusal(cfg: &HostConfig) -> Option<(String, String)> {
    if !matches!(
        cfg.strategy.as_str(),
        "wal"
            | "device-tx"
            | "cfc-ex"
            | "afc-ex"
            | "flagcommit-ex"
            | "pcmlogging"
            | "pcmlogging-page"
    ) {
        return Some((
            "host.strategy".into(),
            format!(
                "run-on is not done for {}: its restart does not write its results back (no log tail, master or recovered pages for the engine to start on); it is done for wal, device-tx, cfc-ex, afc-ex, pcmlogging and pcmlogging-page",
                cfg.strategy
            ),
        ));
    }
    if cfg.strategy.starts_with("pcmlogging") && crate::external::is_emulated(&cfg.pcm.external) {
        return Some((
            "host.pcm.external".into(),
            format!("run-on of {} over the emulated SSD is not done: the flash under the external store would have to be recovered beneath the restarted PCM", cfg.strategy),
        ));
    }
    None
}

/// Why the log area of `rec`'s wal run cannot carry a run on, naming `host.log_pages`; None:
/// it can (or the strategy keeps no such log). Run on after a crash, any client may be
/// running the workload's largest transaction (the largest the recording committed) and
/// rolling it back: BEGIN, its updates, ABORT, one CLR per update and END (`strategy::wal`,
/// ARIES §1.2) — all of it pinned in the log until the transaction ends — besides a
/// checkpoint interval (`host.checkpoint_log_bytes`) and a checkpoint's records. A log area
/// smaller than that, plus the page being filled and the one the master's redo LSN pins,
/// can fill up in the run on ("log area full"), which is then a configuration error, found
/// here before any crash state rather than as a failed state.
pub fn run_on_log_refusal(rec: &HostRecording) -> Option<(String, String)> {
    let cfg = &rec.cfg;
    if cfg.strategy != "wal" {
        return None;
    }
    let page = u64::from(rec.dcfg.nand.page_bytes);
    let writes = rec
        .commits
        .iter()
        .map(|c| c.spec.ops.iter().filter(|o| o.writes()).count() as u64)
        .max()
        .unwrap_or(0);
    let rec_bytes = u64::from(cfg.log_record_bytes);
    let per_txn = (2 * writes + 3) * rec_bytes;
    let ckpt = 2 * rec_bytes + 16 * u64::from(cfg.clients);
    let need = u64::from(cfg.clients) * per_txn + cfg.checkpoint_log_bytes + ckpt;
    let pages = need.div_ceil(page.max(1)) + 2;
    (u64::from(cfg.log_pages) < pages).then(|| {
        (
            "host.log_pages".into(),
            format!(
                "{} log pages of {page} B cannot carry a run on: {} clients each running the largest transaction ({writes} writes, {per_txn} B of log with its rollback) besides a checkpoint interval of {} B need {pages}; set host.log_pages to at least {pages}",
                cfg.log_pages, cfg.clients, cfg.checkpoint_log_bytes
            ),
        )
    })
}

/// The commits of `rec`'s run that the database `db` recovered from a crash at `t` holds, in
/// commit order: every acked one and every one in flight at `t` that is visible in `db` (all
/// or nothing: `db` was judged right). Run-on's consistency conditions chain from them.
fn durable_commits(
    rec: &HostRecording,
    t: SimTime,
    db: &BTreeMap<PageNo, Vec<u64>>,
) -> Vec<CommitRec> {
    let layout = &rec.layout;
    let start = |p: PageNo, s: u16| -> u64 {
        rec.start
            .as_ref()
            .and_then(|m| m.get(&p))
            .and_then(|v| v.get(s as usize).copied())
            .unwrap_or_else(|| layout.initial_slot(p, s))
    };
    let mut base: BTreeMap<(PageNo, u16), u64> = BTreeMap::new();
    for c in rec.commits.iter().filter(|c| c.ack <= t) {
        for op in &c.spec.ops {
            if let Some(eff) = Effect::of(op) {
                let rid = op.rid();
                let k = (layout.page_of(rid), rid.slot);
                let cur = base.get(&k).copied().unwrap_or_else(|| start(k.0, k.1));
                base.insert(k, eff.apply(cur));
            }
        }
    }
    let got = |p: PageNo, s: u16| -> u64 {
        match db.get(&p) {
            Some(v) => v.get(s as usize).copied().unwrap_or(u64::MAX),
            None => layout.initial_slot(p, s),
        }
    };
    rec.commits
        .iter()
        .filter(|c| {
            if c.ack <= t {
                return true;
            }
            if c.issue > t {
                return false;
            }
            let mut w: BTreeMap<(PageNo, u16), u64> = BTreeMap::new();
            for op in &c.spec.ops {
                if let Some(eff) = Effect::of(op) {
                    let rid = op.rid();
                    let k = (layout.page_of(rid), rid.slot);
                    let cur = w
                        .get(&k)
                        .or_else(|| base.get(&k))
                        .copied()
                        .unwrap_or_else(|| start(k.0, k.1));
                    w.insert(k, eff.apply(cur));
                }
            }
            w.iter().any(|(&(p, s), &v)| {
                let before = base.get(&(p, s)).copied().unwrap_or_else(|| start(p, s));
                v != before && got(p, s) == v
            })
        })
        .cloned()
        .collect()
}

/// The crash instants of a run on a recovered medium that exhaustive run-on mode tries
/// (module docs, "Recover, run on, crash again"): every instant of the restart's write-back
/// and this many of the run after it.
pub const RUN_ON_WINDOW: usize = 24;

/// Above every transaction id the medium of `rec`'s run may name: its commits' and every
/// log record's (aborted attempts' ids are in the log only).
pub(crate) fn next_txn_after(rec: &HostRecording) -> u64 {
    let mut n = rec.commits.iter().map(|c| c.txn.0).max().unwrap_or(0);
    // Every attempt of the run (ids 1, 2, … in start order, each ended as a commit, a
    // rollback or a restart): device-tx names its device transactions by them, and an
    // aborted or unfinished one's id may be on the medium above every commit's.
    let m = &rec.metrics;
    n = n.max(m.txns_committed + m.txns_aborted + m.txns_restarted);
    for tag in 1..=rec.tags.len() {
        if let Some(crate::data::TagContent::Strategy(x)) = rec.tags.get(tag) {
            n = n.max(x.max_txn());
        }
    }
    n + 1
}

/// Recovers from the crash image `img` (of `rec`'s run, crashed at `t`) with a restart that
/// writes back, judges the database it returns as the first crash is judged, and, if it is
/// right, starts the engine on the recovered medium with a fresh batch of transactions
/// (`host.transactions` of them, drawn with `seed`, ids above every recovered one) and runs
/// it to its end. Returns the first judgement's findings and, when they are empty, the
/// second run as a recording: its base is `img`, its tape the device's recovery, the
/// restart's write-back and the run, and its oracle starts from the recovered database.
pub fn run_on(rec: &HostRecording, img: &[NandImage], t: SimTime, seed: u64) -> RunOn {
    let failed = |findings: Vec<String>| RunOn {
        findings,
        rec: None,
        voided: 0,
        refused: None,
    };
    let Some(img0) = img.first() else {
        return failed(vec!["internal: no crash image".into()]);
    };
    // The log device's crash image (`host.log_device = "separate"`): both devices recover.
    let log_img = match (&rec.log, img.get(1)) {
        (Some(l), Some(i)) => Some((l, i)),
        (Some(_), None) => return failed(vec!["internal: no log device crash image".into()]),
        (None, _) => None,
    };
    let out = catch_unwind(AssertUnwindSafe(|| -> Result<RunOn, String> {
        let mut nand = Nand::from_image(img0.clone(), rec.dcfg.nand.timing.clone());
        nand.enable_log();
        let (mut dev, rep) = Device::recover(&rec.dcfg, nand)
            .map_err(|e| format!("device recovery failed on a legitimate crash image: {e}"))?;
        let mut now = rep.time_ns;
        let mut log_dev = match log_img {
            Some((l, i)) => {
                let mut n = Nand::from_image(i.clone(), l.dcfg.nand.timing.clone());
                n.enable_log();
                let (d, r) = Device::recover(&l.dcfg, n).map_err(|e| {
                    format!("log device recovery failed on a legitimate crash image: {e}")
                })?;
                now = now.max(r.time_ns);
                Some(d)
            }
            None => None,
        };
        let info = strategy::lookup(&rec.cfg.strategy).map_err(|e| e.to_string())?;
        let mut wb = strategy::WriteBack {
            tags: rec.tags.clone(),
            ..Default::default()
        };
        let db = {
            let mut ctx = RecoverCtx {
                cfg: &rec.cfg,
                layout: &rec.layout,
                device: &mut dev,
                log_device: log_dev.as_mut(),
                tags: &rec.tags,
                now: SimTime::from_ns(now),
                write_back: Some(&mut wb),
            };
            (info.recover)(&mut ctx).map_err(|e| format!("run-on restart: {e}"))?
        };
        let findings = judge(rec, t, &db.pages);
        let voided = wb.voided;
        if !findings.is_empty() {
            return Ok(RunOn {
                findings,
                rec: None,
                voided,
                refused: None,
            });
        }
        let mut ops = dev.core.nand.take_log();
        let mut log_ops = log_dev.as_mut().map(|l| l.core.nand.take_log());
        let mut cfg = rec.cfg.clone();
        cfg.measure_recovery = false;
        // The same database as the first run's: TPC-C's and TATP's loaded contents (and so
        // the page layout) follow the source's seed; the run on draws its transactions from
        // the engine's generator seeded with `seed`. (Found by `crash --host wal --protocol
        // none --run-on --schedules 300 --seed 2 --set host.workload="tpcc" --set
        // host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set
        // host.tpcc.items=50 --set host.tpcc.max_txns=200 --set host.transactions=40`: the
        // second restart panicked on a page the run on wrote in another seed's layout, and
        // 123 of 530 states violated.)
        // TPC-C takes up the committed view of the recovered database: the crashed run's
        // generator calls replayed with exactly the commits the restart kept
        // (`source::take_up`), so New-Order continues at the recovered D_NEXT_O_ID,
        // Delivery at the oldest order still undelivered and inserts at the recovered
        // insert runs' ends (TPC-C §2.4.2.2, §2.7.4.2). A fresh generator, as loaded,
        // re-delivered orders the crashed run had delivered and re-used its order ids.
        // Found by `crash --host wal --protocol none --run-on --schedules 300 --seed 2 --set
        // host.workload="tpcc" --set host.tpcc.warehouses=1 --set
        // host.tpcc.customers_per_district=20 --set host.tpcc.items=50 --set
        // host.tpcc.max_txns=200 --set host.transactions=40 --set host.log_pages=64`
        // (state 13: "in-flight txn 88 is partly visible: 20 records with it, 117 without";
        // the 20 were its deletes of the NEW-ORDER rows and keys the crashed run's acked
        // Delivery txn 18 had deleted, no change at all; its 117 real writes were not on
        // the medium) and, with `host.data = "full"`, 231 of 600 states breaking condition
        // 2 (D_NEXT_O_ID − 1 above max(O_ID): a re-used order id overwrote an order).
        let source = if cfg.workload == "tpcc" {
            let journal = rec
                .journal
                .as_deref()
                .ok_or("internal: a TPC-C recording without its generator journal")?;
            let kept: Vec<workload::db::TxnSpec> = durable_commits(rec, t, &db.pages)
                .into_iter()
                .map(|c| (*c.spec).clone())
                .collect();
            let src = crate::source::take_up(&cfg, rec.seed, journal, &kept)?;
            // Past `max_txns` TPC-C's insert runs wrap onto earlier rows (`workload::tpcc`):
            // the crashed run's generations and the run on's together must fit.
            if src.remaining_txns().is_some_and(|n| n < cfg.transactions) {
                return Ok(RunOn {
                    findings: Vec::new(),
                    rec: None,
                    voided,
                    refused: Some(format!(
                        "host.tpcc.max_txns: the run on's {} transactions do not fit the {} TPC-C's insert runs are sized for after the crashed run's generations; raise host.tpcc.max_txns",
                        cfg.transactions, cfg.tpcc.max_txns
                    )),
                });
            }
            src
        } else {
            crate::source::build(&cfg, rec.seed).map_err(|e| e.to_string())?
        };
        let mut eng = crate::engine::Engine::resume_with_log_device(
            &cfg,
            dev,
            log_dev,
            source,
            seed,
            true,
            wb,
            next_txn_after(rec),
        )
        .map_err(|e| format!("the engine cannot start on the recovered medium: {e}"))?;
        match eng.run() {
            // A run that cannot go on for lack of what its configuration gives it (the log
            // area full: `host.log_pages`) is a configuration error, not a violation.
            Err(HostError::Config { key, reason }) => {
                return Ok(RunOn {
                    findings: Vec::new(),
                    rec: None,
                    voided,
                    refused: Some(format!(
                        "{key}: the run on the recovered medium cannot go on: {reason}"
                    )),
                })
            }
            Err(e) => return Err(format!("the run on the recovered medium failed: {e}")),
            Ok(()) => {}
        }
        let m = eng.metrics(&rec.dcfg.protocol.name, 0.0);
        let mut run = eng.into_run(m);
        ops.extend(run.core.device.core.nand.take_log());
        let log = match (log_img, run.core.log_device.as_mut(), log_ops.as_mut()) {
            (Some((l, i)), Some(d), Some(o)) => {
                o.extend(d.core.nand.take_log());
                Some(LogTape {
                    dcfg: l.dcfg.clone(),
                    base: i.clone(),
                    ops: std::mem::take(o),
                })
            }
            (None, None, None) => None,
            _ => return Err("internal: the log device was lost on the way".into()),
        };
        Ok(RunOn {
            findings: Vec::new(),
            voided,
            refused: None,
            rec: Some(HostRecording {
                cfg,
                dcfg: rec.dcfg.clone(),
                // The seed the loaded database and its source were built with (the first
                // run's; the run on drew its transactions with `seed`): the consistency
                // conditions rebuild TPC-C's loaded orders from it (`consistency::Contents`).
                seed: rec.seed,
                layout: run.core.layout.clone(),
                base: img0.clone(),
                ops,
                commits: run.commits,
                tags: run.core.tags,
                metrics: run.metrics,
                tier: None,
                log,
                start: Some(db.pages),
                journal: None,
            }),
        })
    }));
    match out {
        Err(p) => {
            let msg = panic_text(&*p);
            failed(vec![format!("run-on panicked: {msg}")])
        }
        Ok(Err(e)) => failed(vec![e]),
        Ok(Ok(x)) => x,
    }
}

/// What `run_on` gave.
pub struct RunOn {
    /// The first judgement's findings, or why the run on the recovered medium failed.
    pub findings: Vec<String>,
    /// The second run as a recording (None when `findings` is not empty).
    pub rec: Option<HostRecording>,
    /// Log pages beyond the end the restart voided (`strategy::WriteBack::voided`).
    pub voided: u64,
    /// The run on cannot go on as configured (the key and the reason): the check is
    /// refused, not failed.
    pub refused: Option<String>,
}

/// Run-on mode (module docs, "Recover, run on, crash again"): every first crash state as
/// `check` draws or enumerates it; for each one whose restart is right, recover with a
/// restart that writes back, run on, and crash again: exhaustively every state of the
/// restart's write-back and of the first `RUN_ON_WINDOW` instants of the run after it, or
/// randomly one state anywhere in it. A second state is judged against the second run's
/// commits from the recovered database.
pub fn check_run_on(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
) -> Result<CheckReport, String> {
    check_run_on_window(rec, mode, seed, only, RUN_ON_WINDOW)
}

/// As `check_run_on`, with exhaustive second crashes over `window` instants of the run
/// after the restart (`usize::MAX`: all of it).
pub fn check_run_on_window(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
    window: usize,
) -> Result<CheckReport, String> {
    if let Some((key, reason)) = run_on_refusal(&rec.cfg) {
        return Err(format!("{key}: {reason}"));
    }
    if let Some((key, reason)) = run_on_log_refusal(rec) {
        return Err(format!("{key}: {reason}"));
    }
    if let Some(tier) = &rec.tier {
        return crate::pcm_tier::check_run_on(rec, tier, mode, seed, only, window);
    }
    let (tape, split) = tape(rec);
    let tape = &tape[..];
    let mut rep = CheckReport {
        ops: tape.len(),
        commits: rec.commits.len(),
        ..Default::default()
    };
    let bounds = boundaries(rec, tape);
    let full = if rec.cfg.data == "full" {
        crate::consistency::Contents::new(rec)?
    } else {
        None
    };
    let full = full.as_ref();
    let root = Rng::new(seed).fork("host-crash-run-on");
    let note = |rep: &mut CheckReport,
                state: &CrashState,
                second: Option<CrashState>,
                findings: Vec<String>| {
        rep.states += 1;
        if second.is_some() {
            rep.states_after_run_on += 1;
        }
        if !findings.is_empty() {
            rep.violations += 1;
        }
        if (!findings.is_empty() && rep.first.len() < KEEP) || (only.is_some() && second.is_none())
        {
            rep.first.push(Violation {
                state: state.clone(),
                inside: Vec::new(),
                run_on: second,
                findings,
            });
        }
    };
    // One first state: judged, then recover, run on and crash again.
    let one = |rep: &mut CheckReport,
               state: &CrashState,
               img: Vec<NandImage>,
               exhaustive: Option<usize>|
     -> Result<(), String> {
        let ev = evaluate_images(rec, img.clone(), state.t, full, false);
        if !ev.findings.is_empty() {
            note(rep, state, None, ev.findings);
            return Ok(());
        }
        let mut r = root.fork(&state.index.to_string());
        let seed2 = r.next_u64();
        let out = run_on(rec, &img, state.t, seed2);
        if out.voided > 0 {
            rep.run_on_voided += 1;
        }
        if let Some(e) = out.refused {
            return Err(format!("{e} (first crash state {})", state.index));
        }
        let Some(rec2) = out.rec else {
            note(rep, state, None, out.findings);
            return Ok(());
        };
        // `host.data = "full"`: the workload's consistency conditions on every second crash
        // too, their contents chained from the crashed run's commits the restart kept.
        let full2 = match (full, rec2.start.as_ref()) {
            (Some(_), Some(db)) => {
                let before = durable_commits(rec, state.t, db);
                crate::consistency::Contents::after(&rec2, &before)?
            }
            _ => None,
        };
        let full2 = full2.as_ref();
        note(rep, state, None, Vec::new());
        // Both devices' operations (data, then log: `tape`), as the first run's.
        let (tape2, split2) = self::tape(&rec2);
        let ops2 = &tape2[..];
        rep.run_on_ops_max = rep.run_on_ops_max.max(ops2.len());
        let b2 = boundaries(&rec2, ops2);
        match exhaustive {
            Some(max_in_flight) => {
                // The restart's write-back ends when the engine's run starts: the first
                // commit's issue, or the run's first operation after the restart's.
                let run_start = rec2
                    .commits
                    .iter()
                    .map(|c| c.issue)
                    .min()
                    .unwrap_or(SimTime::ZERO);
                let cut = b2.iter().position(|x| *x >= run_start).unwrap_or(b2.len());
                let upto = cut.saturating_add(window).min(b2.len());
                let mut sweep = crashstates::Sweep::over(bases(&rec2), ops2, split2);
                let too_many = |n: usize, t2: SimTime| {
                    format!(
                        "{n} operations are in progress at {t2} of a run on a recovered medium; exhaustive checking allows {max_in_flight}"
                    )
                };
                crashstates::for_each_state(
                    &mut sweep,
                    &b2[..upto],
                    max_in_flight,
                    &too_many,
                    &mut |sweep, second| {
                        let t2 = second.t;
                        let img2 = sweep.state_image(&second)?;
                        let f = evaluate_images(&rec2, img2, t2, full2, false).findings;
                        note(rep, state, Some(second), prefix(f));
                        Ok(true)
                    },
                )?;
            }
            None => {
                let (second, img2) =
                    crashstates::draw_state(bases(&rec2), ops2, split2, &b2, &mut r, 0)?;
                let t2 = second.t;
                let f = evaluate_images(&rec2, img2, t2, full2, false).findings;
                note(rep, state, Some(second), prefix(f));
            }
        }
        Ok(())
    };
    rep.max_in_flight_seen = for_each_first_crash(
        rec,
        tape,
        split,
        &bounds,
        mode,
        seed,
        only,
        &mut |state, img, exhaustive| one(&mut rep, state, img, exhaustive),
    )?;
    Ok(rep)
}

/// Findings of a second crash, marked as such.
fn prefix(f: Vec<String>) -> Vec<String> {
    f.into_iter()
        .map(|x| format!("after recover and run on: {x}"))
        .collect()
}

/// A tiny configuration for exhaustive host crash checks: a 2-plane device of 2 KiB pages
/// (8 KiB DB pages over 4 device pages, as in Flag Commit), a 7-page bank, 3 clients and a
/// 4-frame pool, so pages are stolen, the log wraps and GC runs during the run.
pub fn tiny_config(strategy: &str, protocol: &str) -> (HostConfig, DeviceConfig) {
    let mut d = DeviceConfig::default();
    d.protocol.name = protocol.into();
    let n = &mut d.nand;
    n.channels = 1;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = 2;
    n.blocks_per_plane = 16;
    n.pages_per_block = 8;
    n.page_bytes = 2048;
    n.oob_bytes = 64;
    d.ftl.gc_threshold = 0.0;
    d.ftl.gc_min_free_blocks = 2;
    d.ftl.checkpoint_window_blocks = 1;
    let mut h = HostConfig {
        strategy: strategy.into(),
        clients: 3,
        transactions: 60,
        buffer_frames: 4,
        log_record_bytes: 100,
        log_pages: 16,
        checkpoint_log_bytes: 2048,
        backoff_ns_max: 200_000,
        ..Default::default()
    };
    if matches!(strategy, "flagcommit-ex" | "cfc-ex" | "afc-ex") {
        // Commit flags live in each flash page's record area (strategy/flagcommit_ex).
        d.nand.append_bytes = 4;
    }
    if strategy == "pcmlogging" {
        // 4 frames beside the tables of a 2 KiB PCM (pcm_tier::PcmSettings::sizes), low
        // watermarks so the run destages, the fast disk so destages overlap PCM work.
        h.pcm.pcm_bytes = 2048;
        h.pcm.dram_bytes = 4 * 8192 + 2048;
        h.pcm.high_watermark = 0.6;
        h.pcm.low_watermark = 0.4;
        h.pcm.destage = "watermark".into();
        h.pcm.external = "ssd".into();
    }
    if strategy == "pcmlogging-page" {
        // 1280 B DB pages (the bank's 160-record history page; one 1408 B PCM slot each,
        // 22 line writes), 8 slots of PCM and 4 frames, low watermarks so the run
        // destages, the fast disk so destages overlap PCM work.
        h.page_bytes = 1280;
        h.pcm.pcm_bytes = 256 + 8 * 1408;
        h.pcm.dram_bytes = 4 * 1280 + 8 * 16 + 3 * 64;
        h.pcm.high_watermark = 0.6;
        h.pcm.low_watermark = 0.3;
        h.pcm.destage = "watermark".into();
        h.pcm.external = "ssd".into();
    }
    if matches!(strategy, "wal-pcm" | "scmlogging") {
        // 2 KiB pages (a history page's 160 slots fit a frame; 32 log records a page), 4
        // DRAM frames, wal-pcm: 6 PCM frames destaged above 50 %; scmlogging: 8 PCM log
        // pages, so the log wraps; checkpoints every 2 ms of simulated time; the fast disk
        // so its writes overlap PCM work.
        h.page_bytes = 2048;
        h.log_pages = 8;
        h.pcm.pcm_bytes = if strategy == "wal-pcm" {
            6 * 2048
        } else {
            8 * 2048
        };
        h.pcm.dram_bytes = 4 * 2048 + 6 * 32 + 3 * 64;
        h.pcm.high_watermark = 0.5;
        h.pcm.low_watermark = 0.3;
        h.pcm.checkpoint_interval_ms = 2;
        h.pcm.external = "ssd".into();
    }
    h.bank = crate::bank::BankConfig {
        accounts: 40,
        records_per_page: 8,
        history_pages: 2,
        reads: 1,
        updates: 2,
        rollback_ratio: 0.2,
    };
    (h, d)
}

impl crate::consistency::Contents {
    /// Builds the chains of `rec`'s commits and the workload's generator as loaded
    /// (`Contents::of_commits`). `None` when the workload defines no consistency conditions.
    pub fn new(rec: &HostRecording) -> std::result::Result<Option<Self>, String> {
        Self::of_commits(&rec.cfg, rec.seed, &rec.layout, &[], &rec.commits)
    }

    /// As `new`, for a run that started from a recovered database (run-on,
    /// `check_run_on`): `before` are the commits of the crashed run that database holds.
    pub fn after(
        rec: &HostRecording,
        before: &[CommitRec],
    ) -> std::result::Result<Option<Self>, String> {
        Self::of_commits(&rec.cfg, rec.seed, &rec.layout, before, &rec.commits)
    }
}
