//! `pcmlogging` as a host-engine recovery strategy: the record-level PCMLogging core
//! (`strategy::pcmlogging`, §3.3, Algorithms 1–3) driven by the engine's clients, lock
//! manager and buffer pool, over a Table 2 disk (`host.pcm.external`).
//!
//! How the engine's hooks map onto the scheme:
//! - `on_update`: the changed record becomes a dirty record in DRAM (Transaction Table).
//! - `write_back` (a dirty page leaves the pool, steal): the page's dirty DRAM records, of
//!   any transaction, are flushed to PCM (Algorithm 1). Nothing is written to disk: the page
//!   image itself is dropped; committed records reach the disk only by destaging.
//! - `read_page` (a buffer miss, §3.3 "Serving read/write requests"): the page's PCM
//!   records, plus the disk page unless PCM and DRAM hold a newer version of every record
//!   the disk page holds (`PcmLogging::needs_disk`; then the miss is a PCM hit, Fig. 8c).
//!   `own_page` gives the merged image (disk overlaid with the newest PCM and DRAM records,
//!   uncommitted ones included: under record locks their writers still own them).
//! - `commit` (Algorithm 2): flush the transaction's DRAM records, then clear its
//!   ActiveTxList entry — the ack is that write's completion.
//! - `abort`: the core frees the transaction's PCM records and ATL entry; the buffered
//!   frames get their before-images back (the first before of each record it changed).
//! - `maintain`: frees the units of completed destages and starts new ones under the
//!   high-low watermark.
//!
//! Settings (`pcm_tier`): DRAM and PCM sizes; the buffer pool gets what DRAM has left after
//! PCMLogging's tables (§6.1). The lock level is record and deadlocks are handled by
//! wait-die (§6.1) whatever `host.deadlock` says.
//!
//! Destaging follows `host.pcm.destage` (adaptive §5.2, or the high-low watermark §5.1).
//!
//! XIDs: a transaction's XID is its number (`Core::txn_number`), kept when wait-die
//! restarts it, not the engine's per-attempt `TxnId`. §4.2 reads X_c − X_t as the time since
//! a record was written, counted in transactions (PL-x's threshold is x × 10,000 of them);
//! with a fresh XID per attempt, every restart (8–9 per commit with 50 clients on one
//! warehouse) advanced that clock, and both PL-1 and PL-10 swapped on about nine flushed
//! records in ten. The engine keeps fresh attempt ids for what needs them (device TxIDs,
//! WAL log records, the deadlock victim rule). Reusing an aborted attempt's XID is safe
//! (crash argument in `pcmlogging.rs`, "XID reuse"). `host.pcm.xid_per_attempt` restores
//! the old rule.
//!
//! Run-on restart (`strategy::Resume::Pcm`, the crash checker's run-on mode,
//! `pcm_tier::check_run_on`): `create` takes up the PCM `pcmlogging::restart` left and the
//! crashed disk (`PcmLogging::open`) instead of formatting, and every XID is the
//! transaction's number plus the largest XID the crash image names (`pcmlogging.rs`,
//! "Run-on restart"). Over the emulated SSD it is refused (`host.pcm.external`).
//!
//! - `read_page_for` / `on_hit` (§3.3 record hits): a miss for a record PCM holds reads
//!   PCM only and marks the frame partial; a hit on a partial frame for a record PCM lacks
//!   reads the disk page then (the frame's `ready_at` moves to that read's end). The engine
//!   names the record a fetch is for (`engine::fetch_for`); a fetch without one is a
//!   whole-page request.

use super::pcmlogging::{PcmLogConfig, PcmLogging};
use super::{RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::buffer::Frame;
use crate::data::{PageImage, PageNo};
use crate::engine::Core;
use crate::pcm_tier::{Sizes, TierHooks, TierLog, TierRecording};
use crate::{HostConfig, HostError, LockLevel, Result};
use sim::{SimTime, TxnId};
use std::collections::BTreeMap;
use std::sync::Arc;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "pcmlogging",
    summary: "record-level PCMLogging: dirty records and the log in PCM, ActiveTxList commit, recovery by PCM scan (PCMLogging §3.3) over a Table 2 disk",
    lock_level: LockLevel::Record,
    check,
    create,
    recover,
};

fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    crate::pcm_tier::check_protocol("pcmlogging", p)?;
    cfg.pcm.validate()?;
    if cfg.lock_level == LockLevel::Page {
        return Err(HostError::Config {
            key: "host.lock_level".into(),
            reason: "record-level PCMLogging needs record locks (§3.3); use \"record\" or \"auto\""
                .into(),
        });
    }
    Ok(())
}

