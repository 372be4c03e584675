//! The crash checker.
//!
//! A run is recorded: every mutating NAND operation with the instant it began changing the
//! medium and the instant it completed, and every host command with its issue and ack. A
//! *crash state* is then:
//!
//! - a crash instant `T`;
//! - every operation that completed by `T` persisted;
//! - of the operations in progress at `T` (started, not completed; at most one per plane,
//!   since a plane executes its commands one at a time in issue order), any subset persisted;
//! - optionally one more of them was torn: a program left uncorrectable, a partial program
//!   that cleared only some of its bits, an erase that left the block reading erased but
//!   unprogrammable or left its pages uncorrectable;
//! - nothing that had not started by `T` persisted.
//!
//! Recovery then runs on that image alone, and the oracle (`oracle`) checks the recovered
//! contents against the host log. Recovery must succeed on every crash state (they are all
//! images a real power cut could leave), must not panic, and must leave a device whose
//! invariants hold and that accepts new writes.
//!
//! Modes: *exhaustive* enumerates every crash instant at which anything changes × every
//! in-flight subset × every torn variant; *random* draws `N` states from a seeded stream.
//! Every state has an index; `only` evaluates one state (to replay a failure).
//!
//! What it does not check: faults other than power loss (bit errors, bad blocks appearing),
//! a crash during recovery, and ECC miscorrection (a torn page is assumed detected).

pub mod oracle;

use media::{LoggedOp, Nand, NandImage, OpKind, TornKind};
use sim::{Lpn, Rng, SimTime, TxId};
use ssd::{Device, ReadOutcome};
use std::panic::{catch_unwind, AssertUnwindSafe};
use world::{Config, HostEvent, RunOptions};

/// The configuration `commitlab crash` uses unless told otherwise: a device small enough to
/// check exhaustively (2 planes of 12 blocks of 8 pages) and a workload that runs GC many
/// times over.
pub fn small_config(protocol: &str) -> Config {
    let mut c = Config::default();
    c.protocol.name = protocol.to_string();
    let n = &mut c.nand;
    n.channels = 1;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = 2;
    n.blocks_per_plane = 12;
    n.pages_per_block = 8;
    n.page_bytes = 512;
    n.oob_bytes = 64;
    c.ftl.gc_threshold = 0.0;
    c.ftl.gc_min_free_blocks = 2;
    // With checkpoints each unit keeps its window out of the logical space: one block of
    // twelve, not two, so the workload still drives GC.
    c.ftl.checkpoint_window_blocks = 1;
    c.workload.prefill = 0.0;
    let w = &mut c.workload.synthetic;
    w.requests = 300;
    w.queue_depth = 4;
    w.trim_ratio = 0.05;
    w.request_pages_max = 2;
    // A protocol with atomic transactions is checked on transactions: aborts, plain writes
    // in between, GC, under the most permissive isolation level it supports.
    if let Ok(info) = ssd::protocol::lookup(protocol) {
        if info.atomic {
            use workload::txn::Isolation as I;
            c.workload.kind = world::WorkloadKind::Txn;
            let t = &mut c.workload.txn;
            t.transactions = 80;
            t.size_min = 1;
            t.size_max = 5;
            t.abort_ratio = 0.2;
            t.plain_write_ratio = 0.15;
            t.concurrency = 3;
            t.isolation = if info.supports(ssd::Isolation::Serializable) {
                I::Serializable
            } else if info.supports(ssd::Isolation::NoPageConflict) {
                I::NoPageConflict
            } else {
                I::Strict
            };
        }
    }
    c
}

/// A recorded run.
pub struct Recording {
    pub cfg: Config,
    pub base: NandImage,
    pub ops: Vec<LoggedOp>,
    pub host: Vec<HostEvent>,
    pub atomic: bool,
}

