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
//! invariants hold, that keeps the free-block reserve its protocol declares
//! (`ssd::Device::check_reserve`: the blocks recovery and the first writes after it take),
//! and that accepts new writes.
//!
//! The enumeration itself (crash instants, the sweep, in-flight subsets, torn variants, the
//! numbering and the random draws) is the `crashstates` crate's, shared with the host and
//! PCM checkers, so a state number means the same state in all of them.
//!
//! Modes: *exhaustive* enumerates every crash instant at which anything changes × every
//! in-flight subset × every torn variant; *random* draws `N` states from a seeded stream,
//! in chunks of 4096 swept in time order (memory does not grow with `N`). Every state has an
//! index; `Options::only` evaluates one state (to replay a failure).
//!
//! *Double crashes* (`Options::double`): recovery runs with the operation log on, and the
//! media operations it issues (scan-time erases, GC copies and erases, translation pages,
//! checkpoint roots) are a second tape of crash points, enumerated exactly like the run's
//! (exhaustively: every state of every recovery of every state; randomly: one state inside
//! the first recovery and, with probability 1/2, one inside the second). A state inside
//! recovery is judged at the first crash's instant: recovery acks nothing, so the contract
//! is the same. A recovery that writes nothing has no states of its own.
//!
//! *Timing* (`timing`): a recording has one timing schedule, so the crash states of one
//! recording are only the reorderings that schedule produced. Callers record several runs
//! of one configuration under different timing profiles (slow host interface, slow
//! channels, long erases, per-operation latency jitter, late acks) and check each; the
//! `crash` command does this by default. *Shapes* (`shapes`) are named workloads that hold
//! the protocols' windows open.
//!
//! What it does not check: faults other than power loss (bit errors, bad blocks appearing);
//! ECC miscorrection (a torn page is assumed detected); timing schedules outside the
//! profiles a run is recorded with (the explored orders are those of the recorded runs,
//! plus every in-flight subset at each crash instant); and reads' isolation. A protocol
//! whose recovery writes nothing (tc, scc, bpcc, none without checkpoints) gets no double
//! crashes, because none can differ from a single one.

pub mod oracle;
pub mod shapes;
pub mod timing;
pub mod variants;

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
            // Under the protocols that fuse a commit with its last page (CFC programs that
            // page with its flag TRUE, §3.3), half the commits carry their last page. The
            // others run such a commit as WRITE then COMMIT, which the rest of this workload
            // already covers, so their workload stays as it was.
            if matches!(protocol, "cfc" | "afc") {
                t.commit_write_ratio = 0.5;
            }
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

/// Why a run could not be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The configuration, workload or trace is unusable (bad input: exit code 2).
    #[error("{0}")]
    Input(String),
    /// The device refused a command of the workload (out of space, an unsupported
    /// request): the protocol failed on this workload (exit code 1).
    #[error("{0}")]
    Device(String),
}

/// The largest device the checker records: every crash state clones the image, so a larger
/// device costs gigabytes and hours without exploring anything a small one does not.
pub const MAX_CHECKED_PAGES: u64 = 1 << 20;

/// Runs `cfg` with recording on. The configuration is validated, and the device's size
/// bounded, before anything is built.
pub fn record(cfg: &Config) -> Result<Recording, RecordError> {
    let mut cfg = cfg.clone();
    cfg.run.measure_recovery = false;
    cfg.validate()
        .map_err(|e| RecordError::Input(format!("config: {e}")))?;
    let g = cfg.nand.geometry();
    let pages = u64::from(g.channels)
        * u64::from(g.chips_per_channel)
        * u64::from(g.dies_per_chip)
        * u64::from(g.planes_per_die)
        * u64::from(g.blocks_per_plane)
        * u64::from(g.pages_per_block);
    if pages > MAX_CHECKED_PAGES {
        return Err(RecordError::Input(format!(
            "nand: the device has {pages} pages; the crash checker copies the image for every crash state and checks devices of at most {MAX_CHECKED_PAGES} pages (use fewer channels, chips, dies, planes, blocks or pages)"
        )));
    }
    let out = world::run(
        &cfg,
        &RunOptions {
            record: true,
            ..Default::default()
        },
    )
    .map_err(|e| match &e {
        // Out of space before any crash: the workload does not fit this device (as `run`
        // says, exit code 2), not a failure of the protocol under a crash.
        world::WorldError::Device {
            error: ssd::SsdError::OutOfSpace { .. },
            ..
        } => RecordError::Input(format!(
            "{e} (while recording, before any crash: the workload does not fit the device; reduce workload.prefill or the workload's size, or enlarge nand.blocks_per_plane)"
        )),
        // A request the protocol cannot honour (a trace's TRIM on lighttx/aw, ABORT on
        // none, …) is bad input, as `run` reports it.
        world::WorldError::Device { error, .. } if error.input_fault() => {
            RecordError::Input(e.to_string())
        }
        world::WorldError::Device { .. } => RecordError::Device(e.to_string()),
        other => RecordError::Input(other.to_string()),
    })?;
    let atomic = out.device.info().atomic;
    let mut dev = out.device;
    let ops = dev.core.nand.take_log();
    let base = out
        .base_image
        .ok_or_else(|| RecordError::Device("internal: no base image recorded".into()))?;
    Ok(Recording {
        cfg,
        base,
        ops,
        host: out.host_log,
        atomic,
    })
}