fn cerr(e: String) -> HostError {
    if e.starts_with("pcm full of uncommitted") || e.starts_with("ActiveTxList full") {
        // The configuration cannot hold the transactions in flight: an input problem.
        return HostError::Config {
            key: "host.pcm.pcm_bytes".into(),
            reason: format!(
                "{e}: the PCM is too small for the records of the transactions in flight"
            ),
        };
    }
    HostError::Stuck(format!("pcmlogging: {e}"))
}

struct Client {
    xid: u64,
    /// (page, slot, before) of each record changed, first change first.
    undo: Vec<(PageNo, u16, u64)>,
}

pub struct PcmLoggingStrategy {
    core: PcmLogging,
    clients: Vec<Client>,
    sizes: Sizes,
    recording: TierRecording,
    layout: crate::data::Layout,
    /// Pages whose buffered frame was built from PCM records alone (§3.3 record hits; the
    /// disk page not merged). A mark is reset at every miss of the page, so one left over
    /// from a frame that has since been evicted is never consulted.
    partial: PageBits,
    /// `host.pcm.xid_per_attempt`: XID = the attempt's `TxnId` instead of the transaction's
    /// number.
    xid_per_attempt: bool,
    /// Added to every XID: on a resumed PCM the largest XID it names (module docs, "Run-on
    /// restart"); 0 on a formatted one.
    xid_base: u64,
}

pub use crate::pcm_tier::PcmResume;

/// One bit per DB page (the partial marks): a buffer hit asks for its page's bit, and an
/// ordered set of marked pages made that lookup a tree search on every hit.
#[derive(Clone, Debug, Default)]
struct PageBits(Vec<u64>);

impl PageBits {
    fn with_pages(pages: u64) -> PageBits {
        PageBits(vec![0; pages.div_ceil(64) as usize])
    }

    fn get(&self, page: u64) -> bool {
        self.0
            .get((page / 64) as usize)
            .is_some_and(|w| w >> (page % 64) & 1 == 1)
    }

    fn set(&mut self, page: u64, on: bool) {
        let i = (page / 64) as usize;
        if i >= self.0.len() {
            if !on {
                return;
            }
            self.0.resize(i + 1, 0);
        }
        if on {
            self.0[i] |= 1 << (page % 64);
        } else {
            self.0[i] &= !(1 << (page % 64));
        }
    }
}

fn create(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    let s = &cfg.pcm;
    let sizes = s.sizes(cfg, &core.layout)?;
    // §6.1: the DRAM holds the pool and PCMLogging's tables.
    crate::pcm_tier::size_dram(core, sizes.frames);
    let pcm = crate::pcm_tier::new_pcm(s, sizes.pcm_bytes)?;
    let lcfg = PcmLogConfig {
        atl_entries: u64::from(cfg.clients) + 2,
        record_bytes: s.record_bytes,
        high_watermark: s.high_watermark,
        low_watermark: s.low_watermark,
        slots_per_page: u16::MAX,
        fault_early_atl_removal: s.fault_early_atl_removal,
        wear_delta: (s.wear_delta > 0).then_some(s.wear_delta),
        wear_seed: 1,
        fault_paper_pseudo_xid: s.fault_paper_pseudo_xid,
        fault_pseudo_xid_of_aborts: s.fault_pseudo_xid_of_aborts,
        fault_early_destage_free: s.fault_early_destage_free,
        adaptive_segment_bytes: s.adaptive_segment_bytes(),
        destage_interval_ns: s.destage_interval_ns,
        relocate_every: s.relocate_every,
        meta_regions: s.meta_regions,
        fault_early_relocation_switch: s.fault_early_relocation_switch,
        ..PcmLogConfig::default()
    };
    let disk = crate::external::open(cfg, core)?;
    // An engine resumed on the medium a run-on restart left (module docs, "Run-on restart").
    let resume = crate::pcm_tier::take_resume(core, "pcmlogging", &disk, &pcm)?;
    let (mut pl, xid_base, pcm_base, disk_base) = match resume {
        None => {
            let pl = PcmLogging::format(lcfg, pcm, disk).map_err(|e| HostError::Config {
                key: "host.pcm".into(),
                reason: e,
            })?;
            let base = pl.pcm.image().to_vec();
            (pl, 0, base, BTreeMap::new())
        }
        Some(r) => {
            let d = media::disk::Disk::from_image(disk.kind, r.disk.clone());
            let pl = PcmLogging::open(lcfg, r.pcm, d, r.end, r.xid_max).map_err(|e| {
                HostError::Corrupt(format!(
                    "pcmlogging cannot resume on its restarted PCM: {e}"
                ))
            })?;
            (pl, r.xid_max, r.pcm_base, r.disk)
        }
    };
    let layout = core.layout.clone();
    pl.set_initial_page(Arc::new(move |p| layout.initial_page(PageNo(p))));
    // The crash checker needs the write logs; the tag table keeps things only then.
    let record = core.tags.keep;
    let recording = if record {
        if xid_base == 0 {
            pl.pcm.set_logging(true);
        } // else the restart's writes are in the log already (`PcmResume::pcm`)
        pl.disk.set_logging(true);
        TierRecording::new(pcm_base, disk_base)
    } else {
        TierRecording::off()
    };
    crate::pcm_tier::attach_tier_sink(core, &mut pl.pcm, &mut pl.disk)?;
    Ok(Box::new(PcmLoggingStrategy {
        core: pl,
        clients: (0..cfg.clients)
            .map(|_| Client {
                xid: 0,
                undo: Vec::new(),
            })
            .collect(),
        sizes,
        recording,
        layout: core.layout.clone(),
        partial: PageBits::with_pages(core.layout.pages),
        xid_per_attempt: s.xid_per_attempt,
        xid_base: if cfg.fault_restart == "pcm-xid-from-one" {
            0 // BUG when planted: new XIDs collide with the restarted PCM's
        } else {
            xid_base
        },
    }))
}

