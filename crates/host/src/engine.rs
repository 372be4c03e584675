//! The engine: clients as state machines over one event queue, the lock manager, the
//! buffer pool, and a recovery strategy, driving one emulated SSD.
//!
//! A client runs one transaction at a time: for each record operation it takes the lock
//! (page or record, shared for reads, exclusive for writes), fetches the page (a hit, or a
//! miss that may first write back the LRU victim and then reads the page's device pages),
//! and applies the operation to the buffered page. After its last operation it commits, or
//! rolls back if the workload says so. A client waits only on events: a lock grant, the
//! completion of its I/O, the ack of its commit or rollback, think time or a restart
//! backoff. Device commands apply their state change when issued and return when they
//! complete; the engine schedules the client's next step then.
//!
//! Deadlocks: with `detect`, each time a transaction blocks the wait-for graph is searched
//! for a cycle through it; the youngest member (`deadlock.rs`) is rolled back and restarts
//! after a random backoff, and the search repeats until no cycle remains. With `wait-die`
//! a requester younger than anyone it would wait for dies instead (restarts with its age).
//! The graph's edges are the lock manager's and the strategy's admission waits
//! (`Admit::Block`, Flag Commit Algorithm 1 line 16: an updater beyond max_c waits for the
//! page's current updaters); such a waiter is woken when one of those ends.
//! A transaction that finds no frame it may evict (no-steal, SCC/BPCC pinning, every frame
//! waiting for its read)
//! restarts as well.
//!
//! Locks are released at the commit's ack or when the rollback is complete (strict 2PL), so
//! two transactions whose commits are in flight together never wrote a common record —
//! which is what lets the oracle replay committed transactions in commit-issue order.
//!
//! Determinism: the event queue orders equal instants by insertion; random streams are
//! forked from the seed by name; hash maps are only looked up, never iterated.

use crate::buffer::{Frame, Pool, Unbuilt};
pub use crate::data::CommitRec;
use crate::data::{Effect, Layout, PageNo, TagTable};
use crate::hooks::{Admit, Strategy, StrategyInfo, WriteBack};
use crate::lock::{Acquire, LockKey, LockManager, Mode};
use crate::metrics::{HostMetrics, HostStats};
pub use crate::state::{data_lpn, data_lpns, Core};
// Old paths of what moved above the strategies (`entry`): names only, no use.
pub use crate::entry::{
    device_pages_needed, device_pages_needed_with, log_device_config, run, run_acked,
    run_tier_file, run_traced, run_with_snapshot, uses_flash_device,
};
use crate::{DeadlockPolicy, HostConfig, HostError, LockLevel, Result};
use sim::{Histogram, Rng, SimTime, TxnId};
use ssd::Device;
use std::sync::Arc;
use workload::db::{RecOp, TxnSource, TxnSpec};

/// The outcome of a fetch.
pub enum Fetch {
    /// The page is in `frame`; usable from the given instant.
    Ready(u32, SimTime),
    /// No frame may be evicted.
    NoRoom,
}

/// Brings `page` into the pool for client `c` (`count`: whether this access counts in the
/// hit/miss statistics). A frame whose read is still in flight is not evicted (evicting it
/// let clients steal each other's frames forever on a tiny pool).
pub fn fetch(
    core: &mut Core,
    strat: &mut dyn Strategy,
    c: u32,
    page: PageNo,
    now: SimTime,
    count: bool,
) -> Result<Fetch> {
    fetch_for(core, strat, c, page, None, now, count)
}

/// `fetch` for an access to record `slot` of `page` (`None`: the whole page): the strategy
/// sees the slot on a miss (`TierHooks::read_page_for`) and on a hit (`TierHooks::on_hit`),
/// so record-level PCMLogging can serve a record from PCM (§3.3).
pub fn fetch_for(
    core: &mut Core,
    strat: &mut dyn Strategy,
    c: u32,
    page: PageNo,
    slot: Option<u16>,
    now: SimTime,
    count: bool,
) -> Result<Fetch> {
    if let Some(f) = core.pool.find(page) {
        core.pool.touch(f);
        if count {
            core.stats.buffer_hits += 1;
        }
        let ready = now.max(core.pool.frame(f).ready_at);
        let ready = match strat.tier() {
            Some(t) => t.on_hit(core, f, slot, ready)?,
            None => ready,
        };
        return Ok(Fetch::Ready(f, ready));
    }
    if count {
        core.stats.buffer_misses += 1;
    }
    let mut ready = now;
    if !core.pool.has_free() {
        let choice = {
            let s: &dyn Strategy = strat;
            core.pool
                .choose_victim(|f| f.ready_at <= now && (!f.dirty || s.evictable(f)))
        };
        match choice {
            crate::lru::Choice::Nothing => return Ok(Fetch::NoRoom),
            crate::lru::Choice::Evict(f) => {
                let fr = core.pool.remove(f);
                if fr.dirty {
                    ready = ready.max(strat.write_back(core, fr, now)?);
                }
            }
        }
    }
    // The values are built when first changed (`buffer::Unbuilt`): most fetched pages are
    // only read.
    let (from, lsn) = match strat.own_page(c, page) {
        Some(img) => {
            let lsn = img.lsn;
            (Unbuilt::Image(img), lsn)
        }
        None if core.lazy_disk => {
            debug_assert!(core.disk[page.0 as usize]
                .as_ref()
                .is_none_or(|d| !d.1.values.is_empty()));
            (Unbuilt::Disk, 0)
        }
        None => match &core.disk[page.0 as usize] {
            Some((_, img)) => (Unbuilt::Image(img.clone()), img.lsn),
            None => {
                if !core.pool.has_layout() {
                    core.pool.set_layout(Arc::new(core.layout.clone()));
                }
                (Unbuilt::Loaded, 0)
            }
        },
    };
    let by_record = strat
        .tier()
        .and_then(|t| t.read_page_for(core, page, slot, now));
    ready = ready.max(match by_record {
        Some(r) => r?,
        None => strat.read_page(core, page, now)?,
    });
    let f = core.pool.install(Frame::unbuilt(page, from, lsn, ready));
    Ok(Fetch::Ready(f, ready))
}

/// What `Engine::build` takes from above the core (`entry`): the strategy registry and a
/// fact about the configuration that depends on the PCM family's external store.
pub(crate) struct Above {
    pub lookup: fn(&str) -> Result<&'static StrategyInfo>,
    pub uses_flash_device: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Running,
    WaitLock,
    WaitIo,
    /// Blocked by the strategy's admission (`Admit::Block`) until a client of
    /// `Client::blocked_by` ends its transaction.
    WaitAdmit,
    /// Spending `op_cpu_ns` on an operation.
    Cpu,
    Finishing,
    Backoff,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Commit,
    /// The workload's rollback.
    Rollback,
    /// Deadlock victim, wait-die, no buffer frame: roll back and run again.
    Restart,
}

