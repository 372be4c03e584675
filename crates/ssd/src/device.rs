//! `Device`: the transactional SSD a host talks to.
//!
//! It validates the host interface (BEGIN / WRITE / COMMIT / ABORT / WriteAtomic / BARRIER /
//! READ / TRIM), assigns each transaction a device-unique sequence number, keeps GC,
//! wear leveling and checkpoints running between commands, and forwards each command to the
//! commit protocol. Every command returns the instant it completes (its ack).
//!
//! Misuse is an error value naming the problem: an unknown, still-active or finished TxId,
//! a transaction larger than `ftl.max_tx_pages`, more than `ftl.max_active_txs` at once, a
//! logical page beyond the device, or anything the protocol cannot support.

use crate::config::FtlConfig;
use crate::core::{FtlCore, ReadOutcome};
use crate::error::{Result, SsdError};
use crate::gc;
use crate::meta;
use crate::oob::CORE_OOB_BYTES;
use crate::protocol::{self, CommitProtocol, ProtocolConfig, ProtocolInfo, TxRef};
use crate::recovery::{scan_blocks, RecoveryCtx};
use media::image::ImageParams;
use media::{BlockId, Nand, NandConfig};
use serde::{Deserialize, Serialize};
use sim::{Lpn, SimTime, TxId};
use std::collections::{BTreeMap, VecDeque};

#[path = "delta.rs"]
mod delta;
#[path = "native.rs"]
mod native;
pub use native::NativeOob;

/// Everything needed to build a device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    pub nand: NandConfig,
    pub ftl: FtlConfig,
    pub protocol: ProtocolConfig,
}

impl DeviceConfig {
    /// The protocol, looked up in the registry.
    pub fn protocol_info(&self) -> Result<&'static ProtocolInfo> {
        protocol::lookup(&self.protocol.name)
    }

    /// The NAND image parameters this configuration implies (the OOB width comes from the
    /// protocol's layout).
    pub fn image_params(&self) -> Result<ImageParams> {
        let info = self.protocol_info()?;
        let width = info.oob_bytes.max(CORE_OOB_BYTES);
        if width as usize > crate::core::MAX_OOB_BYTES {
            return Err(SsdError::Config {
                key: "protocol.name".into(),
                reason: format!(
                    "{}'s OOB layout is {width} bytes; at most {} are supported",
                    info.name,
                    crate::core::MAX_OOB_BYTES
                ),
            });
        }
        let p = self.nand.image_params(width);
        p.validate()?;
        Ok(p)
    }

    /// The FTL configuration as the protocol will run it (checkpoints on if it needs them).
    pub fn effective_ftl(&self) -> Result<FtlConfig> {
        let info = self.protocol_info()?;
        let mut f = self.ftl.clone();
        // Found by an adversarial test campaign: tc, scc and bpcc accepted
        // checkpoints, then recovered from the scan set alone and lost acked transactions.
        if f.checkpoint_interval > 0 && !info.supports_checkpoints {
            return Err(SsdError::Config {
                key: "ftl.checkpoint_interval".into(),
                reason: format!(
                    "protocol {} recovers by scanning the whole device and cannot use mapping checkpoints; set ftl.checkpoint_interval = 0",
                    info.name
                ),
            });
        }
        if info.needs_checkpoints && f.checkpoint_interval == 0 {
            let g = self.nand.geometry();
            f.checkpoint_interval = u64::from(g.pus())
                * u64::from(f.checkpoint_window_blocks.max(1))
                * u64::from(g.pages_per_block);
        }
        Ok(f)
    }
}

#[derive(Clone, Copy, Debug)]
struct ActiveTx {
    seq: u32,
    pages: u32,
    /// When the last program this transaction's commands set going ends: an ABORT is
    /// acked no earlier, so the work of an aborted transaction does not overlap what the
    /// host issues after the ack (a strict-isolation barrier waits for it).
    work_until: SimTime,
}

