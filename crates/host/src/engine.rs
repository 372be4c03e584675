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
use crate::data::{Effect, Layout, PageImage, PageNo, TagTable};
use crate::lock::{Acquire, LockKey, LockManager, Mode};
use crate::metrics::{HostMetrics, HostStats};
use crate::strategy::{self, Strategy};
use crate::{DeadlockPolicy, HostConfig, HostError, LockLevel, Result};
use sim::{Histogram, Lpn, Rng, SimTime, TxnId};
use ssd::{Device, SsdError};
use std::sync::Arc;
use workload::db::{RecOp, TxnSource, TxnSpec};

/// The first device page of DB page `p`'s part `k`.
pub fn data_lpn(layout: &Layout, p: PageNo, k: u32) -> Lpn {
    Lpn((p.0 * u64::from(layout.parts) + u64::from(k)) as u32)
}

/// Device pages the data area uses.
pub fn data_lpns(layout: &Layout) -> u64 {
    layout.pages * u64::from(layout.parts)
}

/// State shared by the engine and the strategy.
pub struct Core {
    pub cfg: HostConfig,
    pub layout: Layout,
    pub device: Device,
    /// The log device (`host.log_device = "separate"`): the WAL's log pages and master
    /// record are written here; None: on `device`, after the data pages.
    pub log_device: Option<Device>,
    pub pool: Pool,
    pub tags: TagTable,
    /// Per DB page: the version a read returns now (None: as loaded), with its first tag.
    ///
    /// With `lazy_disk`, the image's `values` may be *taken* (left empty) by `frame_mut`
    /// when nothing else holds the image (no tag table keeps it): the frame then owns them
    /// and is dirty, so the entry is replaced by its write-back before any read of the page
    /// could look at it. Invariant: an entry with taken values belongs to a page with a
    /// built frame in the pool (`check_disk`).
    pub disk: Vec<Option<(u64, Arc<PageImage>)>>,
    /// The strategy builds every frame through `Core::frame_mut` (never `Pool::frame_mut`
    /// directly), so a fetch may install `buffer::Unbuilt::Disk` frames and a build may take
    /// the disk image's values instead of copying them. Set by the strategy's `create`
    /// (`wal`); default off.
    pub lazy_disk: bool,
    /// Builds that took a disk image's values instead of copying them (not a metric: for
    /// tests and profiles).
    pub disk_values_taken: u64,
    pub stats: HostStats,
    /// The device commands issued, as a `txn` trace (when capturing one).
    pub trace: Option<Vec<workload::txn::Timed>>,
    /// Net bytes modified per written page (`update::net`).
    pub net: crate::update::net::NetBytes,
    /// Device pages a read of a DB page reads besides its own parts (`ipl`: the log pages
    /// of its erase unit holding records for it), and how many such reads were made.
    pub also_read: std::collections::BTreeMap<u64, Vec<Lpn>>,
    pub also_read_pages: u64,
    /// The number of the transaction whose attempt `Strategy::begin` is starting:
    /// transactions are numbered 1, 2, … in the order clients take them from the workload,
    /// and a restart keeps its number (as wait-die keeps its timestamp), while every
    /// attempt gets a fresh `TxnId`. PCMLogging's XIDs (§4's residence clock) use it.
    pub txn_number: u64,
    /// A file-backed run of a PCM strategy: the tier image its PCM and disk write through to
    /// (`media::tier_file`), attached by the strategy's `create` after formatting.
    pub tier_sink: Option<media::tier_file::TierSink>,
    /// An engine resumed on a recovered medium (`Engine::resume`): the strategy's state its
    /// restart left, taken by the strategy's `create`.
    pub resume: Option<crate::strategy::Resume>,
}

impl Core {
    /// Notes a device command in the captured trace (if any).
    pub fn trace(&mut self, at: SimTime, cmd: workload::txn::TxCmd) {
        if let Some(t) = self.trace.as_mut() {
            t.push(workload::txn::Timed {
                time_ns: at.as_ns(),
                cmd,
            });
        }
    }