struct Client {
    phase: Phase,
    spec: Option<Arc<TxnSpec>>,
    txn: TxnId,
    started: SimTime,
    first_start: SimTime,
    /// Wait-die age (kept across restarts); also the buffer's priority (`no_room`).
    age: (SimTime, TxnId),
    /// The transaction's number (`Core::txn_number`), kept across restarts.
    number: u64,
    /// Wait-die: the older transaction (client, attempt) this one died for. Its restart
    /// waits until that attempt has ended (`on_finished`), instead of retrying into the
    /// same conflict after a random backoff.
    restart_after: Option<(u32, TxnId)>,
    /// In `Backoff` with no wake-up scheduled: waiting for `restart_after` to end.
    parked: bool,
    /// In `WaitAdmit`: the clients it waits for (wait-for edges beside the lock manager's).
    blocked_by: Vec<u32>,
    op: usize,
    /// The last `TxnSpec::bind` operation settled in this attempt (its lock held).
    bound_at: Option<usize>,
    epoch: u64,
    /// The next fetch repeats one that waited (not counted again).
    retry: bool,
    ending: End,
    commit_issue: SimTime,
}

#[derive(Clone, Copy, Debug)]
struct Ev {
    client: u32,
    epoch: u64,
    finished: bool,
}

/// What a run leaves behind.
pub struct HostRun {
    pub metrics: HostMetrics,
    /// The engine at the end of the run. With `host.measure_recovery` (and the engine's
    /// device restart, not a strategy's own), the device's medium was handed to the restart
    /// (`measure_recovery`): its FTL state and statistics are the run's, its NAND has no
    /// pages; unless the run was recorded or the medium is an image file, which keep theirs.
    pub core: Core,
    pub commits: Vec<CommitRec>,
    /// The medium before the run (when recording).
    pub base_image: Option<media::NandImage>,
    /// The log device's medium before the run (when recording with a log device).
    pub log_base_image: Option<media::NandImage>,
    /// The device commands, in time order (when captured).
    pub trace: Option<Vec<workload::txn::Timed>>,
    /// PCM strategies: their PCM and disk write logs (when recording).
    pub tier: Option<crate::hooks::TierLog>,
    /// TPC-C: the calls the run made on its source (when recording; `source::Journaled`),
    /// from which a run on a recovered medium takes up the generator's committed view.
    pub journal: Option<Vec<crate::source::GenEvent>>,
}

pub struct Engine {
    pub core: Core,
    pub(crate) strat: Box<dyn Strategy>,
    source: Box<dyn TxnSource>,
    /// The journal of `source`'s calls (`source::Journaled`; recorded TPC-C runs).
    pub(crate) journal: Option<std::sync::Arc<std::sync::Mutex<Vec<crate::source::GenEvent>>>>,
    locks: LockManager,
    clients: Vec<Client>,
    queue: sim::EventQueue<Ev>,
    rng_source: Rng,
    rng_backoff: Rng,
    rng_think: Rng,
    next_txn: u64,
    handed_out: u64,
    pub now: SimTime,
    commits: Vec<CommitRec>,
    record: bool,
    hist_txn: Histogram,
    hist_commit: Histogram,
    base_image: Option<media::NandImage>,
    log_base_image: Option<media::NandImage>,
    /// The log device's counters when the run started.
    base_log: Option<(media::NandCounters, ssd::FtlStats)>,
    base_nand: media::NandCounters,
    base_ftl: ssd::FtlStats,
    base_busy_ns: u64,
    /// When the device is first idle: the run starts here (zero on a fresh device; later on
    /// one aged before the run, whose ageing is not part of the run's time).
    start: SimTime,
    /// Where commit issues and acks are reported as they happen (`acklog`).
    ack_sink: Option<crate::acklog::AckSink>,
    /// `set_snapshot_at`: when this many transactions have been handed out and a client asks
    /// for the next, the metrics so far are kept in `snapshot`.
    snapshot_at: Option<u64>,
    snapshot: Option<HostMetrics>,
}

/// Refuses a database that does not fit the device's `logical_pages`, from the schema's
/// page counts alone: before the layout, whose loaded map has an entry per page the
/// database may grow to (`host.tpcc.max_txns = 2^32` made that 15.7 s and 1.5 GB before
/// this refusal).
pub fn check_fits(
    cfg: &HostConfig,
    source: &dyn TxnSource,
    parts: u32,
    logical_pages: u32,
) -> Result<()> {
    let pages = source.schema().pages_max();
    let need = pages.saturating_mul(u64::from(parts));
    if need > u64::from(logical_pages) {
        // What sizes the database: a recorded trace's relations and blocks, or a generator's
        // settings with its insert regions (`max_txns`).
        let (key, sized_by) = match cfg.workload.as_str() {
            "trace" => (
                "host.trace.path".to_string(),
                "the trace's relations and blocks size them".to_string(),
            ),
            w => (
                format!("host.{w}"),
                format!("insert regions included: host.{w}.max_txns sizes them"),
            ),
        };
        return Err(HostError::Config {
            key,
            reason: format!(
                "the database needs {need} device pages ({pages} DB pages of {parts} parts, {sized_by}) but the device has {logical_pages}; use a smaller database or a larger device"
            ),
        });
    }
    Ok(())
}

/// Device pages a DB page spans on a device with `flash_page_bytes` pages.
pub fn parts_for(cfg: &HostConfig, flash_page_bytes: u32) -> Result<u32> {
    if flash_page_bytes >= cfg.page_bytes {
        return Ok(1);
    }
    if !cfg.page_bytes.is_multiple_of(flash_page_bytes) {
        return Err(HostError::Config {
            key: "host.page_bytes".into(),
            reason: format!(
                "a {} B DB page is not a whole number of {flash_page_bytes} B flash pages",
                cfg.page_bytes
            ),
        });
    }
    Ok(cfg.page_bytes / flash_page_bytes)
}