fn recover(_ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    Err(HostError::Config {
        key: "host.strategy".into(),
        reason: "pcmlogging recovers from its PCM and disk images (pcm_tier::recover_db), not from the device".into(),
    })
}

impl Strategy for PcmLoggingStrategy {
    fn name(&self) -> &'static str {
        "pcmlogging"
    }

    /// The XID is the transaction's number (`Core::txn_number`), the same for every attempt
    /// (module docs, "XIDs"); with `xid_per_attempt`, the attempt's `TxnId`.
    fn begin(&mut self, core: &mut Core, c: u32, txn: TxnId, _now: SimTime) -> Result<()> {
        let cl = &mut self.clients[c as usize];
        cl.xid = self.xid_base
            + if self.xid_per_attempt {
                txn.0
            } else {
                core.txn_number
            };
        cl.undo.clear();
        Ok(())
    }

    fn on_update(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: u32,
        slot: u16,
        before: u64,
        after: u64,
        _now: SimTime,
    ) -> Result<()> {
        let page = core.pool.frame(frame).page;
        let cl = &mut self.clients[c as usize];
        cl.undo.push((page, slot, before));
        self.core
            .update(cl.xid, (page.0, slot), after)
            .map_err(cerr)
    }

    fn evictable(&self, _frame: &Frame) -> bool {
        true
    }

    fn write_back(&mut self, _core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        self.core.flush_page(frame.page.0, now).map_err(cerr)
    }

    fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        self.read_record_for_miss(core, page, None, now)
    }

    fn own_page(&self, _c: u32, page: PageNo) -> Option<Arc<PageImage>> {
        // Every fetch sees the disk overlaid with PCM (and DRAM) records.
        Some(Arc::new(PageImage {
            page,
            lsn: 0,
            values: self.core.current_page(page.0, self.layout.slots(page)),
        }))
    }

    fn commit(&mut self, _core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let cl = &mut self.clients[c as usize];
        cl.undo.clear();
        self.core.commit(cl.xid, now).map_err(cerr)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let cl = &mut self.clients[c as usize];
        let undo = std::mem::take(&mut cl.undo);
        for (page, slot, before) in undo.into_iter().rev() {
            if let Some(f) = core.pool.find(page) {
                core.pool.frame_mut(f).values[slot as usize] = before;
            }
        }
        self.core.abort(cl.xid, now).map_err(cerr)
    }

    fn maintain(&mut self, _core: &mut Core, now: SimTime) -> Result<()> {
        self.core.maintain(now).map_err(cerr)?;
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let k = self.core.counters();
        let w = self.core.pcm.wear();
        let r = self.core.record_wear(); // the record units alone (Algorithm 4's domain)
        [
            ("pcm_records_flushed", k.records_flushed),
            ("pcm_commits", k.commits),
            ("pcm_aborts", k.aborts),
            ("pcm_destaged_pages", k.destaged_pages),
            ("pcm_destaged_records", k.destaged_records),
            ("pcm_swaps", k.swaps),
            ("pcm_relocations", k.relocations),
            ("pcm_hits", k.pcm_hits),
            ("pcm_miss_disk_reads", k.miss_disk_reads),
            ("pcm_record_hits", k.pcm_record_hits),
            ("pcm_partial_completions", k.partial_completions),
            ("pcm_line_writes", self.core.pcm.counters.line_writes),
            ("pcm_line_reads", self.core.pcm.counters.line_reads),
            ("pcm_units", self.core.geometry().units),
            ("pcm_units_used", self.core.used_units()),
            ("pcm_bytes", self.sizes.pcm_bytes),
            ("dram_bytes", self.sizes.dram_bytes),
            ("dram_table_reserve_bytes", self.sizes.table_reserve_bytes),
            ("buffer_frames", u64::from(self.sizes.frames)),
            ("disk_reads", self.core.disk.counters.reads),
            ("disk_writes", self.core.disk.counters.writes),
        ]
        .into_iter()
        .chain(w.counters()) // Fig. 11: mean, worst 1 % / 5 %, variance, max
        .chain(r.counters_named([
            "pcm_record_wear_mean_x100",
            "pcm_record_wear_worst_1pct_x100",
            "pcm_record_wear_worst_5pct_x100",
            "pcm_record_wear_variance_x100",
            "pcm_record_wear_max_unit_writes",
        ]))
        .chain(self.core.destages.counters())
        .chain(self.core.disk.medium_counters())
        .collect()
    }

    fn tier(&mut self) -> Option<&mut dyn TierHooks> {
        Some(self)
    }
}