/// What a recovery cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    pub pages_read: u64,
    /// Simulated time from power-on until the device accepts commands.
    pub time_ns: u64,
    pub scanned_pages: u64,
    pub had_checkpoint: bool,
}

const FINISHED_MEMORY: usize = 4096;

pub struct Device {
    pub core: FtlCore,
    proto: Box<dyn CommitProtocol>,
    info: &'static ProtocolInfo,
    active: BTreeMap<TxId, ActiveTx>,
    finished: BTreeMap<TxId, &'static str>,
    finished_order: VecDeque<TxId>,
    next_seq: u32,
    /// Latest completion of anything issued (for BARRIER).
    issued_until: SimTime,
    atomic_ids: u64,
}

impl Device {
    /// A freshly formatted device on `nand` (which must be blank).
    pub fn create(cfg: &DeviceConfig, nand: Nand) -> Result<Device> {
        let info = cfg.protocol_info()?;
        let mut core = FtlCore::new(nand, cfg.effective_ftl()?)?;
        crate::core::format_modes(&mut core)?;
        if core.checkpoints_enabled() {
            meta::format(&mut core, SimTime::ZERO)?;
        }
        let proto = (info.create)(&cfg.protocol, &mut core)?;
        Ok(Device::assemble(core, proto, info, 1))
    }

    /// An independent copy of the device in its current state: medium, FTL, protocol and
    /// command bookkeeping, so that the copy given the same commands behaves exactly as the
    /// original would. `None` for a device written through to an image file (the copy
    /// would not be). Used to share one prefilled device between runs (`world::prefill`).
    pub fn try_clone(&self) -> Option<Device> {
        if self.core.nand.is_file_backed() {
            return None;
        }
        Some(Device {
            core: self.core.clone(),
            proto: self.proto.clone_protocol(),
            info: self.info,
            active: self.active.clone(),
            finished: self.finished.clone(),
            finished_order: self.finished_order.clone(),
            next_seq: self.next_seq,
            issued_until: self.issued_until,
            atomic_ids: self.atomic_ids,
        })
    }

    /// A device in memory.
    pub fn in_memory(cfg: &DeviceConfig) -> Result<Device> {
        let nand = Nand::new(cfg.image_params()?, cfg.nand.timing.clone())?;
        Device::create(cfg, nand)
    }

    fn assemble(
        core: FtlCore,
        proto: Box<dyn CommitProtocol>,
        info: &'static ProtocolInfo,
        next_seq: u32,
    ) -> Device {
        Device {
            core,
            proto,
            info,
            active: BTreeMap::new(),
            finished: BTreeMap::new(),
            finished_order: VecDeque::new(),
            next_seq,
            issued_until: SimTime::ZERO,
            atomic_ids: 0,
        }
    }

    /// Rebuilds a device from the medium alone, as after a power cut. `nand` holds the
    /// surviving image; `cfg` must be the configuration it was created with.
    pub fn recover(cfg: &DeviceConfig, nand: Nand) -> Result<(Device, RecoveryReport)> {
        Device::recover_with(cfg, nand, crate::config::RecoveryReads::Overlapped)
    }