impl Engine {
    /// The engine for `cfg`. What it needs from above the core comes in `above`: the
    /// strategy registry, looked up here by `host.strategy` (after the checks before it, so
    /// a bad configuration is refused with the same message in the same order as ever), and
    /// whether the configuration uses the flash device (`entry::uses_flash_device`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        cfg: &HostConfig,
        device: Device,
        log_device: Option<Device>,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        tier: Option<media::tier_file::TierSink>,
        resume: Option<(WriteBack, u64)>,
        above: Above,
    ) -> Result<Engine> {
        cfg.validate()?;
        if tier.is_some() && !crate::acklog::uses_pcm_tier(&cfg.strategy) {
            return Err(HostError::Config {
                key: "host.strategy".into(),
                reason: format!(
                    "{} keeps its database on the flash device; a tier image is for the PCM strategies",
                    cfg.strategy
                ),
            });
        }
        if cfg.separate_log() != log_device.is_some() {
            return Err(HostError::Config {
                key: "host.log_device".into(),
                reason: format!(
                    "\"{}\" but the engine was given {} log device",
                    cfg.log_device,
                    if log_device.is_some() { "a" } else { "no" }
                ),
            });
        }
        let info = (above.lookup)(&cfg.strategy)?;
        (info.check)(cfg, device.info())?;
        let mut cfg = cfg.clone();
        if cfg.lock_level == crate::LockLevel::Auto {
            cfg.lock_level = info.lock_level;
        }
        let cfg = &cfg;
        source
            .schema()
            .validate()
            .map_err(|e| HostError::Workload(e.what))?;
        let parts = parts_for(cfg, device.core.geo.page_bytes)?;
        // A PCM strategy over a disk or the Table 2 SSD model leaves the flash device unused.
        if above.uses_flash_device {
            check_fits(cfg, source.as_ref(), parts, device.logical_pages())?;
        }
        let layout = Layout::from_source(source.as_ref(), parts);
        let mut device = device;
        let mut log_device = log_device;
        let mut start = device.barrier(SimTime::ZERO);
        let mut base_image = None;
        let mut log_base_image = None;
        if record {
            base_image = Some(device.core.nand.image().clone());
            device.core.nand.enable_log();
        }
        if let Some(l) = log_device.as_mut() {
            start = start.max(l.barrier(SimTime::ZERO));
            if record {
                log_base_image = Some(l.core.nand.image().clone());
                l.core.nand.enable_log();
            }
        }
        let pages = layout.pages as usize;
        let mut tags = TagTable::new(record || cfg.measure_recovery);
        // Only the recovery measured at the end reads the table: forget what the medium no
        // longer holds (`Core::prune_tags`). A recorded run keeps all (the crash checker
        // recovers from every prefix), and so do IPA and IPL, whose appended deltas and log
        // sectors name tags inside their bytes, and the PCM strategies (their restart reads
        // their own media, and their flash device may be the external store's).
        tags.prunable =
            !record && cfg.update == "out-of-place" && !crate::acklog::uses_pcm_tier(&cfg.strategy);
        let mut core = Core {
            cfg: cfg.clone(),
            layout,
            device,
            log_device,
            pool: Pool::new(cfg.buffer_frames),
            tags,
            disk: sim::mem::huge_vec(pages, None),
            lazy_disk: false,
            disk_values_taken: 0,
            stats: HostStats::default(),
            trace: None,
            net: Default::default(),
            also_read: Default::default(),
            also_read_pages: 0,
            txn_number: 0,
            tier_sink: None,
            resume: None,
        };
        core.pool.reserve_pages(core.layout.pages);
        core.tier_sink = tier;
        let mut next_txn = 1;
        if let Some((wb, n)) = resume {
            let resumable = wb.resume.is_some();
            if !resumable {
                return Err(HostError::Config {
                    key: "host.strategy".into(),
                    reason: format!(
                        "{}'s restart does not write its results back: the engine cannot start on its recovered medium",
                        cfg.strategy
                    ),
                });
            }
            let keep = core.tags.keep;
            core.tags = wb.tags;
            core.tags.keep = keep;
            core.tags.prunable = false;
            for (p, d) in wb.disk {
                if let Some(e) = core.disk.get_mut(p.0 as usize) {
                    *e = Some(d);
                }
            }
            core.resume = wb.resume;
            start = start.max(wb.start);
            next_txn = n.max(1);
        }
        let strat = (info.create)(cfg, &mut core)?;
        if core.resume.is_some() {
            return Err(HostError::Config {
                key: "host.strategy".into(),
                reason: format!(
                    "{} cannot start on a recovered medium (its create does not take up a restart's state)",
                    cfg.strategy
                ),
            });
        }
        if core.tier_sink.is_some() {
            // `create` attaches the sink to the PCM and the disk and takes it: one left
            // here was not attached, and the run would write nothing to its image.
            return Err(HostError::Config {
                key: "host.strategy".into(),
                reason: format!("{} did not attach its PCM tier to the image", cfg.strategy),
            });
        }
        let rng = Rng::new(seed).fork("host");
        let clients = (0..cfg.clients)
            .map(|_| Client {
                phase: Phase::Idle,
                spec: None,
                txn: TxnId(0),
                started: SimTime::ZERO,
                first_start: SimTime::ZERO,
                age: (SimTime::ZERO, TxnId(0)),
                number: 0,
                restart_after: None,
                parked: false,
                blocked_by: Vec::new(),
                op: 0,
                bound_at: None,
                epoch: 0,
                retry: false,
                ending: End::Commit,
                commit_issue: SimTime::ZERO,
            })
            .collect();
        let base_nand = core.device.core.nand.counters();
        let base_ftl = core.device.core.stats;
        let base_busy_ns = core.device.core.nand.array_busy_ns();
        let base_log = core
            .log_device
            .as_ref()
            .map(|l| (l.core.nand.counters(), l.core.stats));
        Ok(Engine {
            core,
            strat,
            source,
            journal: None,
            locks: LockManager::new(cfg.clients),
            clients,
            queue: sim::EventQueue::new(),
            rng_source: rng.fork("source"),
            rng_backoff: rng.fork("backoff"),
            rng_think: rng.fork("think"),
            next_txn,
            handed_out: 0,
            now: start,
            commits: Vec::new(),
            record,
            hist_txn: Histogram::new(),
            hist_commit: Histogram::new(),
            base_image,
            log_base_image,
            base_log,
            base_nand,
            base_ftl,
            base_busy_ns,
            start,
            ack_sink: None,
            snapshot_at: None,
            snapshot: None,
        })
    }

    /// Keeps the metrics of the run as they are when `n` transactions have been handed out
    /// and a client gets one more (`take_snapshot`): the instant a run of `n`
    /// transactions would first turn a client away, so everything before it is exactly
    /// that run's prefix (same stream, same schedule). A warm-up measured inside the run
    /// itself, instead of by a second run of the first `n` transactions.
    pub fn set_snapshot_at(&mut self, n: u64) {
        self.snapshot_at = Some(n);
    }

    /// The metrics kept by `set_snapshot_at` (None if the run never reached that point).
    pub fn take_snapshot(&mut self) -> Option<HostMetrics> {
        self.snapshot.take()
    }

    /// Reports every commit to `sink`: its issue just before the strategy's `commit`, its
    /// ack when the ack instant is reached, before the locks are released (`acklog`).
    pub fn set_ack_sink(&mut self, sink: crate::acklog::AckSink) {
        self.ack_sink = Some(sink);
    }

    fn report_ack(&mut self, ev: crate::acklog::AckEv, c: u32) -> Result<()> {
        let Some(sink) = self.ack_sink.as_mut() else {
            return Ok(());
        };
        let cl = &self.clients[c as usize];
        let Some(spec) = &cl.spec else {
            return Ok(());
        };
        let line = crate::acklog::line(ev, cl.txn, &self.core.layout, spec);
        sink(&line).map_err(|e| HostError::Output(format!("ack log: {e}")))
    }

    /// Captures the device commands of the run as a `txn` trace (`HostRun::trace`).
    pub fn capture_trace(&mut self) {
        self.core.trace = Some(Vec::new());
    }

    fn wake(&mut self, c: u32, at: SimTime) {
        let epoch = self.clients[c as usize].epoch;
        self.queue.push(
            at,
            Ev {
                client: c,
                epoch,
                finished: false,
            },
        );
    }

    /// Runs every transaction to completion.
    pub fn run(&mut self) -> Result<()> {
        for c in 0..self.clients.len() as u32 {
            self.wake(c, self.start);
        }
        while let Some((t, ev)) = self.queue.pop() {
            self.now = t;
            self.prefetch_client_spec();
            let cl = &self.clients[ev.client as usize];
            if ev.epoch != cl.epoch {
                continue;
            }
            if ev.finished {
                self.on_finished(ev.client, t)?;
            } else {
                self.on_wake(ev.client, t)?;
            }
            self.strat.maintain(&mut self.core, t)?;
            if self.core.tags.retain_due() {
                self.core.prune_tags();
            }
            self.prefetch_client_op();
        }
        if let Some(c) = self.clients.iter().position(|c| c.phase != Phase::Done) {
            return Err(HostError::Stuck(format!(
                "client {c} is stuck in {:?} with nothing left to happen (holding {} locks)",
                self.clients[c].phase,
                self.locks.held_count(c as u32)
            )));
        }
        #[cfg(debug_assertions)]
        {
            self.locks.check_invariants().map_err(HostError::Stuck)?;
            self.core
                .pool
                .check_invariants()
                .map_err(HostError::Stuck)?;
            self.core.check_disk().map_err(HostError::Stuck)?;
        }
        Ok(())
    }

    /// First half of the next event's prefetch (hints only): the header of the transaction
    /// its client runs. A client's transaction is cold when it is woken (49 other clients
    /// ran since), and `advance` starts with a chain of dependent loads through it (spec,
    /// ops, op, page) — 40 % of `Engine::run` before.
    #[inline]
    fn prefetch_client_spec(&self) {
        if let Some(n) = self.queue.peek().map(|(_, e)| e.client) {
            let cl = &self.clients[n as usize];
            if let Some(spec) = &cl.spec {
                sim::mem::prefetch(&**spec);
            }
        }
    }

    /// Second half, at the end of the current event (the spec's header has arrived by
    /// then): the next event's current operation.
    #[inline]
    fn prefetch_client_op(&self) {
        if let Some(n) = self.queue.peek().map(|(_, e)| e.client) {
            let cl = &self.clients[n as usize];
            if let Some(op) = cl.spec.as_ref().and_then(|s| s.ops.get(cl.op)) {
                sim::mem::prefetch(op);
            }
        }
    }

    fn on_wake(&mut self, c: u32, now: SimTime) -> Result<()> {
        if self.snapshot_at == Some(self.handed_out)
            && self.handed_out < self.core.cfg.transactions
            && self.snapshot.is_none()
            && self.clients[c as usize].phase == Phase::Idle
        {
            // Wall time is not part of a snapshot (it would make the output differ).
            self.snapshot = Some(self.metrics(self.core.device.info().name, 0.0));
        }
        let cl = &mut self.clients[c as usize];
        match cl.phase {
            Phase::Idle => {
                if self.handed_out >= self.core.cfg.transactions {
                    cl.phase = Phase::Done;
                    return Ok(());
                }
                self.handed_out += 1;
                let spec = self.source.next_txn(c, &mut self.rng_source);
                spec.validate(self.source.schema())
                    .map_err(|e| HostError::Workload(e.what))?;
                let cl = &mut self.clients[c as usize];
                cl.spec = Some(Arc::new(spec));
                cl.first_start = now;
                self.start_attempt(c, now, true)?;
            }
            Phase::Backoff => self.start_attempt(c, now, false)?,
            Phase::WaitIo => {
                cl.phase = Phase::Running;
                cl.retry = true;
            }
            Phase::Cpu => cl.phase = Phase::Running,
            Phase::Running => {}
            Phase::WaitLock | Phase::WaitAdmit | Phase::Finishing | Phase::Done => return Ok(()),
        }
        self.advance(c, now)
    }

    fn start_attempt(&mut self, c: u32, now: SimTime, fresh: bool) -> Result<()> {
        let txn = TxnId(self.next_txn);
        self.next_txn += 1;
        let cl = &mut self.clients[c as usize];
        cl.txn = txn;
        cl.started = now;
        if fresh {
            cl.age = (now, txn);
            cl.number = self.handed_out;
        }
        cl.op = 0;
        cl.bound_at = None;
        cl.retry = false;
        cl.phase = Phase::Running;
        self.core.txn_number = cl.number;
        self.strat.begin(&mut self.core, c, txn, now)
    }

    fn lock_key(&self, op: &RecOp) -> (LockKey, Mode) {
        let rid = op.rid();
        let key = match self.core.cfg.lock_level {
            LockLevel::Page | LockLevel::Auto => LockKey::Page(self.core.layout.page_of(rid)),
            LockLevel::Record => LockKey::Record(rid),
        };
        (
            key,
            if op.writes() {
                Mode::Exclusive
            } else {
                Mode::Shared
            },
        )
    }

    /// Runs client `c` until it has to wait.
    fn advance(&mut self, c: u32, now: SimTime) -> Result<()> {
        if self.clients[c as usize].phase != Phase::Running {
            return Ok(());
        }
        // One reference for the whole loop: the transaction cannot change inside it (every
        // path that ends it returns). Cloning the `Arc` per operation was 7 % of the host
        // bench: a locked read-modify-write that also waits for the loads in flight.
        let Some(mut spec) = self.clients[c as usize].spec.clone() else {
            return Err(HostError::Stuck(
                "internal: running without a transaction".into(),
            ));
        };
        loop {
            let cl = &self.clients[c as usize];
            if cl.phase != Phase::Running {
                return Ok(());
            }
            let i = cl.op;
            if i == spec.ops.len() {
                let end = if spec.rollback {
                    End::Rollback
                } else {
                    End::Commit
                };
                return self.end_txn(c, now, end);
            }
            let op = &spec.ops[i];
            // Start the page-table loads of this and the next operation's page now, so they
            // overlap the lock-table lookup (each a likely cache miss; hints only).
            self.core.prefetch_page(self.core.layout.page_of(op.rid()));
            if let Some(next) = spec.ops.get(i + 1) {
                self.core
                    .prefetch_page(self.core.layout.page_of(next.rid()));
            }
            let (key, mode) = self.lock_key(op);
            if self.locks.acquire(c, key, mode) == Acquire::Waiting {
                self.core.stats.lock_waits += 1;
                self.clients[c as usize].phase = Phase::WaitLock;
                return self.on_block(c, now);
            }
            if self.clients[c as usize].bound_at != Some(i)
                && spec.bind.binary_search(&(i as u32)).is_ok()
            {
                // The value this operation reads is settled now that its lock is held
                // (`TxnSource::bind`); the source may rewrite this and later operations.
                let before = op.clone();
                drop(spec);
                let cl = &mut self.clients[c as usize];
                let Some(mut own) = cl.spec.take() else {
                    return Err(HostError::Stuck(
                        "internal: running without a transaction".into(),
                    ));
                };
                let s = Arc::make_mut(&mut own);
                self.source.bind(s, i);
                // `bind` rewrites `ops[i..]` only (its contract); the rest was validated.
                s.validate_from(self.source.schema(), i)
                    .map_err(|e| HostError::Workload(e.what))?;
                // Unchanged: carried out below. Rewritten: its lock is taken next round and,
                // if it is still a bind point, it is settled again under that lock.
                if s.ops.get(i) == Some(&before) {
                    cl.bound_at = Some(i);
                }
                cl.spec = Some(own.clone());
                spec = own;
                continue;
            }
            let page = self.core.layout.page_of(op.rid());
            let count = !self.clients[c as usize].retry;
            self.clients[c as usize].retry = false;
            let slot = Some(op.rid().slot);
            let (f, ready) = match fetch_for(
                &mut self.core,
                self.strat.as_mut(),
                c,
                page,
                slot,
                now,
                count,
            )? {
                Fetch::NoRoom => {
                    if self
                        .clients
                        .iter()
                        .filter(|x| x.phase != Phase::Idle && x.phase != Phase::Done)
                        .count()
                        <= 1
                    {
                        return Err(HostError::Config {
                            key: "host.buffer_frames".into(),
                            reason: format!(
                                "{} frames cannot hold one transaction's protected pages",
                                self.core.cfg.buffer_frames
                            ),
                        });
                    }
                    return self.no_room(c, now);
                }
                Fetch::Ready(f, t) => (f, t),
            };
            if ready > now {
                self.clients[c as usize].phase = Phase::WaitIo;
                self.wake(c, ready);
                return Ok(());
            }
            // The operation's effect on its slot, taken when it is carried out: `bind` may
            // rewrite the operations after its own up to once per bind point, so effects
            // derived ahead of time were derived again after each (New-Order's up to 16
            // bind points made that quadratic in its operations).
            if let Some(eff) = Effect::of(op) {
                match self.strat.admit(c, page, now) {
                    Admit::Yes => {}
                    Admit::Restart => return self.end_txn(c, now, End::Restart),
                    // Blocked (Flag Commit Algorithm 1 line 16): wait until one of `by` ends
                    // (`on_finished` wakes it), then try the operation again (the lock is
                    // still held; the refetch is not counted). The wait is in the wait-for
                    // graph, so a deadlock through it is resolved like a lock deadlock.
                    Admit::Block(by) => {
                        let cl = &mut self.clients[c as usize];
                        cl.phase = Phase::WaitAdmit;
                        cl.blocked_by = by;
                        return self.on_block(c, now);
                    }
                }
                let slot = op.rid().slot;
                let fr = self.core.frame_mut(f);
                let before = fr.values[slot as usize];
                let after = eff.apply(before);
                fr.values[slot as usize] = after;
                fr.dirty = true;
                fr.owner = Some(c);
                self.strat
                    .on_update(&mut self.core, c, f, slot, before, after, now)?;
                self.strat.on_op(&self.core, page, op);
                self.core.net.on_op(&self.core.layout, page, op, before);
            }
            self.clients[c as usize].op = i + 1;
            if self.core.cfg.op_cpu_ns > 0 {
                self.clients[c as usize].phase = Phase::Cpu;
                self.wake(c, now + self.core.cfg.op_cpu_ns);
                return Ok(());
            }
        }
    }

    /// `c` just blocked: resolve deadlocks.
    fn on_block(&mut self, c: u32, now: SimTime) -> Result<()> {
        match self.core.cfg.deadlock {
            DeadlockPolicy::WaitDie => {
                let me = self.clients[c as usize].age;
                let older = self
                    .waits_for(c)
                    .into_iter()
                    .filter(|&o| self.clients[o as usize].age < me)
                    .min_by_key(|&o| self.clients[o as usize].age);
                if let Some(o) = older {
                    // Rosenkrantz et al. (1978): the younger requester dies and is restarted
                    // with its original timestamp, so it ages and eventually wins; it is
                    // restarted once the older transaction it died for has ended (a restart
                    // before that would only die again on the same lock).
                    self.core.stats.wait_die_deaths += 1;
                    self.clients[c as usize].restart_after =
                        Some((o, self.clients[o as usize].txn));
                    self.kill(c, now)?;
                }
            }
            DeadlockPolicy::Detect => {
                while self.is_blocked(c) {
                    let Some(cycle) =
                        crate::deadlock::cycle_through(c, self.clients.len(), |x, out| {
                            self.waits_for_into(x, out)
                        })
                    else {
                        break;
                    };
                    let members: Vec<crate::deadlock::Member> = cycle
                        .iter()
                        .map(|&m| crate::deadlock::Member {
                            client: m,
                            txn: self.clients[m as usize].txn,
                            started: self.clients[m as usize].started,
                        })
                        .collect();
                    let Some(victim) = crate::deadlock::youngest(&members) else {
                        break;
                    };
                    self.core.stats.deadlocks += 1;
                    self.kill(victim, now)?;
                }
            }
        }
        Ok(())
    }

    /// Is `c` waiting for a lock or for the strategy's admission?
    fn is_blocked(&self, c: u32) -> bool {
        self.locks.is_waiting(c) || self.clients[c as usize].phase == Phase::WaitAdmit
    }

    /// Whom `c` waits for: lock holders and requests queued ahead of it, or the clients its
    /// admission wait names (a finishing client waits for nobody, so no cycle passes
    /// through an edge to it).
    fn waits_for(&self, c: u32) -> Vec<u32> {
        let mut out = Vec::new();
        self.waits_for_into(c, &mut out);
        out
    }

    /// `waits_for`, appended to `out` (the deadlock search's shared stack).
    fn waits_for_into(&self, c: u32, out: &mut Vec<u32>) {
        let cl = &self.clients[c as usize];
        if cl.phase == Phase::WaitAdmit {
            out.extend_from_slice(&cl.blocked_by);
            return;
        }
        self.locks.waits_for_into(c, out)
    }

    /// Rolls back `c`'s transaction (waiting or running) and restarts it later.
    fn kill(&mut self, c: u32, now: SimTime) -> Result<()> {
        let granted = self.locks.cancel_wait(c);
        self.grant(&granted, now);
        self.clients[c as usize].blocked_by.clear();
        // A victim waiting for I/O or CPU (`no_room`) has a wake-up queued: void it.
        self.clients[c as usize].epoch += 1;
        self.clients[c as usize].phase = Phase::Running;
        self.end_txn(c, now, End::Restart)
    }

    /// Client `c` found no frame it may evict (no-steal, SCC/BPCC's pinned pages, version
    /// slots, reads in flight). Restarting every such requester livelocked device-tx over
    /// scc/bpcc on TPC-C (docs/HOST.md, "The host engine", no frame to evict): two transactions whose pinned
    /// pages together exceed the pool restarted each other forever. Now the oldest active
    /// transaction (by its first start, kept across restarts) never restarts for room: it
    /// rolls back the youngest other active transaction that owns a frame it may not evict
    /// and retries once that rollback is done, or else waits for the earliest read in
    /// flight. Every other requester restarts as before. The oldest thus always progresses
    /// (a rollback frees the victim's pinned frames) and commits, and the next oldest takes
    /// its place: no livelock; and no deadlock, since the oldest waits only for a rollback
    /// or a read, never for a lock holder's progress.
    fn no_room(&mut self, c: u32, now: SimTime) -> Result<()> {
        let active = |p: Phase| {
            matches!(
                p,
                Phase::Running | Phase::WaitLock | Phase::WaitIo | Phase::Cpu
            )
        };
        let me = self.clients[c as usize].age;
        let oldest = self
            .clients
            .iter()
            .enumerate()
            .all(|(i, x)| i as u32 == c || !active(x.phase) || x.age > me);
        if oldest && self.strat.steal_if_final() {
            // One of its own pinned pages that no remaining operation writes (the current
            // one included): write it back inside its transaction and retry then.
            let cl = &self.clients[c as usize];
            let later: Vec<PageNo> = cl
                .spec
                .as_ref()
                .map(|sp| {
                    sp.ops[cl.op.min(sp.ops.len())..]
                        .iter()
                        .filter(|o| o.writes())
                        .map(|o| self.core.layout.page_of(o.rid()))
                        .collect()
                })
                .unwrap_or_default();
            let own = self
                .core
                .pool
                .occupied()
                .find(|(_, f)| {
                    f.owner == Some(c) && f.dirty && f.ready_at <= now && !later.contains(&f.page)
                })
                .map(|(i, _)| i);
            if let Some(f) = own {
                let fr = self.core.pool.remove(f);
                let t = self.strat.write_back(&mut self.core, fr, now)?;
                self.core.stats.buffer_full_waits += 1;
                self.clients[c as usize].phase = Phase::WaitIo;
                self.wake(c, t.max(now));
                return Ok(());
            }
        }
        if oldest {
            let s: &dyn Strategy = self.strat.as_ref();
            let mut victim: Option<u32> = None;
            let mut read_done: Option<SimTime> = None;
            for (_, f) in self.core.pool.occupied() {
                if f.ready_at > now {
                    read_done = Some(read_done.map_or(f.ready_at, |t| t.min(f.ready_at)));
                    continue;
                }
                let Some(o) = f.owner else { continue };
                if o == c || !f.dirty || s.evictable(f) || !active(self.clients[o as usize].phase) {
                    continue;
                }
                if victim
                    .is_none_or(|v| self.clients[o as usize].age > self.clients[v as usize].age)
                {
                    victim = Some(o);
                }
            }
            let retry_at = match (victim, read_done) {
                (Some(v), _) => {
                    self.core.stats.buffer_full_restarts += 1;
                    self.kill(v, now)?;
                    // The victim's frames left the pool with its rollback (issued now).
                    Some(now)
                }
                (None, Some(t)) => Some(t),
                (None, None) => {
                    // Every frame it may not evict is its own: restarting would pin the same
                    // pages again, forever.
                    return Err(HostError::Config {
                        key: "host.buffer_frames".into(),
                        reason: format!(
                            "{} frames cannot hold one transaction's protected pages",
                            self.core.cfg.buffer_frames
                        ),
                    });
                }
            };
            if let Some(t) = retry_at {
                self.core.stats.buffer_full_waits += 1;
                let cl = &mut self.clients[c as usize];
                cl.phase = Phase::WaitIo;
                self.wake(c, t);
                return Ok(());
            }
        }
        self.core.stats.buffer_full_restarts += 1;
        self.end_txn(c, now, End::Restart)
    }

    fn grant(&mut self, granted: &[u32], now: SimTime) {
        for &g in granted {
            self.clients[g as usize].phase = Phase::Running;
            self.wake(g, now);
        }
    }

    fn end_txn(&mut self, c: u32, now: SimTime, end: End) -> Result<()> {
        let at = match end {
            End::Commit => {
                self.report_ack(crate::acklog::AckEv::Issue, c)?;
                let ack = self.strat.commit(&mut self.core, c, now)?;
                let cl = &self.clients[c as usize];
                if let Some(spec) = &cl.spec {
                    self.source.committed(spec);
                }
                if self.record {
                    if let Some(spec) = &cl.spec {
                        self.commits.push(CommitRec {
                            txn: cl.txn,
                            spec: spec.clone(),
                            issue: now,
                            ack,
                        });
                    }
                }
                ack
            }
            End::Rollback | End::Restart => {
                if end == End::Rollback {
                    if let Some(spec) = &self.clients[c as usize].spec {
                        self.source.ended(spec);
                    }
                }
                self.strat.abort(&mut self.core, c, now)?
            }
        };
        let cl = &mut self.clients[c as usize];
        cl.phase = Phase::Finishing;
        cl.ending = end;
        cl.commit_issue = now;
        let epoch = cl.epoch;
        self.queue.push(
            at,
            Ev {
                client: c,
                epoch,
                finished: true,
            },
        );
        Ok(())
    }

    fn on_finished(&mut self, c: u32, now: SimTime) -> Result<()> {
        if self.clients[c as usize].ending == End::Commit {
            self.report_ack(crate::acklog::AckEv::Ack, c)?;
        }
        let granted = self.locks.release_all(c);
        self.grant(&granted, now);
        // Admission waiters for this transaction retry now (in client order; one that
        // finds the page still full blocks again on its current updaters).
        for i in 0..self.clients.len() {
            let w = &mut self.clients[i];
            if w.phase == Phase::WaitAdmit && w.blocked_by.contains(&c) {
                w.blocked_by.clear();
                w.phase = Phase::WaitIo;
                self.wake(i as u32, now);
            }
        }
        // Wait-die victims parked until this attempt ended restart now (after a backoff).
        let ended = (c, self.clients[c as usize].txn);
        for i in 0..self.clients.len() {
            if self.clients[i].parked && self.clients[i].restart_after == Some(ended) {
                self.unpark(i as u32, now);
            }
        }
        let cl = &mut self.clients[c as usize];
        match cl.ending {
            End::Commit => {
                self.core.stats.committed += 1;
                self.hist_txn.record(now.since(cl.first_start));
                self.hist_commit.record(now.since(cl.commit_issue));
                cl.phase = Phase::Idle;
                cl.spec = None;
                let think = if self.core.cfg.think_ns > 0 {
                    self.rng_think.exp_u64(self.core.cfg.think_ns as f64)
                } else {
                    0
                };
                self.wake(c, now + think);
            }
            End::Rollback => {
                self.core.stats.aborted += 1;
                cl.phase = Phase::Idle;
                cl.spec = None;
                self.wake(c, now);
            }
            End::Restart => {
                self.core.stats.restarted += 1;
                cl.phase = Phase::Backoff;
                let waits = cl.restart_after.is_some_and(|(o, t)| {
                    let b = &self.clients[o as usize];
                    b.txn == t
                        && matches!(
                            b.phase,
                            Phase::Running
                                | Phase::WaitLock
                                | Phase::WaitIo
                                | Phase::Cpu
                                | Phase::Finishing
                        )
                });
                if waits {
                    self.clients[c as usize].parked = true;
                } else {
                    self.unpark(c, now);
                }
            }
        }
        Ok(())
    }

    /// Schedules the restart of `c` (in `Backoff`) after a random backoff.
    fn unpark(&mut self, c: u32, now: SimTime) {
        let cl = &mut self.clients[c as usize];
        cl.parked = false;
        cl.restart_after = None;
        let b = if self.core.cfg.backoff_ns_max > 0 {
            self.rng_backoff.below(self.core.cfg.backoff_ns_max + 1)
        } else {
            0
        };
        self.wake(c, now + b);
    }

    /// The metrics of the run so far.
    pub fn metrics(&self, protocol: &str, wall_s: f64) -> HostMetrics {
        let mut m = HostMetrics::collect(
            &self.core,
            self.strat.as_ref(),
            protocol,
            self.source.describe(),
            SimTime::from_ns(self.now.as_ns() - self.start.as_ns()),
            &self.hist_txn,
            &self.hist_commit,
            &self.base_nand,
            &self.base_ftl,
            self.base_busy_ns,
            wall_s,
        );
        if let (Some(l), Some(base)) = (self.core.log_device.as_ref(), self.base_log.as_ref()) {
            m.log_device = Some(crate::metrics::LogDeviceMetrics::collect(l, base));
        }
        m
    }

    pub fn into_run(mut self, metrics: HostMetrics) -> HostRun {
        // Commands issued with a later start (a page write after its log force) are placed
        // at that instant; the sort is stable, so equal instants keep their issue order.
        let trace = self.core.trace.take().map(|mut t| {
            t.sort_by_key(|x| x.time_ns);
            t
        });
        let tier = self.strat.tier().and_then(|t| t.take_tier_log());
        let journal = self.journal.take().map(|j| {
            j.lock()
                .map(|mut l| std::mem::take(&mut *l))
                .unwrap_or_default()
        });
        HostRun {
            tier,
            journal,
            metrics,
            core: self.core,
            commits: self.commits,
            base_image: self.base_image,
            log_base_image: self.log_base_image,
            trace,
        }
    }
}