/// Runs `cfg` with recording on.
pub fn record(cfg: &Config) -> Result<Recording, String> {
    let mut cfg = cfg.clone();
    cfg.run.measure_recovery = false;
    let out = world::run(
        &cfg,
        &RunOptions {
            record: true,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let atomic = out.device.info().atomic;
    let mut dev = out.device;
    let ops = dev.core.nand.take_log();
    let base = out.base_image.ok_or("internal: no base image recorded")?;
    Ok(Recording {
        cfg,
        base,
        ops,
        host: out.host_log,
        atomic,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every state; fails if more than `max_in_flight` operations are ever in progress at once.
    Exhaustive { max_in_flight: usize },
    /// `schedules` states drawn from the seed.
    Random { schedules: u64 },
}

/// One crash state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashState {
    pub index: u64,
    pub t: SimTime,
    /// Indices (into the op log) of in-progress operations that persisted.
    pub persisted: Vec<usize>,
    /// An in-progress operation that was torn, and how.
    pub torn: Option<(usize, TornKind)>,
    /// Operations in progress at `t`.
    pub in_flight: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Violation {
    pub state: CrashState,
    pub findings: Vec<oracle::Finding>,
}

#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub states: u64,
    pub violations: u64,
    /// The first few violations in full.
    pub first: Vec<Violation>,
    pub ops: usize,
    pub max_in_flight_seen: usize,
}

const KEEP: usize = 5;

fn torn_variants(i: usize, op: &OpKind) -> Vec<TornKind> {
    match op {
        OpKind::Program { .. } => vec![TornKind::Program],
        OpKind::PartialProgram { .. } => {
            vec![
                TornKind::Partial {
                    seed: i as u64 * 2 + 1,
                },
                TornKind::Partial {
                    seed: i as u64 * 2 + 2,
                },
            ]
        }
        OpKind::Erase { .. } => vec![TornKind::EraseUnstable, TornKind::EraseGarbled],
        OpKind::SetMode { .. } => vec![],
    }
}

/// The instants at which the crash state can change: op starts and ends, host issues and acks.
fn boundaries(rec: &Recording) -> Vec<SimTime> {
    let mut b: Vec<SimTime> = vec![SimTime::ZERO];
    for o in &rec.ops {
        b.push(o.start);
        b.push(o.end);
    }
    for h in &rec.host {
        b.push(h.issue());
        match h {
            HostEvent::Plain { ack, .. }
            | HostEvent::Trim { ack, .. }
            | HostEvent::Commit { ack, .. }
            | HostEvent::Abort { ack, .. } => b.push(*ack),
            HostEvent::TxWrite { .. } => {}
        }
    }
    b.sort_unstable();
    b.dedup();
    b
}

/// Sweeps crash instants in increasing order, keeping the durable image and in-flight set.
struct Sweep<'a> {
    rec: &'a Recording,
    by_end: Vec<usize>,
    by_start: Vec<usize>,
    end_pos: usize,
    start_pos: usize,
    durable: NandImage,
    in_flight: Vec<usize>,
}

impl<'a> Sweep<'a> {
    fn new(rec: &'a Recording) -> Sweep<'a> {
        let mut by_end: Vec<usize> = (0..rec.ops.len()).collect();
        by_end.sort_by_key(|i| (rec.ops[*i].end, *i));
        let mut by_start: Vec<usize> = (0..rec.ops.len()).collect();
        by_start.sort_by_key(|i| (rec.ops[*i].start, *i));
        Sweep {
            rec,
            by_end,
            by_start,
            end_pos: 0,
            start_pos: 0,
            durable: rec.base.clone(),
            in_flight: Vec::new(),
        }
    }

    fn advance(&mut self, t: SimTime) -> Result<(), String> {
        while self.start_pos < self.by_start.len()
            && self.rec.ops[self.by_start[self.start_pos]].start <= t
        {
            self.in_flight.push(self.by_start[self.start_pos]);
            self.start_pos += 1;
        }
        while self.end_pos < self.by_end.len() && self.rec.ops[self.by_end[self.end_pos]].end <= t {
            let i = self.by_end[self.end_pos];
            self.durable.apply(&self.rec.ops[i].kind).map_err(|e| {
                format!(
                    "internal: replaying op {i} ({}): {e}",
                    self.rec.ops[i].kind.name()
                )
            })?;
            self.end_pos += 1;
        }
        let ops = &self.rec.ops;
        self.in_flight.retain(|i| ops[*i].end > t);
        self.in_flight.sort_unstable();
        Ok(())
    }

    fn image(
        &self,
        persisted: &[usize],
        torn: Option<(usize, TornKind)>,
    ) -> Result<NandImage, String> {
        let mut img = self.durable.clone();
        for &i in persisted {
            img.apply(&self.rec.ops[i].kind)
                .map_err(|e| format!("internal: applying in-flight op {i}: {e}"))?;
        }
        if let Some((i, k)) = torn {
            img.apply_torn(&self.rec.ops[i].kind, k)
                .map_err(|e| format!("internal: tearing op {i}: {e}"))?;
        }
        Ok(img)
    }
}

/// Recovers `img` and judges the result; returns the findings (empty: the state is fine).
pub fn evaluate(rec: &Recording, img: NandImage, t: SimTime) -> Vec<oracle::Finding> {
    let f = |what: String| vec![oracle::Finding { lpn: None, what }];
    let dcfg = rec.cfg.device();
    let nand = Nand::from_image(img, rec.cfg.nand.timing.clone());
    let recovered = catch_unwind(AssertUnwindSafe(|| Device::recover(&dcfg, nand)));
    let mut dev = match recovered {
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            return f(format!("recovery panicked: {msg}"));
        }
        Ok(Err(e)) => return f(format!("recovery failed on a legitimate crash image: {e}")),
        Ok(Ok((d, _))) => d,
    };
    if let Err(e) = dev.check_invariants() {
        return f(format!("recovered device is inconsistent: {e}"));
    }
    let at = SimTime::from_ms(1 << 30);
    let mut observed = Vec::with_capacity(dev.logical_pages() as usize);
    for l in 0..dev.logical_pages() {
        match dev.read(Lpn(l), at) {
            Ok((o, _)) => observed.push(o),
            Err(e) => return f(format!("read of lpn {l} after recovery failed: {e}")),
        }
    }
    let mut findings = oracle::judge(&rec.host, t, rec.atomic, &observed);
    if findings.is_empty() {
        if let Err(e) = still_works(&mut dev, rec.atomic, at) {
            findings.push(oracle::Finding {
                lpn: None,
                what: format!("recovered device does not work: {e}"),
            });
        }
    }
    findings
}

/// The recovered device accepts plain writes and (if atomic) a transaction, and reads them back.
fn still_works(dev: &mut Device, atomic: bool, mut now: SimTime) -> Result<(), String> {
    let lp = dev.logical_pages();
    let mut expect = Vec::new();
    for k in 0..4u32 {
        let lpn = Lpn((k * 7919) % lp);
        let tag = (1 << 62) + u64::from(k);
        now = dev.write_plain(lpn, tag, now).map_err(|e| e.to_string())?;
        expect.push((lpn, tag));
    }
    if atomic {
        let tx = TxId(1 << 40);
        dev.begin(tx, now).map_err(|e| e.to_string())?;
        for k in 0..2u32 {
            let lpn = Lpn((k * 104_729 + 13) % lp);
            let tag = (1 << 62) + 100 + u64::from(k);
            dev.write(tx, lpn, tag, now).map_err(|e| e.to_string())?;
            expect.retain(|(l, _)| *l != lpn);
            expect.push((lpn, tag));
        }
        now = dev.commit(tx, now).map_err(|e| e.to_string())?;
    }
    for (lpn, tag) in expect {
        let (o, _) = dev.read(lpn, now).map_err(|e| e.to_string())?;
        if o != ReadOutcome::Tag(tag) {
            return Err(format!("lpn {} reads {o:?} after writing tag {tag}", lpn.0));
        }
    }
    dev.check_invariants()
}

/// Checks a recording. With `only`, evaluates just that state (and reports it in `first`
/// even when it passes).
pub fn check(
    rec: &Recording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
) -> Result<CheckReport, String> {
    let mut rep = CheckReport {
        ops: rec.ops.len(),
        ..Default::default()
    };
    let bounds = boundaries(rec);
    match mode {
        Mode::Exhaustive { max_in_flight } => {
            let mut sweep = Sweep::new(rec);
            let mut index = 0u64;
            for &t in &bounds {
                sweep.advance(t)?;
                let fl = sweep.in_flight.clone();
                rep.max_in_flight_seen = rep.max_in_flight_seen.max(fl.len());
                if fl.len() > max_in_flight {
                    return Err(format!(
                        "{} operations are in progress at {t}; exhaustive checking allows {max_in_flight}. Use a smaller device or --schedules N",
                        fl.len()
                    ));
                }
                for mask in 0u64..(1u64 << fl.len()) {
                    let persisted: Vec<usize> = fl
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| mask & (1 << k) != 0)
                        .map(|(_, i)| *i)
                        .collect();
                    let mut torns: Vec<Option<(usize, TornKind)>> = vec![None];
                    for (k, &i) in fl.iter().enumerate() {
                        if mask & (1 << k) == 0 {
                            torns.extend(
                                torn_variants(i, &rec.ops[i].kind)
                                    .into_iter()
                                    .map(|v| Some((i, v))),
                            );
                        }
                    }
                    for torn in torns {
                        let state = CrashState {
                            index,
                            t,
                            persisted: persisted.clone(),
                            torn,
                            in_flight: fl.clone(),
                        };
                        index += 1;
                        if only.is_some_and(|o| o != state.index) {
                            continue;
                        }
                        run_state(rec, &sweep, state, only.is_some(), &mut rep)?;
                    }
                }
            }
        }
        Mode::Random { schedules } => {
            // Draw every schedule's instant first, then sweep them in time order.
            let root = Rng::new(seed).fork("crash-schedules");
            let mut plan: Vec<(SimTime, u64)> = (0..schedules)
                .filter(|k| only.is_none_or(|o| o == *k))
                .map(|k| {
                    let mut r = root.fork(&k.to_string());
                    (bounds[r.below(bounds.len() as u64) as usize], k)
                })
                .collect();
            plan.sort_unstable();
            let mut sweep = Sweep::new(rec);
            for (t, k) in plan {
                sweep.advance(t)?;
                let fl = sweep.in_flight.clone();
                rep.max_in_flight_seen = rep.max_in_flight_seen.max(fl.len());
                let mut r = root.fork(&k.to_string());
                r.next_u64();
                let persisted: Vec<usize> = fl.iter().copied().filter(|_| r.chance(0.5)).collect();
                let rest: Vec<usize> = fl
                    .iter()
                    .copied()
                    .filter(|i| !persisted.contains(i))
                    .collect();
                let mut torn = None;
                if !rest.is_empty() && r.chance(0.3) {
                    let i = rest[r.below(rest.len() as u64) as usize];
                    let vs = torn_variants(i, &rec.ops[i].kind);
                    if !vs.is_empty() {
                        torn = Some((i, vs[r.below(vs.len() as u64) as usize]));
                    }
                }
                let state = CrashState {
                    index: k,
                    t,
                    persisted,
                    torn,
                    in_flight: fl,
                };
                run_state(rec, &sweep, state, only.is_some(), &mut rep)?;
            }
        }
    }
    Ok(rep)
}

fn run_state(
    rec: &Recording,
    sweep: &Sweep<'_>,
    state: CrashState,
    keep: bool,
    rep: &mut CheckReport,
) -> Result<(), String> {
    let img = sweep.image(&state.persisted, state.torn)?;
    let findings = evaluate(rec, img, state.t);
    rep.states += 1;
    if !findings.is_empty() {
        rep.violations += 1;
    }
    if (!findings.is_empty() && rep.first.len() < KEEP) || keep {
        rep.first.push(Violation { state, findings });
    }
    Ok(())
}

/// Describes a crash state for people: the instant, what was in flight and what persisted.
pub fn describe(rec: &Recording, s: &CrashState) -> String {
    let g = rec.base.geometry();
    let op = |i: usize| {
        let o = &rec.ops[i];
        let what = match &o.kind {
            OpKind::Program { ppa, .. } => format!("program {}", g.addr(*ppa)),
            OpKind::PartialProgram { ppa, .. } => format!("partial program {}", g.addr(*ppa)),
            OpKind::Erase { block } => format!("erase block {}", block.0),
            OpKind::SetMode { block, mode } => format!("set block {} {}", block.0, mode.name()),
        };
        format!("#{i} {what} [{}..{}]", o.start, o.end)
    };
    let mut out = format!("state {} at T={}\n", s.index, s.t);
    for &i in &s.in_flight {
        let fate = if s.persisted.contains(&i) {
            "persisted".to_string()
        } else if s.torn.is_some_and(|(j, _)| j == i) {
            format!(
                "torn ({:?})",
                s.torn.map(|t| t.1).unwrap_or(TornKind::Program)
            )
        } else {
            "lost".to_string()
        };
        out.push_str(&format!("  in flight: {} -> {fate}\n", op(i)));
    }
    out
}