impl PcmLoggingStrategy {
    /// A buffer miss of `page` for record `slot` (`None`: the whole page; module docs,
    /// `read_page_for` / `on_hit`).
    fn read_record_for_miss(
        &mut self,
        core: &mut Core,
        page: PageNo,
        slot: Option<u16>,
        now: SimTime,
    ) -> Result<SimTime> {
        // Pages brought into DRAM (as wal-pcm counts them); the disk's share is
        // `disk_reads`, PCM's `pcm_hits`.
        core.stats.page_reads += 1;
        let (_, t, partial) = self
            .core
            .read_record_for_miss(page.0, slot, now)
            .map_err(cerr)?;
        // A miss means the page is not in the pool: any earlier mark is stale.
        self.partial.set(page.0, partial);
        Ok(t)
    }
}

impl TierHooks for PcmLoggingStrategy {
    fn read_page_for(
        &mut self,
        core: &mut Core,
        page: PageNo,
        slot: Option<u16>,
        now: SimTime,
    ) -> Option<Result<SimTime>> {
        Some(self.read_record_for_miss(core, page, slot, now))
    }

    fn on_hit(
        &mut self,
        core: &mut Core,
        frame: u32,
        slot: Option<u16>,
        ready: SimTime,
    ) -> Result<SimTime> {
        let page = core.pool.frame(frame).page.0;
        if !self.partial.get(page) || slot.is_some_and(|s| self.core.holds((page, s))) {
            return Ok(ready);
        }
        // A record the partial frame lacks: merge the disk page under it now; every
        // client using the frame waits for that read.
        self.partial.set(page, false);
        let t = self.core.complete_partial(page, ready);
        let f = core.pool.frame_mut(frame);
        f.ready_at = f.ready_at.max(t);
        Ok(t)
    }

    /// Algorithm 3 on the PCM as it stands (every issued write persisted): the time is the
    /// scan of the superblock, ActiveTxList, bitmap and valid record headers (§6.2.4); no
    /// disk I/O.
    fn measure_recovery(&self, _now: SimTime) -> Result<crate::metrics::HostRecoveryMetrics> {
        crate::pcm_tier::measure_restart("pcmlogging", || {
            super::pcmlogging::recover(&self.core.pcm).map(|r| (r.scan_ns, 0))
        })
    }

    fn take_tier_log(&mut self) -> Option<TierLog> {
        self.recording.take(&mut self.core.pcm, &mut self.core.disk)
    }
}

#[cfg(test)]
mod tests {
    use super::PageBits;

    /// A mark set is read back, cleared by its own page only, and a page past the sized
    /// range is marked too (the set grows) rather than lost.
    #[test]
    fn page_bits_keep_each_pages_mark() {
        let mut b = PageBits::with_pages(130);
        for p in [0u64, 63, 64, 129] {
            assert!(!b.get(p));
            b.set(p, true);
            assert!(b.get(p));
        }
        assert!(!b.get(1) && !b.get(65) && !b.get(128));
        b.set(64, false);
        assert!(!b.get(64) && b.get(63) && b.get(129));
        assert!(!b.get(1_000));
        b.set(1_000, false);
        assert!(!b.get(1_000));
        b.set(1_000, true);
        assert!(b.get(1_000) && b.get(129));
    }
}