/// The report's metrics, from the engine's state (here rather than in `metrics`, which is
/// below the core and names neither `Core` nor `Strategy`).
impl HostMetrics {
    #[allow(clippy::too_many_arguments)]
    pub fn collect(
        core: &Core,
        strat: &dyn Strategy,
        protocol: &str,
        workload: String,
        now: SimTime,
        txn: &Histogram,
        commit: &Histogram,
        base_nand: &media::NandCounters,
        base_ftl: &ssd::FtlStats,
        base_busy_ns: u64,
        wall_s: f64,
    ) -> HostMetrics {
        let s = core.stats;
        let n = core.device.core.nand.counters();
        let f = core.device.core.stats;
        let busy = core.device.core.nand.array_busy_ns() - base_busy_ns;
        let gc = f.gc_busy_ns - base_ftl.gc_busy_ns;
        let sim = now.as_ns();
        let accesses = s.buffer_hits + s.buffer_misses;
        HostMetrics {
            strategy: strat.name().into(),
            protocol: protocol.into(),
            workload,
            clients: core.cfg.clients,
            buffer_frames: core.cfg.buffer_frames,
            lock_level: format!("{:?}", core.cfg.lock_level).to_lowercase(),
            txns_committed: s.committed,
            txns_aborted: s.aborted,
            txns_restarted: s.restarted,
            sim_time_ns: sim,
            throughput_per_s: if sim == 0 {
                0.0
            } else {
                s.committed as f64 / (sim as f64 / 1e9)
            },
            txn_time_ns: txn.percentiles(),
            commit_latency_ns: commit.percentiles(),
            txn_time_hist: txn.clone(),
            lock_waits: s.lock_waits,
            deadlocks: s.deadlocks,
            buffer_hit_ratio: if accesses == 0 {
                0.0
            } else {
                s.buffer_hits as f64 / accesses as f64
            },
            stats: s,
            log_bytes: s.log_bytes,
            log_pages: s.log_page_writes,
            nand_reads: (n.reads + n.oob_reads) - (base_nand.reads + base_nand.oob_reads),
            nand_programs: n.programs - base_nand.programs,
            nand_partial_programs: n.partial_programs - base_nand.partial_programs,
            nand_erases: n.erases - base_nand.erases,
            gc_time_ns: gc,
            gc_share: if busy == 0 {
                0.0
            } else {
                gc as f64 / busy as f64
            },
            array_busy_ns: busy,
            strategy_counters: strat
                .counters()
                .into_iter()
                .chain(
                    (core.cfg.update == "ipl")
                        .then_some(("ipl_log_page_reads", core.also_read_pages)),
                )
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            net_bytes: core.net.metrics(),
            recovery: None,
            log_device: None,
            wall_time_s: wall_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::measure_recovery;

    /// A small TPC-C on `wal`: 16 frames (many write-backs) and a checkpoint every 4 KiB of
    /// log (many in-place checkpoint writes).
    fn small_tpcc() -> (HostConfig, ssd::DeviceConfig) {
        let (h, mut d) = small_tpcc_on("wal", "none");
        d.nand.blocks_per_plane = 64;
        (h, d)
    }

    /// `small_tpcc`'s host settings over strategy `s` and protocol `p`, on the checker's tiny
    /// device.
    fn small_tpcc_on(s: &str, p: &str) -> (HostConfig, ssd::DeviceConfig) {
        let (mut h, d) = crate::check::tiny_config(s, p);
        h.workload = "tpcc".into();
        h.tpcc.warehouses = 1;
        h.tpcc.customers_per_district = 20;
        h.tpcc.items = 50;
        h.tpcc.max_txns = 200;
        h.tpcc.delta_abort = 0.1;
        h.transactions = 120;
        h.buffer_frames = 16;
        h.log_pages = 64;
        h.checkpoint_log_bytes = 4096;
        (h, d)
    }

    /// Recovery at the end of a run reads only tags on the medium: forgetting the others
    /// (`Core::prune_tags`, here each time 8 contents were added, so many times per run)
    /// gives the same recovery, figure for figure, as keeping every version, on each
    /// strategy and device protocol that measures recovery on the device; and the pruned
    /// table does hold fewer contents (GC erased what it forgot). With the WAL log on its
    /// own device the log's tags are on that device's medium: pruning by the data device's
    /// alone forgot them and the restart failed on the master record.
    #[test]
    fn pruning_the_tag_table_recovers_the_same() {
        for (s, p, sep) in [
            ("wal", "none", false),
            ("wal", "none", true),
            ("device-tx", "cfc", false),
            ("device-tx", "afc", false),
            ("device-tx", "bpcc", false),
            ("device-tx", "scc", false),
            ("cfc-ex", "none", false),
            ("afc-ex", "none", false),
        ] {
            let (mut h, mut d) = small_tpcc_on(s, p);
            if sep {
                h.log_device = "separate".into();
            }
            h.transactions = 150;
            h.measure_recovery = true;
            // Room for the database and a little more, so GC erases what the run overwrote.
            let need = device_pages_needed(&h, d.nand.page_bytes, 5).unwrap();
            d.nand.blocks_per_plane = (need * 10 / 7 / 16 + 4) as u32;
            let go = |prune: bool| {
                let dev = Device::in_memory(&d).unwrap();
                let log = sep.then(|| Device::in_memory(&log_device_config(&d)).unwrap());
                let source = crate::source::build(&h, 5).unwrap();
                let mut e = Engine::with_log_device(&h, dev, log, source, 5, false).unwrap();
                assert!(e.core.tags.prunable, "{s}/{p}");
                e.core.tags.prunable = prune;
                e.core.tags.min_growth = 8;
                e.run().unwrap();
                if prune {
                    // Once more at the end (every write issued): what the restart reads
                    // must be on a medium, whenever the last pruning was.
                    e.core.prune_tags();
                }
                let (kept, len) = (e.core.tags.kept(), e.core.tags.len());
                let mut r = measure_recovery(&h, &d, &mut e.core, e.now)
                    .unwrap_or_else(|err| panic!("{s}/{p} pruned={prune}: {err}"));
                r.wall_time_s = 0.0;
                (format!("{r:?}"), kept, len)
            };
            let (pruned, kept, len) = go(true);
            let (whole, kept_whole, len_whole) = go(false);
            assert_eq!(pruned, whole, "{s}/{p}");
            assert_eq!((kept_whole, len_whole), (len, len), "{s}/{p}");
            assert!(kept < len, "{s}/{p}: {kept} of {len} tags kept");
        }
    }

    /// A warm-up kept inside the run (`run_with_snapshot`) changes nothing in the run, and
    /// holds what a run of only the warm-up's transactions had when it first turned a
    /// client away: no more commits or simulated time than that run ends with, and at
    /// least the warm-up less one transaction per client (the ones still in flight).
    #[test]
    fn a_snapshot_is_the_prefix_of_the_run() {
        let (h, d) = small_tpcc();
        let dev = || Device::in_memory(&d).unwrap();
        let j = |m: &HostMetrics| {
            let mut v = serde_json::to_value(m).unwrap();
            v.as_object_mut().unwrap().remove("wall_time_s");
            v.to_string()
        };
        let plain = run(&h, &d, dev(), 5, false).unwrap();
        let (whole, snap) = run_with_snapshot(&h, &d, dev(), 5, 60).unwrap();
        assert_eq!(j(&plain.metrics), j(&whole.metrics));
        let snap = snap.expect("120 transactions pass a warm-up of 60");
        let mut h60 = h.clone();
        h60.transactions = 60;
        let warm = run(&h60, &d, dev(), 5, false).unwrap().metrics;
        assert!(snap.txns_committed <= warm.txns_committed);
        assert!(snap.txns_committed + snap.txns_aborted + u64::from(h.clients) >= 60);
        assert!(snap.sim_time_ns <= warm.sim_time_ns);
        assert!(snap.txns_committed < whole.metrics.txns_committed);
        // A run no longer than its warm-up never passes it.
        assert!(run_with_snapshot(&h60, &d, dev(), 5, 60)
            .unwrap()
            .1
            .is_none());
    }

    /// Every page's values at the end of a run: its frame's (built here) or the disk's.
    fn db_now(core: &mut Core) -> Vec<Vec<u64>> {
        (0..core.layout.pages)
            .map(|p| match core.pool.find(PageNo(p)) {
                Some(f) => core.frame_mut(f).values.clone(),
                None => core.disk_image(PageNo(p)).0,
            })
            .collect()
    }

    /// Without a tag table keeping page images, a build takes the disk image's values
    /// (`Core::frame_mut`); with one (recording) it copies them. Both give the same
    /// metrics and the same database, page by page.
    #[test]
    fn taking_disk_values_gives_what_copying_them_gives() {
        let (h, d) = small_tpcc();
        let go = |record: bool| {
            let dev = Device::in_memory(&d).unwrap();
            run(&h, &d, dev, 5, record).unwrap()
        };
        let mut taken = go(false);
        let mut copied = go(true);
        assert!(taken.core.disk_values_taken > 0);
        assert_eq!(copied.core.disk_values_taken, 0);
        assert!(taken.core.stats.checkpoints > 0 && taken.core.stats.page_writes > 0);
        let j = |m: &HostMetrics| {
            let mut v = serde_json::to_value(m).unwrap();
            v.as_object_mut().unwrap().remove("wall_time_s");
            v.to_string()
        };
        assert_eq!(j(&taken.metrics), j(&copied.metrics));
        assert_eq!(db_now(&mut taken.core), db_now(&mut copied.core));
        taken.core.check_disk().unwrap();
    }
}