    /// The device holding the log and the master record: the log device when there is one.
    pub fn log_dev(&mut self) -> &mut Device {
        match self.log_device.as_mut() {
            Some(d) => d,
            None => &mut self.device,
        }
    }

    /// Writes log page number `seq` (already tagged) to `lpn` of the log's device as a
    /// plain, durable-at-ack write, noting it in the trace and the log-page counter; returns
    /// the ack instant.
    pub fn write_log_page(
        &mut self,
        lpn: Lpn,
        tag: u64,
        seq: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        let t = self.write_traced(lpn, tag, now, || format!("writing log page {seq}"))?;
        self.stats.log_page_writes += 1;
        if self.cfg.fault_log_acked_at_issue {
            // The planted bug (`HostConfig::fault_log_acked_at_issue`).
            return Ok(now);
        }
        Ok(t)
    }

    /// Writes a strategy's master record (the root its restart starts from) at `lpn`: a plain
    /// write, traced like a log page but not counted as one.
    pub fn write_master(&mut self, lpn: Lpn, tag: u64, now: SimTime) -> Result<SimTime> {
        self.write_traced(lpn, tag, now, || "writing the master record".into())
    }

    /// A traced plain write of one page of the log's device; `what` names it in an error.
    /// (A run with a log device captures no trace: `run_with` refuses it.)
    fn write_traced(
        &mut self,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
        what: impl FnOnce() -> String,
    ) -> Result<SimTime> {
        self.trace(
            now,
            workload::txn::TxCmd::Write {
                tx: None,
                lpn,
                pages: 1,
            },
        );
        self.log_dev()
            .write_plain(lpn, tag, now)
            .map_err(|error| HostError::Device {
                at: now,
                what: what(),
                error,
            })
    }

    /// The error of a failed device command. `what` is built even when the command
    /// succeeds: on per-command paths, format the message inside a `map_err` closure.
    pub fn dev_err(at: SimTime, what: impl Into<String>) -> impl FnOnce(SsdError) -> HostError {
        let what = what.into();
        move |error| HostError::Device { at, what, error }
    }

    /// Hints the CPU to fetch `page`'s entries in the pool's page map and in `disk` (a fetch
    /// of it follows soon). Changes speed only.
    #[inline]
    pub fn prefetch_page(&self, page: PageNo) {
        self.pool.prefetch(page);
        if let Some(d) = self.disk.get(page.0 as usize) {
            sim::mem::prefetch(d);
        }
    }

    /// The values of `page` as the device holds them now.
    pub fn disk_image(&self, page: PageNo) -> (Vec<u64>, u64) {
        match &self.disk[page.0 as usize] {
            Some((_, img)) => {
                debug_assert!(
                    !img.values.is_empty(),
                    "page {}'s disk image was taken by its frame",
                    page.0
                );
                (img.values.clone(), img.lsn)
            }
            None => (self.layout.initial_page(page), 0),
        }
    }

    /// Frame `f`, its values built. An `Unbuilt::Disk` frame takes the disk image's values
    /// when no one else holds the image (`disk`'s invariant) and copies them otherwise;
    /// every other frame is built by `Pool::frame_mut`.
    pub fn frame_mut(&mut self, f: u32) -> &mut Frame {
        if self.pool.frame(f).refers_to_disk() {
            let page = self.pool.frame(f).page;
            let (values, lsn) = match &mut self.disk[page.0 as usize] {
                Some((_, img)) => {
                    let lsn = img.lsn;
                    let values = match Arc::get_mut(img) {
                        Some(own) => {
                            self.disk_values_taken += 1;
                            std::mem::take(&mut own.values)
                        }
                        None => img.values.clone(),
                    };
                    debug_assert!(!values.is_empty(), "page {}'s disk image was taken", page.0);
                    (values, lsn)
                }
                None => (self.layout.initial_page(page), 0),
            };
            self.pool.build_from_disk(f, values, lsn);
        }
        self.pool.frame_mut(f)
    }