/// How to check a recording (the enumeration's modes, `crashstates::Mode`).
pub use crashstates::Mode;

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

impl From<crashstates::CrashState> for CrashState {
    /// A state of a one-device tape (it has no log device, so no `torn_log`).
    fn from(s: crashstates::CrashState) -> CrashState {
        CrashState {
            index: s.index,
            t: s.t,
            persisted: s.persisted,
            torn: s.torn,
            in_flight: s.in_flight,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Violation {
    pub state: CrashState,
    /// Crash states inside the recoveries that followed (`nested[0]` cut the recovery of
    /// `state`'s image, `nested[1]` the recovery after that); empty for a single crash.
    pub nested: Vec<CrashState>,
    /// The nested states described (their operations belong to recovery, not the recording).
    pub nested_text: String,
    pub findings: Vec<oracle::Finding>,
}

impl Violation {
    /// The state's path as `--state` takes it: `k`, or `k.j` for a crash during recovery in
    /// exhaustive mode (random schedules replay their nested crashes from `k` alone).
    pub fn path(&self, random: bool) -> String {
        if random || self.nested.is_empty() {
            return self.state.index.to_string();
        }
        let mut p = self.state.index.to_string();
        for n in &self.nested {
            p.push_str(&format!(".{}", n.index));
        }
        p
    }
}

#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// States evaluated (each a recovery and an oracle verdict), single and nested.
    pub states: u64,
    /// Of them, states inside a recovery (double or triple crashes).
    pub nested_states: u64,
    pub violations: u64,
    /// The first few violations in full.
    pub first: Vec<Violation>,
    pub ops: usize,
    pub max_in_flight_seen: usize,
    /// Most media operations one recovery issued.
    pub recovery_ops_max: usize,
    /// Set when `stop` ended the check early.
    pub stopped: bool,
}

impl CheckReport {
    /// Adds another report's counts (its `first` violations as far as room is left).
    pub fn absorb(&mut self, o: CheckReport) {
        self.states += o.states;
        self.nested_states += o.nested_states;
        self.violations += o.violations;
        self.ops = self.ops.max(o.ops);
        self.max_in_flight_seen = self.max_in_flight_seen.max(o.max_in_flight_seen);
        self.recovery_ops_max = self.recovery_ops_max.max(o.recovery_ops_max);
        self.stopped |= o.stopped;
        for v in o.first {
            if self.first.len() < KEEP {
                self.first.push(v);
            }
        }
    }
}

const KEEP: usize = 5;

/// How to check a recording.
#[derive(Clone, Debug)]
pub struct Options {
    pub mode: Mode,
    pub seed: u64,
    /// Evaluate only this state: `[k]`, or `[k, j]` for state `j` inside the recovery of
    /// state `k` (exhaustive double mode). Reported in `first` even when it passes.
    pub only: Option<Vec<u64>>,
    /// Also crash inside recovery: exhaustively every crash state of the recovery of every
    /// (exhaustive) state; in random mode one random crash inside the first recovery and,
    /// with probability 1/2, another inside the second.
    pub double: bool,
    /// Random mode: the first schedule index (for batches); schedules `first..first+N`.
    pub first_schedule: u64,
}

impl Options {
    pub fn new(mode: Mode, seed: u64) -> Options {
        Options {
            mode,
            seed,
            only: None,
            double: false,
            first_schedule: 0,
        }
    }
}

/// The instants at which the crash state can change: op starts and ends, host issues and acks.
fn boundaries(rec: &Recording) -> Vec<SimTime> {
    let mut host = Vec::with_capacity(rec.host.len() * 2);
    for h in &rec.host {
        host.push(h.issue());
        match h {
            HostEvent::Plain { ack, .. }
            | HostEvent::Trim { ack, .. }
            | HostEvent::Commit { ack, .. }
            | HostEvent::Abort { ack, .. } => host.push(*ack),
            HostEvent::TxWrite { .. } => {}
        }
    }
    crashstates::instants(crashstates::op_times(&rec.ops).chain(host))
}

/// The error of an exhaustive check that meets more operations in flight than it allows.
fn too_many(max_in_flight: usize) -> impl Fn(usize, SimTime) -> String {
    move |n, t| {
        format!(
            "{n} operations are in progress at {t}; exhaustive checking allows {max_in_flight}. Use a smaller device or --schedules N"
        )
    }
}

/// The image of a one-device tape's crash state.
fn only_image(mut v: Vec<NandImage>) -> Result<NandImage, String> {
    v.truncate(1);
    v.pop()
        .ok_or_else(|| "internal: a crash state without an image".to_string())
}

/// Random schedules are drawn and swept in time order in chunks of this many, so a check of
/// any number of schedules holds at most one chunk in memory.
const RANDOM_CHUNK: u64 = 4096;

/// Recovers `img` and judges the result; returns the findings (empty: the state is fine).
pub fn evaluate(rec: &Recording, img: NandImage, t: SimTime) -> Vec<oracle::Finding> {
    evaluate_logged(rec, img, t, false).findings
}

/// What `evaluate_logged` found.
pub struct Evaluation {
    pub findings: Vec<oracle::Finding>,
    /// The media operations recovery issued (when asked for and recovery succeeded).
    pub recovery_ops: Option<Vec<LoggedOp>>,
}

/// Recovers `img` and judges the result, keeping the media operations recovery issued
/// when `log_recovery` (they are the crash points of a crash during recovery). Recovery
/// acks nothing, so states inside it are judged at the first crash's instant `t`.
pub fn evaluate_logged(
    rec: &Recording,
    img: NandImage,
    t: SimTime,
    log_recovery: bool,
) -> Evaluation {
    let mut recovery_ops = None;
    let findings = judge_recovery(rec, img, t, log_recovery, &mut recovery_ops);
    Evaluation {
        findings,
        recovery_ops,
    }
}

fn judge_recovery(
    rec: &Recording,
    img: NandImage,
    t: SimTime,
    log_recovery: bool,
    recovery_ops: &mut Option<Vec<LoggedOp>>,
) -> Vec<oracle::Finding> {
    let f = |what: String| vec![oracle::Finding { lpn: None, what }];
    let dcfg = rec.cfg.device();
    let mut nand = Nand::from_image(img, rec.cfg.nand.timing.clone());
    if log_recovery {
        nand.enable_log();
    }
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
    if log_recovery {
        // Taking the log also stops logging, so the checks below add nothing to it.
        *recovery_ops = Some(dev.core.nand.take_log());
    }
    if let Err(e) = dev.check_invariants() {
        return f(format!("recovered device is inconsistent: {e}"));
    }
    // The free blocks recovery and the first writes after it need were reserved before the
    // crash; a recovery that leaves the device short of them has lost its service even if
    // no acked write was lost (`ssd::Device::check_reserve`).
    if let Err(e) = dev.check_reserve() {
        return f(format!(
            "recovered device is short of its free-block reserve: {e}"
        ));
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
    let mut o = Options::new(mode, seed);
    o.only = only.map(|k| vec![k]);
    check_with(rec, &o, &mut |_| false)
}

/// Checks a recording as `opts` says. `stop` is asked after every state and ends the check
/// early (with `stopped` set) when it returns true.
pub fn check_with(
    rec: &Recording,
    opts: &Options,
    stop: &mut dyn FnMut(&CheckReport) -> bool,
) -> Result<CheckReport, String> {
    let mut rep = CheckReport {
        ops: rec.ops.len(),
        ..Default::default()
    };
    let bounds = boundaries(rec);
    let keep_all = opts.only.is_some();
    let only_first = opts.only.as_ref().and_then(|o| o.first().copied());
    let only_nested = opts.only.as_ref().and_then(|o| o.get(1).copied());
    match opts.mode {
        Mode::Exhaustive { max_in_flight } => {
            let too_many = too_many(max_in_flight);
            let mut sweep = crashstates::Sweep::one(&rec.base, &rec.ops);
            let seen = crashstates::for_each_state(
                &mut sweep,
                &bounds,
                max_in_flight,
                &too_many,
                &mut |sweep, s| {
                    if only_first.is_some_and(|o| o != s.index) {
                        return Ok(true);
                    }
                    let img = sweep.state_image_one(&s)?;
                    let state = CrashState::from(s);
                    let t = state.t;
                    let want_log = opts.double;
                    let ev = evaluate_logged(rec, img.clone(), t, want_log);
                    if only_nested.is_none() {
                        note(
                            &mut rep,
                            state.clone(),
                            vec![],
                            String::new(),
                            ev.findings,
                            keep_all,
                            false,
                        );
                    }
                    // A recovery that wrote nothing has no crash point of its own.
                    if let (true, Some(rops)) =
                        (opts.double, ev.recovery_ops.filter(|r| !r.is_empty()))
                    {
                        rep.recovery_ops_max = rep.recovery_ops_max.max(rops.len());
                        let mut rs = crashstates::Sweep::one(&img, &rops);
                        let rb = crashstates::recovery_instants(&rops);
                        crashstates::for_each_state(
                            &mut rs,
                            &rb,
                            max_in_flight,
                            &too_many,
                            &mut |rs, inner| {
                                if only_nested.is_some_and(|o| o != inner.index) {
                                    return Ok(true);
                                }
                                let img2 = rs.state_image_one(&inner)?;
                                let inner = CrashState::from(inner);
                                let f = evaluate(rec, img2, t);
                                let text =
                                    describe_ops(&rops, &rec.base, &inner, "inside recovery: ");
                                note(
                                    &mut rep,
                                    state.clone(),
                                    vec![inner],
                                    text,
                                    f,
                                    keep_all,
                                    true,
                                );
                                rep.stopped = stop(&rep);
                                Ok(!rep.stopped)
                            },
                        )?;
                    }
                    rep.stopped |= stop(&rep);
                    Ok(!rep.stopped)
                },
            )?;
            rep.max_in_flight_seen = seen;
        }
        Mode::Random { schedules } => {
            let root = Rng::new(opts.seed).fork("crash-schedules");
            let lo = opts.first_schedule;
            let hi = lo.saturating_add(schedules);
            let range = match only_first {
                Some(o) if !(lo..hi).contains(&o) => return Ok(rep),
                Some(o) => o..o + 1,
                None => lo..hi,
            };
            crashstates::for_each_random(
                std::slice::from_ref(&rec.base),
                &rec.ops,
                rec.ops.len(),
                &bounds,
                &root,
                range,
                RANDOM_CHUNK,
                &mut |sweep, s| {
                    rep.max_in_flight_seen = rep.max_in_flight_seen.max(s.in_flight.len());
                    let img = sweep.state_image_one(&s)?;
                    random_chain(
                        rec,
                        opts,
                        img,
                        CrashState::from(s),
                        &root,
                        keep_all,
                        &mut rep,
                    )?;
                    if stop(&rep) {
                        rep.stopped = true;
                        return Ok(false);
                    }
                    Ok(true)
                },
            )?;
        }
    }
    Ok(rep)
}

/// Evaluates random schedule `state` and, in double mode, up to two crashes inside the
/// recoveries that follow it.
fn random_chain(
    rec: &Recording,
    opts: &Options,
    img: NandImage,
    state: CrashState,
    root: &Rng,
    keep_all: bool,
    rep: &mut CheckReport,
) -> Result<(), String> {
    let t = state.t;
    let ev = evaluate_logged(rec, img.clone(), t, opts.double);
    let failed = !ev.findings.is_empty();
    note(
        rep,
        state.clone(),
        vec![],
        String::new(),
        ev.findings,
        keep_all,
        false,
    );
    if !opts.double || failed {
        return Ok(());
    }
    let mut r = root.fork(&format!("{}/double", state.index));
    let mut nested: Vec<CrashState> = Vec::new();
    let mut text = String::new();
    let mut base = img;
    let mut rops = ev.recovery_ops.unwrap_or_default();
    for depth in 0..2 {
        rep.recovery_ops_max = rep.recovery_ops_max.max(rops.len());
        if rops.is_empty() || (depth > 0 && !r.chance(0.5)) {
            break;
        }
        let rb = crashstates::recovery_instants(&rops);
        let (inner, img2) =
            crashstates::draw_state(vec![base.clone()], &rops, rops.len(), &rb, &mut r, depth)?;
        let (inner, img2) = (CrashState::from(inner), only_image(img2)?);
        text.push_str(&describe_ops(
            &rops,
            &rec.base,
            &inner,
            if depth == 0 {
                "inside recovery: "
            } else {
                "inside the second recovery: "
            },
        ));
        nested.push(inner);
        let ev2 = evaluate_logged(rec, img2.clone(), t, depth == 0);
        let failed = !ev2.findings.is_empty();
        note(
            rep,
            state.clone(),
            nested.clone(),
            text.clone(),
            ev2.findings,
            keep_all,
            true,
        );
        if failed {
            break;
        }
        base = img2;
        rops = ev2.recovery_ops.unwrap_or_default();
    }
    Ok(())
}

fn note(
    rep: &mut CheckReport,
    state: CrashState,
    nested: Vec<CrashState>,
    nested_text: String,
    findings: Vec<oracle::Finding>,
    keep: bool,
    is_nested: bool,
) {
    rep.states += 1;
    if is_nested {
        rep.nested_states += 1;
    }
    if !findings.is_empty() {
        rep.violations += 1;
    }
    if (!findings.is_empty() && rep.first.len() < KEEP) || keep {
        rep.first.push(Violation {
            state,
            nested,
            nested_text,
            findings,
        });
    }
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

/// Describes a state of a recovery's operation stream (its ops are not the recording's).
fn describe_ops(ops: &[LoggedOp], base: &NandImage, s: &CrashState, prefix: &str) -> String {
    let g = base.geometry();
    let op = |i: usize| {
        let o = &ops[i];
        let what = match &o.kind {
            OpKind::Program { ppa, .. } => format!("program {}", g.addr(*ppa)),
            OpKind::PartialProgram { ppa, .. } => format!("partial program {}", g.addr(*ppa)),
            OpKind::Erase { block } => format!("erase block {}", block.0),
            OpKind::SetMode { block, mode } => format!("set block {} {}", block.0, mode.name()),
        };
        format!("#{i} {what} [{}..{}]", o.start, o.end)
    };
    let mut out = format!(
        "{prefix}state {} at T={} of recovery's {} operations\n",
        s.index,
        s.t,
        ops.len()
    );
    for &i in &s.in_flight {
        let fate = if s.persisted.contains(&i) {
            "persisted".to_string()
        } else if let Some((_, k)) = s.torn.filter(|(j, _)| *j == i) {
            format!("torn ({k:?})")
        } else {
            "lost".to_string()
        };
        out.push_str(&format!("  in flight: {} -> {fate}\n", op(i)));
    }
    out
}

/// Crash states of any tape of media operations, for checkers above the device (a real
/// database's, `crates/sqlite`): every state at the instants `extra_bounds` and the
/// operations' own starts and ends (exhaustive), or `schedules` states drawn from `seed`
/// (random: instant, in-flight subset and torn operation drawn as `check_with` draws
/// them). `f` gets each state and its surviving image and returns false to stop. Returns
/// the most operations in flight at once.
pub fn for_each_crash_image(
    base: &NandImage,
    ops: &[LoggedOp],
    extra_bounds: &[SimTime],
    mode: Mode,
    seed: u64,
    f: &mut dyn FnMut(&CrashState, NandImage) -> Result<bool, String>,
) -> Result<usize, String> {
    let bounds =
        crashstates::instants(crashstates::op_times(ops).chain(extra_bounds.iter().copied()));
    match mode {
        Mode::Exhaustive { max_in_flight } => {
            let mut sweep = crashstates::Sweep::one(base, ops);
            crashstates::for_each_state(
                &mut sweep,
                &bounds,
                max_in_flight,
                &too_many(max_in_flight),
                &mut |sweep, s| {
                    let img = sweep.state_image_one(&s)?;
                    f(&CrashState::from(s), img)
                },
            )
        }
        Mode::Random { schedules } => {
            let root = Rng::new(seed).fork("crash-schedules");
            crashstates::for_each_random(
                std::slice::from_ref(base),
                ops,
                ops.len(),
                &bounds,
                &root,
                0..schedules,
                RANDOM_CHUNK,
                &mut |sweep, s| {
                    let img = sweep.state_image_one(&s)?;
                    f(&CrashState::from(s), img)
                },
            )
        }
    }
}