    /// `recover`, issuing the scans' reads as `reads` says (`RecoveryReads`): the recovered
    /// device and the pages read are the same either way; only `time_ns` differs.
    pub fn recover_with(
        cfg: &DeviceConfig,
        nand: Nand,
        reads: crate::config::RecoveryReads,
    ) -> Result<(Device, RecoveryReport)> {
        let info = cfg.protocol_info()?;
        let params = cfg.image_params()?;
        if nand.image().params() != &params {
            return Err(SsdError::CorruptImage {
                detail: "the image was made with a different geometry or OOB layout than this configuration".into(),
            });
        }
        let before = nand.counters();
        let mut core = FtlCore::new(nand, cfg.effective_ftl()?)?;
        core.clear_for_recovery();
        core.recovery_reads = reads;
        let (root, t_root) = if core.checkpoints_enabled() {
            meta::load_root(&mut core, SimTime::ZERO)?
        } else {
            (None, SimTime::ZERO)
        };
        let blocks: Vec<(BlockId, u32)> = match &root {
            Some(r) => r.scan_set.clone(),
            None => {
                let meta: Vec<BlockId> = core.ckpt.meta_blocks().to_vec();
                (0..core.geo.blocks())
                    .map(BlockId)
                    .filter(|b| !meta.contains(b))
                    .map(|b| (b, 0))
                    .collect()
            }
        };
        let (scan, t_scan) = scan_blocks(&mut core, &blocks, t_root)?;
        let scanned_pages = scan.len() as u64;
        let had_checkpoint = root.is_some();
        let mut ctx = RecoveryCtx {
            core: &mut core,
            root,
            scan,
            scanned_blocks: blocks,
            ready: t_scan,
            params: &cfg.protocol,
        };
        let mut proto = (info.recover)(&mut ctx)?;
        let root = ctx.root.take();
        let tails = std::mem::take(&mut ctx.scan.tails);
        let mut end = ctx.ready;
        meta::after_recovery(&mut core, root.as_ref());
        core.finish_recovery(&tails);
        core.want_gc_everywhere();
        end = end.max(proto.after_recovery(&mut core, end)?);
        if core.checkpoints_enabled() {
            // Crash safety of recovery itself: until the checkpoint that ends
            // recovery is durable, the newest durable root is the one recovery started from,
            // and a second crash recovers from it again. So before that checkpoint recovery
            // must not erase anything that root's view needs. GC does erase (its victims),
            // so the checkpoint goes first, and GC runs after it as in normal operation.
            // Only when the checkpoint has no room for its translation pages (a crash can
            // leave every unit at the block it keeps for GC) does GC run first, in as few
            // units as give it room; then every root GC writes names the old root's scan set
            // and protocol state (restored by `meta::after_recovery`) plus any blocks it
            // opens, exactly as a root written by GC between two checkpoints does.
            if !meta::checkpoint_fits(&core) {
                for pu in 0..core.geo.pus() {
                    let pu = media::PuId(pu);
                    if core.free_blocks(pu) <= 1 {
                        match gc::collect(&mut core, proto.as_mut(), pu, end) {
                            Ok(t) => end = end.max(t),
                            Err(SsdError::OutOfSpace { .. }) => {}
                            Err(e) => return Err(e),
                        }
                    }
                    if meta::checkpoint_fits(&core) {
                        break;
                    }
                }
            }
            end = end.max(meta::checkpoint(&mut core, proto.as_mut(), end)?);
        }
        // The device accepts commands with its free-block reserve in place, as after
        // `maintain` (`FtlCore::reserve_shortfall`): GC after the checkpoint, as in normal
        // operation. Like the GC `maintain` runs, it overlaps the commands that follow
        // rather than delaying the first of them, so it is not part of `time_ns`.
        gc::restore_reserve(&mut core, proto.as_mut(), end)?;
        let after = core.nand.counters();
        let report = RecoveryReport {
            pages_read: (after.reads + after.oob_reads) - (before.reads + before.oob_reads),
            time_ns: end.as_ns(),
            scanned_pages,
            had_checkpoint,
        };
        // The device runs on with the default (the mode is recovery's timing only).
        core.recovery_reads = crate::config::RecoveryReads::Overlapped;
        let mut dev = Device::assemble(core, proto, info, 1);
        dev.issued_until = end;
        #[cfg(debug_assertions)]
        dev.check_invariants().map_err(|e| SsdError::CorruptImage {
            detail: format!("after recovery: {e}"),
        })?;
        Ok((dev, report))
    }