    /// `disk`'s invariant: every entry whose values were taken belongs to a page with a
    /// built frame in the pool.
    pub fn check_disk(&self) -> std::result::Result<(), String> {
        for (p, d) in self.disk.iter().enumerate() {
            if let Some((_, img)) = d {
                if img.values.is_empty() {
                    let ok = self
                        .pool
                        .find(PageNo(p as u64))
                        .is_some_and(|f| self.pool.frame(f).is_built());
                    if !ok {
                        return Err(format!(
                            "page {p}'s disk image was taken but no built frame holds it"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Forgets the contents of every tag the medium no longer holds (`TagTable::retain`):
    /// a run that measures its recovery at the end needs only those a read of the medium
    /// can return then, and a tag that left the medium (its page overwritten elsewhere and
    /// erased) never comes back. Called between events, when every tag allocated has been
    /// written (each strategy allocates a write's tags in the call that issues it). Results
    /// are unchanged: recovery reads only tags on the medium, and an unknown tag is an
    /// error, not a guess (so a tag forgotten too early fails the run loudly).
    pub fn prune_tags(&mut self) {
        let n = self.tags.len() as usize;
        let mut live = vec![false; n + 1];
        let mut mark = |t: u64| {
            if let Some(x) = live.get_mut(t as usize) {
                *x = true;
            }
        };
        self.device.core.nand.image().for_each_tag(&mut mark);
        // The log device's pages name log and master tags.
        if let Some(l) = &self.log_device {
            l.core.nand.image().for_each_tag(&mut mark);
        }
        self.tags.retain(|t| live[t as usize]);
    }

    /// Allocates the tags of a new image of `img.page` (one per part, consecutive).
    pub fn tag_image(&mut self, img: &Arc<PageImage>) -> u64 {
        let mut first = 0;
        for k in 0..self.layout.parts {
            let t = self.tags.add(|| crate::data::TagContent::Data {
                image: img.clone(),
                part: k,
            });
            if k == 0 {
                first = t;
            }
        }
        first
    }

    /// Reads every part of `page`; returns when the last read completes.
    pub fn read_page(&mut self, page: PageNo, now: SimTime) -> Result<SimTime> {
        let mut end = now;
        self.trace(
            now,
            workload::txn::TxCmd::Read {
                lpn: data_lpn(&self.layout, page, 0),
                pages: self.layout.parts,
            },
        );
        for k in 0..self.layout.parts {
            self.device
                .core
                .prefetch_page(data_lpn(&self.layout, page, k));
        }
        for k in 0..self.layout.parts {
            let lpn = data_lpn(&self.layout, page, k);
            let (o, t) = self
                .device
                .read(lpn, now)
                .map_err(|error| HostError::Device {
                    at: now,
                    what: format!("reading {lpn}"),
                    error,
                })?;
            #[cfg(debug_assertions)]
            {
                let want = match &self.disk[page.0 as usize] {
                    Some((t0, _)) => ssd::ReadOutcome::Tag(t0 + u64::from(k)),
                    None => ssd::ReadOutcome::Unmapped,
                };
                // A page as loaded is unmapped, or holds its loaded tag on a device the
                // database was loaded onto (`external::load_data_area`).
                let loaded = want == ssd::ReadOutcome::Unmapped
                    && o == ssd::ReadOutcome::Tag(crate::external::loaded_tag(lpn));
                if o != want && !loaded {
                    return Err(HostError::Stuck(format!(
                        "internal: {lpn} reads {o:?}, the host expects {want:?}"
                    )));
                }
            }
            let _ = o;
            end = end.max(t);
        }
        if let Some(extra) = self.also_read.get(&page.0) {
            for lpn in extra.clone() {
                let (_, t) = self
                    .device
                    .read(lpn, now)
                    .map_err(Core::dev_err(now, format!("reading log page {lpn}")))?;
                end = end.max(t);
                self.also_read_pages += 1;
            }
        }
        self.stats.page_reads += 1;
        Ok(end)
    }

    /// Issues one device write per part of a new image of `img.page`, through `write`
    /// (plain, or inside device transaction `tx`). Returns the first tag and when the last
    /// write completes.
    pub fn write_image(
        &mut self,
        img: &Arc<PageImage>,
        tx: Option<sim::TxId>,
        now: SimTime,
        write: impl FnMut(&mut Device, Lpn, u64) -> std::result::Result<SimTime, SsdError>,
    ) -> Result<(u64, SimTime)> {
        self.write_image_traced(img, tx, false, now, write)
    }

    /// `write_image` for the last page a device transaction writes at commit: the last
    /// part's write goes with the COMMIT (`write` calls `Device::commit_write` for it), and
    /// the trace shows it on the COMMIT line.
    pub fn write_image_with_commit(
        &mut self,
        img: &Arc<PageImage>,
        tx: sim::TxId,
        now: SimTime,
        write: impl FnMut(&mut Device, Lpn, u64) -> std::result::Result<SimTime, SsdError>,
    ) -> Result<(u64, SimTime)> {
        self.write_image_traced(img, Some(tx), true, now, write)
    }

    fn write_image_traced(
        &mut self,
        img: &Arc<PageImage>,
        tx: Option<sim::TxId>,
        commit_last: bool,
        now: SimTime,
        mut write: impl FnMut(&mut Device, Lpn, u64) -> std::result::Result<SimTime, SsdError>,
    ) -> Result<(u64, SimTime)> {
        let t0 = self.tag_image(img);
        let parts = self.layout.parts;
        let plain = if commit_last { parts - 1 } else { parts };
        if plain > 0 {
            self.trace(
                now,
                workload::txn::TxCmd::Write {
                    tx,
                    lpn: data_lpn(&self.layout, img.page, 0),
                    pages: plain,
                },
            );
        }
        if let (true, Some(tx)) = (commit_last, tx) {
            self.trace(
                now,
                workload::txn::TxCmd::Commit {
                    tx,
                    write: Some(data_lpn(&self.layout, img.page, parts - 1)),
                },
            );
        }
        let mut end = now;
        for k in 0..self.layout.parts {
            self.device
                .core
                .prefetch_page(data_lpn(&self.layout, img.page, k));
        }
        for k in 0..self.layout.parts {
            let lpn = data_lpn(&self.layout, img.page, k);
            let t = write(&mut self.device, lpn, t0 + u64::from(k)).map_err(|error| {
                HostError::Device {
                    at: now,
                    what: format!("writing {lpn}"),
                    error,
                }
            })?;
            end = end.max(t);
        }
        self.stats.page_writes += 1;
        self.net.written(img.page, u64::from(self.cfg.page_bytes));
        Ok((t0, end))
    }
}

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

/// A committed transaction, for the oracle.
#[derive(Clone, Debug)]
pub struct CommitRec {
    pub txn: TxnId,
    pub spec: Arc<TxnSpec>,
    pub issue: SimTime,
    pub ack: SimTime,
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
    pub tier: Option<crate::pcm_tier::TierLog>,
    /// TPC-C: the calls the run made on its source (when recording; `source::Journaled`),
    /// from which a run on a recovered medium takes up the generator's committed view.
    pub journal: Option<Vec<crate::source::GenEvent>>,
}

pub struct Engine {
    pub core: Core,
    strat: Box<dyn Strategy>,
    source: Box<dyn TxnSource>,
    /// The journal of `source`'s calls (`source::Journaled`; recorded TPC-C runs).
    journal: Option<std::sync::Arc<std::sync::Mutex<Vec<crate::source::GenEvent>>>>,
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

/// The PCM strategies, whose database lives on a PCM tier over an external store
/// (`host.pcm.external`): they use the flash device only when that store is the emulated SSD.
pub fn uses_flash_device(cfg: &HostConfig) -> bool {
    let pcm = matches!(
        cfg.strategy.as_str(),
        "pcmlogging" | "pcmlogging-page" | "wal-pcm" | "scmlogging"
    );
    !pcm || crate::external::is_emulated(&cfg.pcm.external)
}

/// Logical device pages the configured host run needs on a device of `flash_page_bytes`
/// pages: the database (`data_lpns`) and what the strategy lays out after it, by the same
/// rules the strategies refuse a small device with (`wal`: master and log; `cfc-ex` /
/// `afc-ex`: one data copy per version slot, master and log; `ipl`: its log regions; the
/// PCM strategies: only their external store's pages when it is the emulated SSD, else 0).
/// Learns the database's size from the workload's schema (`source::schema`: a trace's head).
pub fn device_pages_needed(cfg: &HostConfig, flash_page_bytes: u32, seed: u64) -> Result<u64> {
    if !uses_flash_device(cfg) {
        return Ok(0);
    }
    let schema = crate::source::schema(cfg, seed)?;
    device_pages_needed_with(cfg, flash_page_bytes, &schema)
}

/// `device_pages_needed` for a workload whose schema is already known (`source::schema` of
/// the same configuration and seed): a caller that sizes many configurations of one
/// workload builds its source once.
pub fn device_pages_needed_with(
    cfg: &HostConfig,
    flash_page_bytes: u32,
    schema: &workload::db::Schema,
) -> Result<u64> {
    if !uses_flash_device(cfg) {
        return Ok(0);
    }
    let parts = parts_for(cfg, flash_page_bytes)?;
    // The schema's page count is what `data_lpns` of the layout gives, without building the
    // per-page map (a database sized by a huge `max_txns` is refused before any allocation).
    let pages = schema.pages_max();
    let d = pages.saturating_mul(u64::from(parts));
    let log = u64::from(cfg.log_pages);
    Ok(match cfg.strategy.as_str() {
        "wal" => {
            let ipl = if cfg.update == "ipl" {
                crate::update::ipl::log_lpns_needed(cfg, pages, flash_page_bytes)
            } else {
                0
            };
            if cfg.separate_log() {
                // The log device has the data device's configuration: each must hold its
                // part (the data and IPL's log regions; the master and the log).
                (d + ipl).max(1 + log)
            } else {
                d + 1 + log + ipl
            }
        }
        "flagcommit-ex" | "cfc-ex" | "afc-ex" => {
            let versions = crate::strategy::flagcommit_ex::versions_for(cfg.max_c);
            d.saturating_mul(u64::from(versions)) + 1 + log
        }
        "wal-pcm" => d + log * u64::from(parts),
        _ => d,
    })
}

impl Engine {
    /// An engine on a freshly formatted `device`. `record` keeps the tag table, the commit
    /// log and the NAND operation log for the crash checker.
    pub fn new(
        cfg: &HostConfig,
        device: Device,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
    ) -> Result<Engine> {
        Engine::build(cfg, device, None, source, seed, record, None, None)
    }

    /// As `new`; a PCM strategy's PCM and disk write through to `tier` (a file-backed run,
    /// `media::tier_file`). Refused for the strategies without a PCM tier.
    pub fn new_with_tier(
        cfg: &HostConfig,
        device: Device,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        tier: Option<media::tier_file::TierSink>,
    ) -> Result<Engine> {
        Engine::build(cfg, device, None, source, seed, record, tier, None)
    }

    /// As `new`, with the log on `log_device` (`host.log_device = "separate"`, which needs
    /// one; "shared" refuses one). Both devices run on the engine's one clock.
    pub fn with_log_device(
        cfg: &HostConfig,
        device: Device,
        log_device: Option<Device>,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
    ) -> Result<Engine> {
        Engine::build(cfg, device, log_device, source, seed, record, None, None)
    }

    /// An engine on a recovered `device` whose restart wrote its results back (`wb`,
    /// `strategy::WriteBack`): the tag table continues the one the medium's tags come from,
    /// the data area holds `wb.disk`, the strategy takes up its restart's state, and the
    /// first transaction gets id `next_txn` (above every id the medium's log may name). A
    /// strategy whose restart left no state to resume from is refused.
    #[allow(clippy::too_many_arguments)]
    pub fn resume(
        cfg: &HostConfig,
        device: Device,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        wb: crate::strategy::WriteBack,
        next_txn: u64,
    ) -> Result<Engine> {
        Engine::resume_with_log_device(cfg, device, None, source, seed, record, wb, next_txn)
    }

    /// As `resume`, with the recovered log device (`host.log_device = "separate"`) the
    /// restart wrote its log records and master to.
    #[allow(clippy::too_many_arguments)]
    pub fn resume_with_log_device(
        cfg: &HostConfig,
        device: Device,
        log_device: Option<Device>,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        wb: crate::strategy::WriteBack,
        next_txn: u64,
    ) -> Result<Engine> {
        Engine::build(
            cfg,
            device,
            log_device,
            source,
            seed,
            record,
            None,
            Some((wb, next_txn)),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        cfg: &HostConfig,
        device: Device,
        log_device: Option<Device>,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        tier: Option<media::tier_file::TierSink>,
        resume: Option<(crate::strategy::WriteBack, u64)>,
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
        let info = strategy::lookup(&cfg.strategy)?;
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
        if uses_flash_device(cfg) {
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
                    strategy::Admit::Yes => {}
                    strategy::Admit::Restart => return self.end_txn(c, now, End::Restart),
                    // Blocked (Flag Commit Algorithm 1 line 16): wait until one of `by` ends
                    // (`on_finished` wakes it), then try the operation again (the lock is
                    // still held; the refetch is not counted). The wait is in the wait-for
                    // graph, so a deadlock through it is resolved like a lock deadlock.
                    strategy::Admit::Block(by) => {
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

/// Builds an engine for `cfg` on `device` (made from `dcfg`, needed to recover it) with the
/// configured workload and runs it.
pub fn run(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
) -> Result<HostRun> {
    run_traced(cfg, dcfg, device, seed, record, false)
}

/// As `run`; with `trace`, the device commands are captured (`HostRun::trace`, in time
/// order).
pub fn run_traced(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
    trace: bool,
) -> Result<HostRun> {
    run_acked(cfg, dcfg, device, seed, record, trace, None)
}

/// As `run_traced`; with `acks`, every commit's issue and ack is reported to it as it
/// happens (`acklog`, the file-backed run's ack log).
pub fn run_acked(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
    trace: bool,
    acks: Option<crate::acklog::AckSink>,
) -> Result<HostRun> {
    run_with(cfg, dcfg, device, seed, record, trace, acks, None, None).map(|(r, _)| r)
}

/// As `run_acked`, for a PCM strategy whose PCM and disk write through to the tier image
/// `tier` (a file-backed run, `media::tier_file`).
pub fn run_tier_file(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    acks: Option<crate::acklog::AckSink>,
    tier: media::tier_file::TierSink,
) -> Result<HostRun> {
    run_with(
        cfg,
        dcfg,
        device,
        seed,
        false,
        false,
        acks,
        None,
        Some(tier),
    )
    .map(|(r, _)| r)
}

/// As `run`, keeping the metrics as they were when `warmup` transactions had been handed
/// out (`Engine::set_snapshot_at`; None if the run has no more than `warmup`).
pub fn run_with_snapshot(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    warmup: u64,
) -> Result<(HostRun, Option<HostMetrics>)> {
    run_with(
        cfg,
        dcfg,
        device,
        seed,
        false,
        false,
        None,
        Some(warmup),
        None,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_with(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
    trace: bool,
    acks: Option<crate::acklog::AckSink>,
    snapshot_at: Option<u64>,
    tier: Option<media::tier_file::TierSink>,
) -> Result<(HostRun, Option<HostMetrics>)> {
    let wall = std::time::Instant::now();
    let mut source: Box<dyn TxnSource> = crate::source::build(cfg, seed)?;
    // A recorded TPC-C run keeps the journal of its generator's calls: a run on its
    // recovered medium takes up the committed view from it (`source::take_up`).
    let mut journal = None;
    if record && cfg.workload == "tpcc" {
        let (j, log) = crate::source::Journaled::new(source);
        source = Box::new(j);
        journal = Some(log);
    }
    let protocol = device.info().name;
    let log_device = if cfg.separate_log() {
        if trace {
            return Err(HostError::Config {
                key: "host.log_device".into(),
                reason: "a captured txn trace is one device's commands; \"separate\" issues them to two devices (use \"shared\" to capture a trace)".into(),
            });
        }
        Some(
            Device::in_memory(&log_device_config(dcfg)).map_err(|e| HostError::Config {
                key: "host.log_device".into(),
                reason: format!("building the log device: {e}"),
            })?,
        )
    } else {
        None
    };
    let mut e = Engine::build(cfg, device, log_device, source, seed, record, tier, None)?;
    e.journal = journal;
    if trace {
        e.capture_trace();
    }
    if let Some(s) = acks {
        e.set_ack_sink(s);
    }
    if let Some(n) = snapshot_at {
        e.set_snapshot_at(n);
    }
    e.run()?;
    let snapshot = e.take_snapshot();
    let mut m = e.metrics(protocol, wall.elapsed().as_secs_f64());
    if cfg.measure_recovery {
        let now = e.now;
        m.recovery = Some(match e.strat.tier() {
            Some(t) => t.measure_recovery(now)?,
            None => measure_recovery(cfg, dcfg, &mut e.core, now)?,
        });
    }
    Ok((e.into_run(m), snapshot))
}

/// The configuration of the log device (`host.log_device = "separate"`): a fresh device of
/// the data device's configuration (same preset, geometry, timing and FTL; the plain FTL,
/// which is what `wal` runs on).
pub fn log_device_config(dcfg: &ssd::DeviceConfig) -> ssd::DeviceConfig {
    let mut d = dcfg.clone();
    d.protocol.name = "none".into();
    d
}

/// Cuts power at the end of a run (nothing in flight is lost: the image is taken after every
/// command was issued, so in-flight operations count as persisted) and restarts: the device's
/// recovery, then the strategy's.
///
/// The run is over, so the restart takes the medium itself (`Nand::take_for_restart`), not a
/// copy: a copy of a 32 GiB device's image beside the live one, plus the restarted device,
/// was most of a recovery point's peak memory. The restart sees the same pages with idle
/// resources and zero counters either way, so the figures are the same. A recorded run (its
/// operation log belongs to the crash checker) or an image file (a restart must not write
/// it) is copied as before.
fn measure_recovery(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    core: &mut Core,
    now: SimTime,
) -> Result<crate::metrics::HostRecoveryMetrics> {
    let wall = std::time::Instant::now();
    let live = &mut core.device.core.nand;
    let nand = match live.take_for_restart() {
        Some(n) => n,
        None => media::Nand::from_image(live.image().clone(), live.timing().clone()),
    };
    let (mut dev, mut rep) =
        Device::recover(dcfg, nand).map_err(Core::dev_err(now, "device recovery after the run"))?;
    // The log device restarts beside the data device: the two scans overlap (independent
    // devices), so the device phase takes the longer one and reads the pages of both.
    let mut log_dev = match core.log_device.as_mut() {
        Some(l) => {
            let live = &mut l.core.nand;
            let nand = match live.take_for_restart() {
                Some(n) => n,
                None => media::Nand::from_image(live.image().clone(), live.timing().clone()),
            };
            let (d, r) = Device::recover(&log_device_config(dcfg), nand)
                .map_err(Core::dev_err(now, "log device recovery after the run"))?;
            rep.time_ns = rep.time_ns.max(r.time_ns);
            rep.pages_read += r.pages_read;
            Some(d)
        }
        None => None,
    };
    let info = strategy::lookup(&cfg.strategy)?;
    let mut ctx = strategy::RecoverCtx {
        cfg,
        layout: &core.layout,
        device: &mut dev,
        log_device: log_dev.as_mut(),
        tags: &core.tags,
        now: SimTime::from_ns(rep.time_ns),
        write_back: None,
    };
    let db = (info.recover)(&mut ctx)?;
    Ok(crate::metrics::HostRecoveryMetrics {
        device_time_ns: rep.time_ns,
        device_pages_read: rep.pages_read,
        time_ns: rep.time_ns + db.time_ns,
        pages_read: rep.pages_read + db.pages_read,
        wall_time_s: wall.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