    pub fn info(&self) -> &'static ProtocolInfo {
        self.info
    }
    pub fn protocol(&self) -> &dyn CommitProtocol {
        self.proto.as_ref()
    }
    pub fn logical_pages(&self) -> u32 {
        self.core.logical_pages()
    }
    pub fn active_txs(&self) -> usize {
        self.active.len()
    }

    /// Runs GC where a unit is short of free blocks, static wear leveling, and checkpoints
    /// that are due or that the protocol asks for (after which GC runs again where it is
    /// still wanted: a checkpoint may have given GC blocks to collect, as LightTx's zone
    /// sliding does). Called before every command that may allocate.
    pub fn maintain(&mut self, now: SimTime) -> Result<()> {
        self.collect_wanted(now)?;
        gc::wear_level(&mut self.core, self.proto.as_mut(), now)?;
        let due = self
            .core
            .ckpt
            .due(self.core.cfg.checkpoint_interval, self.core.geo.pus());
        let asked = self.core.checkpoints_enabled() && self.proto.wants_checkpoint(&self.core, now);
        if due || asked {
            meta::checkpoint(&mut self.core, self.proto.as_mut(), now)?;
            self.collect_wanted(now)?;
        }
        gc::restore_reserve(&mut self.core, self.proto.as_mut(), now)
    }

    /// Whether the protocol's free-block reserve holds (`FtlCore::reserve_shortfall`): it
    /// does when a command starts (after `maintain`) and when recovery hands the device
    /// over, on any device whose GC can still win blocks. The crash checker asserts it after
    /// every recovery.
    pub fn check_reserve(&self) -> std::result::Result<(), String> {
        match self.core.reserve_shortfall() {
            None => Ok(()),
            Some(why) => Err(why),
        }
    }

    fn collect_wanted(&mut self, now: SimTime) -> Result<()> {
        for pu in self.core.take_gc_wanted() {
            if self.core.needs_gc(pu) {
                gc::collect(&mut self.core, self.proto.as_mut(), pu, now)?;
            }
        }
        Ok(())
    }

    fn done(&mut self, t: SimTime) -> SimTime {
        self.issued_until = self.issued_until.max(t);
        t
    }

    fn next_tx_seq(&mut self) -> u32 {
        let s = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1).max(1);
        s
    }

    fn active_tx(&self, tx: TxId) -> Result<ActiveTx> {
        match self.active.get(&tx) {
            Some(a) => Ok(*a),
            None => match self.finished.get(&tx) {
                Some(how) => Err(SsdError::TxFinished { tx, how }),
                None => Err(SsdError::UnknownTx { tx }),
            },
        }
    }

    fn finish(&mut self, tx: TxId, how: &'static str) {
        self.active.remove(&tx);
        self.finished.insert(tx, how);
        self.finished_order.push_back(tx);
        if self.finished_order.len() > FINISHED_MEMORY {
            if let Some(old) = self.finished_order.pop_front() {
                self.finished.remove(&old);
            }
        }
    }

    /// BEGIN(tx).
    pub fn begin(&mut self, tx: TxId, now: SimTime) -> Result<SimTime> {
        if self.active.contains_key(&tx) {
            return Err(SsdError::TxInUse { tx });
        }
        if self.active.len() as u32 >= self.core.cfg.max_active_txs {
            return Err(SsdError::TooManyActive {
                max: self.core.cfg.max_active_txs,
            });
        }
        let seq = self.next_tx_seq();
        let t = self
            .proto
            .begin(&mut self.core, TxRef { host: tx, seq }, now)?;
        self.finished.remove(&tx);
        self.active.insert(
            tx,
            ActiveTx {
                seq,
                pages: 0,
                work_until: SimTime::ZERO,
            },
        );
        Ok(self.done(t))
    }

    /// WRITE(tx, lpn, data): accepted, not durable until COMMIT is acked.
    pub fn write(&mut self, tx: TxId, lpn: Lpn, tag: u64, now: SimTime) -> Result<SimTime> {
        self.core.check_lpn(lpn)?;
        let a = self.active_tx(tx)?;
        if a.pages + 1 > self.core.cfg.max_tx_pages {
            return Err(SsdError::TxTooLarge {
                tx,
                max_pages: self.core.cfg.max_tx_pages,
            });
        }
        self.maintain(now)?;
        self.core.program_end_since = SimTime::ZERO;
        let t = self.proto.write(
            &mut self.core,
            TxRef {
                host: tx,
                seq: a.seq,
            },
            lpn,
            tag,
            now,
        )?;
        let work = self.core.program_end_since;
        if let Some(x) = self.active.get_mut(&tx) {
            x.pages += 1;
            x.work_until = x.work_until.max(work);
        }
        self.count_write();
        Ok(self.done(t))
    }

    fn count_write(&mut self) {
        self.core.stats.host_writes += 1;
        self.core.clock += 1;
        self.core.ckpt.writes_since += 1;
    }

    /// COMMIT(tx): acked when the whole transaction is durable.
    pub fn commit(&mut self, tx: TxId, now: SimTime) -> Result<SimTime> {
        let a = self.active_tx(tx)?;
        self.maintain(now)?;
        let t = self.proto.commit(
            &mut self.core,
            TxRef {
                host: tx,
                seq: a.seq,
            },
            now,
        )?;
        self.finish(tx, "committed");
        self.core.stats.txs_committed += 1;
        Ok(self.done(t))
    }

    /// WRITE(tx, lpn, data) of the transaction's last page together with COMMIT(tx): the
    /// host had the page buffered when the transaction committed (Flag Commit §3.3). Acked
    /// when the whole transaction is durable. A protocol that records the commit in the
    /// page's own program (CFC) saves the commit flag's partial program; the others run
    /// WRITE and then COMMIT, exactly as two commands would.
    pub fn commit_write(&mut self, tx: TxId, lpn: Lpn, tag: u64, now: SimTime) -> Result<SimTime> {
        if !self.proto.fuses_commit_write() {
            self.write(tx, lpn, tag, now)?;
            return self.commit(tx, now);
        }
        self.core.check_lpn(lpn)?;
        let a = self.active_tx(tx)?;
        if a.pages + 1 > self.core.cfg.max_tx_pages {
            return Err(SsdError::TxTooLarge {
                tx,
                max_pages: self.core.cfg.max_tx_pages,
            });
        }
        self.maintain(now)?;
        let r = TxRef {
            host: tx,
            seq: a.seq,
        };
        let t = self.proto.commit_write(&mut self.core, r, lpn, tag, now)?;
        self.count_write();
        self.finish(tx, "committed");
        self.core.stats.txs_committed += 1;
        Ok(self.done(t))
    }

    /// ABORT(tx).
    /// ABORT(tx): acked when the device has finished what the transaction set going (its
    /// programs already issued; they cannot be recalled) and what the protocol's abort
    /// itself requires (anything it programs), not at once.
    pub fn abort(&mut self, tx: TxId, now: SimTime) -> Result<SimTime> {
        let a = self.active_tx(tx)?;
        self.core.program_end_since = SimTime::ZERO;
        let t = self.proto.abort(
            &mut self.core,
            TxRef {
                host: tx,
                seq: a.seq,
            },
            now,
        )?;
        let t = t.max(a.work_until).max(self.core.program_end_since);
        self.finish(tx, "aborted");
        self.core.stats.txs_aborted += 1;
        Ok(self.done(t))
    }

    /// A plain write of one page: a one-page transaction, acked when durable.
    pub fn write_plain(&mut self, lpn: Lpn, tag: u64, now: SimTime) -> Result<SimTime> {
        self.core.check_lpn(lpn)?;
        self.maintain(now)?;
        let seq = self.next_tx_seq();
        let tx = TxRef {
            host: TxId(u64::MAX),
            seq,
        };
        let t = self.proto.write_plain(&mut self.core, tx, lpn, tag, now)?;
        self.count_write();
        Ok(self.done(t))
    }

    /// A plain write that covers `lpn` only in part (a sub-page or unaligned block-trace
    /// request): read-modify-write. The device reads the page's current version (a NAND
    /// read, counted in `rmw_reads`), merges the new sectors into it in its buffer, and
    /// programs the whole page once the read is done; acked when durable. A page that was
    /// never written (or was trimmed) merges with zeroes: no read. The merge itself is not
    /// modelled byte by byte: the programmed page carries the new `tag`, as `write_plain`'s.
    pub fn write_partial(&mut self, lpn: Lpn, tag: u64, now: SimTime) -> Result<SimTime> {
        self.core.check_lpn(lpn)?;
        let (old, read_done) = self.proto.read(&mut self.core, lpn, now)?;
        self.core.stats.partial_writes += 1;
        if !matches!(old, ReadOutcome::Unmapped) {
            self.core.stats.rmw_reads += 1;
        }
        // The program's data is ready when the old page has been read and merged.
        self.write_plain(lpn, tag, read_done.max(now))
    }

    /// WriteAtomic(pages) as in TxFlash: the pages are known up front; acked when durable.
    pub fn write_atomic(&mut self, pages: &[(Lpn, u64)], now: SimTime) -> Result<SimTime> {
        for (lpn, _) in pages {
            self.core.check_lpn(*lpn)?;
        }
        self.atomic_ids += 1;
        let tx = TxId((1 << 63) | self.atomic_ids);
        let mut t = self.begin(tx, now)?;
        for (lpn, tag) in pages {
            match self.write(tx, *lpn, *tag, now) {
                Ok(w) => t = t.max(w),
                Err(e) => {
                    let _ = self.abort(tx, now);
                    return Err(e);
                }
            }
        }
        self.commit(tx, t)
    }

    /// READ(lpn): the newest committed version.
    pub fn read(&mut self, lpn: Lpn, now: SimTime) -> Result<(ReadOutcome, SimTime)> {
        let r = self.proto.read(&mut self.core, lpn, now)?;
        self.core.stats.host_reads += 1;
        // A never-written page: zeroes from the mapping table, no NAND read (counted).
        if matches!(r.0, ReadOutcome::Unmapped) {
            self.core.stats.unmapped_reads += 1;
        }
        Ok(r)
    }

    /// TRIM(lpn): acked when durable.
    pub fn trim(&mut self, lpn: Lpn, now: SimTime) -> Result<SimTime> {
        if !self.info.supports_trim {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: "trim".into(),
            });
        }
        self.core.check_lpn(lpn)?;
        self.maintain(now)?;
        let t = self.proto.trim(&mut self.core, lpn, now)?;
        self.core.stats.host_trims += 1;
        Ok(self.done(t))
    }

    /// BARRIER: completes when everything issued before it has completed.
    pub fn barrier(&mut self, now: SimTime) -> SimTime {
        now.max(self.issued_until)
    }

    /// DRAM by structure: the FTL's, the protocol's and the transaction table.
    pub fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.core.dram_bytes();
        v.extend(self.proto.dram_bytes());
        v.push((
            "device transaction table",
            (self.active.len() + self.finished.len()) as u64 * 24,
        ));
        v
    }

    /// The bytes of DRAM the commit protocol's own tables use (`dram_bytes` without the
    /// FTL's mapping, reverse-map, flag and block tables and the device transaction table).
    pub fn protocol_dram_bytes(&self) -> u64 {
        self.proto.dram_bytes().iter().map(|(_, b)| *b).sum()
    }

    /// Protocol-specific counters.
    pub fn protocol_counters(&self) -> Vec<(&'static str, u64)> {
        self.proto.counters()
    }

    /// Full consistency check of FTL and protocol tables (expensive).
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.core.check_invariants()?;
        self.proto.check_invariants(&self.core)
    }

    pub fn into_nand(self) -> Nand {
        self.core.nand
    }
}
