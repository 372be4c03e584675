//! `FtlCore`: the page-mapping FTL every commit protocol stands on.
//!
//! It owns the mapping table (logical → physical) and its reverse, per-page liveness flags,
//! per-block bookkeeping, one allocation head per (parallel unit, stream), the free pools,
//! summary pages and (with `meta`) mapping checkpoints. It does not decide what a write
//! means: commit protocols call `program`, `map`, `pin` and friends, and GC (in `gc`) calls
//! back into the protocol through `GcHooks`.
//!
//! A page is *live* when it is mapped (`VALID`) or pinned by the protocol (`PIN_PROTO`, e.g.
//! the intentions of an active transaction, a TC commit record, a BPCC straddler) or by the
//! FTL (`PIN_CORE`, translation pages). GC copies live pages and discards the rest.
//!
//! Invariants (`check_invariants`):
//! - `l2p[lpn] = p` ⇔ `p2l[p] = lpn` and `VALID` is set on `p`;
//! - each block's `live` and `valid` counts equal the flags of its pages;
//! - a block is in its parallel unit's free pool (or window) iff its state is `Free`;
//! - every open head points at an `Open` block of that stream.
//!
//! Erase ordering: a page that stops being live because of a newer write stays physically
//! needed until that write is durable. `invalidate` records that instant in the block's
//! `erase_not_before`, and GC never starts an erase earlier. This is what keeps a crash
//! between "new copy in flight" and "old copy erased" from losing data.

use crate::config::{FtlConfig, Striping};
use crate::error::{Result, SsdError};
use crate::meta::Ckpt;
use crate::oob::{self, kind};
use crate::stats::FtlStats;
use media::{BlockId, Content, Geometry, Nand, OpTiming, PageView, Ppa, PuId};
use sim::{Lpn, SimTime};
use std::collections::VecDeque;

pub const VALID: u8 = 1;
pub const PIN_PROTO: u8 = 2;
pub const PIN_CORE: u8 = 4;
pub const WRITTEN: u8 = 8;
const LIVE: u8 = VALID | PIN_PROTO | PIN_CORE;

/// Number of allocation streams per parallel unit.
pub const NSTREAMS: usize = 8;
/// Blocks per parallel unit kept out of the logical space for open heads (host, GC, map,
/// one protocol stream).
const OPEN_RESERVE: u32 = 4;

/// An allocation stream: pages of one stream fill their own open block in each parallel unit,
/// so data of different lifetimes (host writes, GC copies, translation pages) do not mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stream(pub u8);

impl Stream {
    pub const HOST: Stream = Stream(0);
    pub const GC: Stream = Stream(1);
    pub const MAP: Stream = Stream(2);
    /// Streams 3..8 are free for protocols (commit records, per-transaction logs).
    pub const PROTO0: Stream = Stream(3);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    Free,
    Open,
    Full,
    Bad,
    /// Reserved for the root-record log; never allocated or collected.
    Meta,
}

#[derive(Clone, Debug)]
pub struct BlockMeta {
    pub state: BlockState,
    pub live: u16,
    pub valid: u16,
    pub next_page: u16,
    pub stream: u8,
    /// Host-write clock at the block's last program (its age, for cost-benefit).
    pub stamp: u64,
    /// Whether GC may choose this block (a protocol may protect blocks, e.g. LightTx zones).
    pub eligible: bool,
    /// Free but possibly not cleanly erased (found after recovery): erase before use.
    pub dirty: bool,
    /// GC must not start erasing this block before this instant (see module docs).
    pub erase_not_before: SimTime,
}

impl BlockMeta {
    fn new() -> BlockMeta {
        BlockMeta {
            state: BlockState::Free,
            live: 0,
            valid: 0,
            next_page: 0,
            stream: 0,
            stamp: 0,
            eligible: true,
            dirty: false,
            erase_not_before: SimTime::ZERO,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct PuAlloc {
    pub(crate) free: Vec<BlockId>,
    /// With checkpoints: blocks recorded in the latest root as where writes go next, with the
    /// instant that root became durable (no program may start in them earlier).
    pub(crate) window: VecDeque<(BlockId, SimTime)>,
    pub(crate) heads: [u32; NSTREAMS],
}

/// What a host read finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    Unmapped,
    Tag(u64),
    Bytes(Vec<u8>),
    /// The mapped page could not be read (a bug or an unrecoverable medium).
    Uncorrectable,
}

pub struct FtlCore {
    pub nand: Nand,
    pub cfg: FtlConfig,
    pub geo: Geometry,
    logical_pages: u32,
    data_pages_per_block: u32,
    l2p: Vec<Ppa>,
    p2l: Vec<u32>,
    pflags: Vec<u8>,
    pub(crate) blocks: Vec<BlockMeta>,
    pub(crate) pus: Vec<PuAlloc>,
    stripe_order: Vec<PuId>,
    stripe_cursor: usize,
    pub stats: FtlStats,
    /// Host page writes so far: the FTL's notion of age.
    pub clock: u64,
    /// Latest end of any program issued so far.
    pub program_end_max: SimTime,
    pub(crate) ckpt: Ckpt,
    gc_threshold_blocks: u32,
    pub(crate) erases_since_wl_check: u64,
}

impl FtlCore {
    /// An FTL over a freshly erased device. Validates the configuration against the geometry.
    pub fn new(nand: Nand, cfg: FtlConfig) -> Result<FtlCore> {
        let geo = nand.geometry().clone();
        cfg.validate(geo.blocks_per_plane)?;
        let summary = u32::from(cfg.summary_pages);
        let data_pages_per_block = geo.pages_per_block - summary;
        let blocks = geo.blocks() as usize;
        let ckpt = Ckpt::new(&geo, &cfg);
        let meta_blocks = ckpt.meta_block_count();
        let usable = u64::from(geo.blocks() - meta_blocks) * u64::from(data_pages_per_block);
        let logical = ((usable as f64) * (1.0 - cfg.over_provisioning)).floor() as u64;
        // Keep at least the GC threshold plus a few open blocks free in every parallel unit.
        let reserve = u64::from(geo.pus())
            * u64::from(cfg.gc_threshold_blocks(geo.blocks_per_plane) + OPEN_RESERVE)
            * u64::from(data_pages_per_block);
        let logical = logical.min(usable.saturating_sub(reserve));
        if logical == 0 {
            return Err(SsdError::Config {
                key: "ftl.over_provisioning".into(),
                reason: "leaves no logical space on this geometry".into(),
            });
        }
        let mut core = FtlCore {
            nand,
            gc_threshold_blocks: cfg.gc_threshold_blocks(geo.blocks_per_plane),
            logical_pages: logical as u32,
            data_pages_per_block,
            l2p: vec![Ppa::NONE; logical as usize],
            p2l: vec![u32::MAX; geo.pages() as usize],
            pflags: vec![0; geo.pages() as usize],
            blocks: vec![BlockMeta::new(); blocks],
            pus: Vec::new(),
            stripe_order: Vec::new(),
            stripe_cursor: 0,
            stats: FtlStats::default(),
            clock: 0,
            program_end_max: SimTime::ZERO,
            ckpt,
            cfg,
            geo,
            erases_since_wl_check: 0,
        };
        core.stripe_order = stripe_order(&core.geo, core.cfg.striping);
        core.rebuild_pools(false);
        Ok(core)
    }

    /// Rebuilds free pools from block states. `after_recovery` marks free blocks dirty: their
    /// contents are unknown until erased.
    pub(crate) fn rebuild_pools(&mut self, after_recovery: bool) {
        let meta: Vec<BlockId> = self.ckpt.meta_blocks().to_vec();
        self.pus = (0..self.geo.pus())
            .map(|_| PuAlloc {
                free: Vec::new(),
                window: VecDeque::new(),
                heads: [u32::MAX; NSTREAMS],
            })
            .collect();
        for b in 0..self.geo.blocks() {
            let block = BlockId(b);
            let m = &mut self.blocks[b as usize];
            if meta.contains(&block) {
                m.state = BlockState::Meta;
                m.eligible = false;
                continue;
            }
            if self.nand.image().is_bad(block) {
                m.state = BlockState::Bad;
                continue;
            }
            if m.state == BlockState::Free {
                if after_recovery {
                    m.dirty = true;
                }
                let pu = self.geo.pu_of_block(block);
                self.pus[pu.0 as usize].free.push(block);
            }
        }
    }

    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }
    pub fn data_pages_per_block(&self) -> u32 {
        self.data_pages_per_block
    }
    pub fn gc_threshold_blocks(&self) -> u32 {
        self.gc_threshold_blocks
    }
    pub fn checkpoints_enabled(&self) -> bool {
        self.ckpt.enabled
    }

    pub fn check_lpn(&self, lpn: Lpn) -> Result<()> {
        if lpn.0 < self.logical_pages {
            Ok(())
        } else {
            Err(SsdError::LpnOutOfRange {
                lpn,
                logical_pages: self.logical_pages,
            })
        }
    }

    #[inline]
    pub fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        let p = self.l2p[lpn.0 as usize];
        (p != Ppa::NONE).then_some(p)
    }

    /// The logical page a physical page is mapped from, if it is mapped.
    #[inline]
    pub fn reverse(&self, ppa: Ppa) -> Option<Lpn> {
        let l = self.p2l[ppa.0 as usize];
        (l != u32::MAX && self.pflags[ppa.0 as usize] & VALID != 0).then_some(Lpn(l))
    }

    #[inline]
    pub fn page_flags(&self, ppa: Ppa) -> u8 {
        self.pflags[ppa.0 as usize]
    }

    pub fn block(&self, block: BlockId) -> &BlockMeta {
        &self.blocks[block.0 as usize]
    }

    /// Clean free blocks (free pool plus window) of a parallel unit.
    pub fn free_blocks(&self, pu: PuId) -> u32 {
        let p = &self.pus[pu.0 as usize];
        (p.free.len() + p.window.len()) as u32
    }

    pub fn needs_gc(&self, pu: PuId) -> bool {
        self.free_blocks(pu) < self.gc_threshold_blocks
    }

    /// Protect a block from (or expose it to) GC victim selection.
    pub fn set_eligible(&mut self, block: BlockId, eligible: bool) {
        self.blocks[block.0 as usize].eligible = eligible;
    }

    /// Earliest instant GC may erase `block`.
    pub fn hold_erase_until(&mut self, block: BlockId, t: SimTime) {
        let m = &mut self.blocks[block.0 as usize];
        m.erase_not_before = m.erase_not_before.max(t);
    }

    // ---------------------------------------------------------------- liveness and mapping

    fn set_flag(&mut self, ppa: Ppa, flag: u8) {
        let f = &mut self.pflags[ppa.0 as usize];
        if *f & flag != 0 {
            return;
        }
        let was_live = *f & LIVE != 0;
        *f |= flag;
        let m = &mut self.blocks[(ppa.0 / self.geo.pages_per_block) as usize];
        if !was_live {
            m.live += 1;
        }
        if flag == VALID {
            m.valid += 1;
        }
    }

    fn clear_flag(&mut self, ppa: Ppa, flag: u8, durable_at: SimTime) {
        let f = &mut self.pflags[ppa.0 as usize];
        if *f & flag == 0 {
            return;
        }
        *f &= !flag;
        let now_dead = *f & LIVE == 0;
        let m = &mut self.blocks[(ppa.0 / self.geo.pages_per_block) as usize];
        if now_dead {
            m.live -= 1;
        }
        if flag == VALID {
            m.valid -= 1;
        }
        m.erase_not_before = m.erase_not_before.max(durable_at);
    }

    /// Maps `lpn` to `ppa`. The page it replaces stays physically needed until `durable_at`
    /// (when the new mapping survives a crash).
    pub fn map(&mut self, lpn: Lpn, ppa: Ppa, durable_at: SimTime) {
        debug_assert!(
            self.pflags[ppa.0 as usize] & WRITTEN != 0,
            "mapping unwritten {ppa}"
        );
        let old = self.l2p[lpn.0 as usize];
        if old == ppa {
            return;
        }
        if old != Ppa::NONE {
            self.p2l[old.0 as usize] = u32::MAX;
            self.clear_flag(old, VALID, durable_at);
        }
        self.l2p[lpn.0 as usize] = ppa;
        self.p2l[ppa.0 as usize] = lpn.0;
        self.set_flag(ppa, VALID);
        self.ckpt.mark_dirty(lpn);
    }

    /// Unmaps `lpn` (trim, or rollback of a mapping).
    pub fn unmap(&mut self, lpn: Lpn, durable_at: SimTime) {
        let old = self.l2p[lpn.0 as usize];
        if old != Ppa::NONE {
            self.p2l[old.0 as usize] = u32::MAX;
            self.clear_flag(old, VALID, durable_at);
            self.l2p[lpn.0 as usize] = Ppa::NONE;
            self.ckpt.mark_dirty(lpn);
        }
    }

    /// Keeps a page live for the protocol (GC copies it and reports the move).
    pub fn pin(&mut self, ppa: Ppa) {
        self.set_flag(ppa, PIN_PROTO);
    }

    /// Releases a protocol pin; the page stays physically needed until `durable_at`.
    pub fn unpin(&mut self, ppa: Ppa, durable_at: SimTime) {
        self.clear_flag(ppa, PIN_PROTO, durable_at);
    }

    pub(crate) fn pin_core(&mut self, ppa: Ppa) {
        self.set_flag(ppa, PIN_CORE);
    }
    pub(crate) fn unpin_core(&mut self, ppa: Ppa, durable_at: SimTime) {
        self.clear_flag(ppa, PIN_CORE, durable_at);
    }

    // ---------------------------------------------------------------- allocation

    /// The next parallel unit for a host-stream page under the striping policy.
    pub fn next_pu(&mut self) -> PuId {
        match self.cfg.striping {
            Striping::LeastBusy => {
                let n = self.stripe_order.len();
                let mut best = self.stripe_order[self.stripe_cursor % n];
                let mut best_t = self.nand.array_free_at(best);
                for k in 1..n {
                    let pu = self.stripe_order[(self.stripe_cursor + k) % n];
                    let t = self.nand.array_free_at(pu);
                    if t < best_t {
                        best = pu;
                        best_t = t;
                    }
                }
                self.stripe_cursor = (self.stripe_cursor + 1) % n;
                best
            }
            _ => {
                let pu = self.stripe_order[self.stripe_cursor];
                self.stripe_cursor = (self.stripe_cursor + 1) % self.stripe_order.len();
                pu
            }
        }
    }

    fn has_head_space(&self, pu: PuId, stream: Stream) -> bool {
        self.pus[pu.0 as usize].heads[stream.0 as usize] != u32::MAX
    }

    /// Picks a clean block for a new head: from the window with checkpoints on, otherwise from
    /// the free pool (lowest erase count first with dynamic wear leveling). Streams other than
    /// GC leave the last free block of a parallel unit to GC.
    fn take_free_block(
        &mut self,
        pu: PuId,
        stream: Stream,
        now: SimTime,
    ) -> Result<Option<(BlockId, SimTime)>> {
        let reserve = if stream == Stream::GC { 0 } else { 1 };
        if self.free_blocks(pu) <= reserve {
            return Ok(None);
        }
        if self.ckpt.enabled {
            if self.pus[pu.0 as usize].window.is_empty() {
                crate::meta::extend_window(self, pu, now)?;
            }
            return Ok(self.pus[pu.0 as usize].window.pop_front());
        }
        Ok(self.pop_free(pu).map(|b| (b, SimTime::ZERO)))
    }

    /// Removes a block from a parallel unit's free pool under the wear-leveling policy.
    pub(crate) fn pop_free(&mut self, pu: PuId) -> Option<BlockId> {
        let free = &mut self.pus[pu.0 as usize].free;
        if free.is_empty() {
            return None;
        }
        let idx = if self.cfg.dynamic_wear_leveling {
            let img = self.nand.image();
            let mut best = 0;
            for (i, b) in free.iter().enumerate() {
                let (e, eb) = (img.erase_count(*b), img.erase_count(free[best]));
                if e < eb || (e == eb && b.0 < free[best].0) {
                    best = i;
                }
            }
            best
        } else {
            0
        };
        Some(free.remove(idx))
    }

    /// Allocates the next page of `stream` in `pu`, opening a block if needed. Returns the
    /// page and the earliest instant it may be programmed (after a lazy erase, or after the
    /// root that recorded its block).
    fn alloc_in(
        &mut self,
        pu: PuId,
        stream: Stream,
        now: SimTime,
    ) -> Result<Option<(Ppa, SimTime)>> {
        let s = stream.0 as usize;
        let mut ready = SimTime::ZERO;
        if !self.has_head_space(pu, stream) {
            let Some((block, usable_at)) = self.take_free_block(pu, stream, now)? else {
                return Ok(None);
            };
            ready = ready.max(usable_at);
            let m = &self.blocks[block.0 as usize];
            debug_assert_eq!(m.state, BlockState::Free);
            if m.dirty {
                let (t, worn) = self.nand.erase(block, now.max(ready))?;
                self.stats.lazy_erases += 1;
                ready = ready.max(t.end);
                self.blocks[block.0 as usize].dirty = false;
                if worn {
                    self.retire(block);
                    return self.alloc_in(pu, stream, now);
                }
            }
            let m = &mut self.blocks[block.0 as usize];
            m.state = BlockState::Open;
            m.next_page = 0;
            m.stream = stream.0;
            m.eligible = true;
            m.erase_not_before = SimTime::ZERO;
            self.pus[pu.0 as usize].heads[s] = block.0;
        }
        let block = BlockId(self.pus[pu.0 as usize].heads[s]);
        let page = u32::from(self.blocks[block.0 as usize].next_page);
        let ppa = self.geo.ppa(block, page);
        self.blocks[block.0 as usize].next_page += 1;
        Ok(Some((ppa, ready)))
    }

    fn retire(&mut self, block: BlockId) {
        self.blocks[block.0 as usize].state = BlockState::Bad;
        self.stats.bad_blocks += 1;
    }

    /// Programs a page in `stream`: in `pu` if given (GC and per-unit logs), otherwise in the
    /// unit the striping policy picks, falling back to any unit with space. Writes the block's
    /// summary page when its last data page is programmed.
    pub fn program(
        &mut self,
        stream: Stream,
        pu: Option<PuId>,
        content: Content,
        oob: &[u8],
        ready: SimTime,
    ) -> Result<(Ppa, OpTiming)> {
        debug_assert!(oob.len() == self.nand.image().oob_used());
        let (ppa, ready_min) = match pu {
            Some(pu) => self
                .alloc_in(pu, stream, ready)?
                .ok_or_else(|| SsdError::OutOfSpace {
                    detail: format!("{pu} has no free block for stream {}", stream.0),
                })?,
            None => {
                let mut found = None;
                for _ in 0..self.stripe_order.len() {
                    let pu = self.next_pu();
                    if let Some(a) = self.alloc_in(pu, stream, ready)? {
                        found = Some(a);
                        break;
                    }
                }
                found.ok_or_else(|| SsdError::OutOfSpace {
                    detail: "no parallel unit has a free block".into(),
                })?
            }
        };
        let t = self.nand.program(ppa, content, oob, ready.max(ready_min))?;
        self.after_program(ppa, t, ready)?;
        Ok((ppa, t))
    }

    fn after_program(&mut self, ppa: Ppa, t: OpTiming, ready: SimTime) -> Result<()> {
        self.pflags[ppa.0 as usize] |= WRITTEN;
        self.program_end_max = self.program_end_max.max(t.end);
        let block = self.geo.block_of(ppa);
        let page = self.geo.page_in_block(ppa);
        let clock = self.clock;
        let m = &mut self.blocks[block.0 as usize];
        m.stamp = clock;
        if page + 1 == self.data_pages_per_block {
            let stream = m.stream as usize;
            if self.cfg.summary_pages {
                self.write_summary(block, ready)?;
            }
            let m = &mut self.blocks[block.0 as usize];
            m.state = BlockState::Full;
            m.next_page = self.geo.pages_per_block as u16;
            let pu = self.geo.pu_of_block(block);
            self.pus[pu.0 as usize].heads[stream] = u32::MAX;
        }
        Ok(())
    }

    /// The summary page: the OOB of every data page of the block, in page order.
    fn write_summary(&mut self, block: BlockId, ready: SimTime) -> Result<()> {
        let n = self.nand.image().oob_used();
        let mut payload = Vec::with_capacity(n * self.data_pages_per_block as usize);
        for page in 0..self.data_pages_per_block {
            let ppa = self.geo.ppa(block, page);
            match self.nand.image().oob(ppa) {
                Some(o) => payload.extend_from_slice(o),
                None => payload.extend(std::iter::repeat_n(0xFF, n)),
            }
        }
        let mut oob = vec![0xFF; n];
        oob[0] = kind::SUMMARY;
        let ppa = self.geo.ppa(block, self.geo.pages_per_block - 1);
        let t = self
            .nand
            .program(ppa, Content::Bytes(payload.into()), &oob, ready)?;
        self.pflags[ppa.0 as usize] |= WRITTEN;
        self.program_end_max = self.program_end_max.max(t.end);
        self.stats.summary_writes += 1;
        Ok(())
    }

    /// Erases a block that GC or a protocol has emptied of live pages and returns it to its
    /// parallel unit's free pool (or retires it if it wore out). Starts no earlier than the
    /// block's `erase_not_before`.
    pub fn erase_block(&mut self, block: BlockId, ready: SimTime) -> Result<OpTiming> {
        let m = &self.blocks[block.0 as usize];
        if m.live != 0 {
            return Err(SsdError::OutOfSpace {
                detail: format!("internal: erase of {block} with {} live pages", m.live),
            });
        }
        let was_free = m.state == BlockState::Free;
        let ready = ready.max(m.erase_not_before);
        let (t, worn) = self.nand.erase(block, ready)?;
        let first = self.geo.first_page(block).0;
        for p in first..first + self.geo.pages_per_block {
            self.pflags[p as usize] = 0;
            self.p2l[p as usize] = u32::MAX;
        }
        let pu = self.geo.pu_of_block(block);
        let m = &mut self.blocks[block.0 as usize];
        m.next_page = 0;
        m.dirty = false;
        m.erase_not_before = SimTime::ZERO;
        m.eligible = true;
        self.erases_since_wl_check += 1;
        if worn {
            if was_free {
                self.pus[pu.0 as usize].free.retain(|b| *b != block);
                self.pus[pu.0 as usize].window.retain(|(b, _)| *b != block);
            }
            self.retire(block);
        } else if !was_free {
            m.state = BlockState::Free;
            self.pus[pu.0 as usize].free.push(block);
        }
        Ok(t)
    }

    // ---------------------------------------------------------------- reads

    /// Reads the page mapped from `lpn`.
    pub fn read_lpn(&mut self, lpn: Lpn, ready: SimTime) -> Result<(ReadOutcome, SimTime)> {
        self.check_lpn(lpn)?;
        let Some(ppa) = self.lookup(lpn) else {
            return Ok((ReadOutcome::Unmapped, ready));
        };
        let (t, view) = self.nand.read(ppa, ready)?;
        Ok((outcome_of(view), t.end))
    }

    /// Reads a physical page (timed) and returns its view.
    pub fn read_page(&mut self, ppa: Ppa, ready: SimTime) -> Result<(OpTiming, PageView<'_>)> {
        Ok(self.nand.read(ppa, ready)?)
    }

    /// Reads only a page's OOB (timed) and returns its view.
    pub fn read_oob(&mut self, ppa: Ppa, ready: SimTime) -> Result<(OpTiming, PageView<'_>)> {
        Ok(self.nand.read_oob(ppa, ready)?)
    }

    /// Moves a page into the device over the host interface: when its data is buffered.
    pub fn host_transfer_done(&self, now: SimTime) -> SimTime {
        if self.cfg.interface_mbps == 0 {
            now
        } else {
            now + (u64::from(self.geo.page_bytes) * 1_000).div_ceil(self.cfg.interface_mbps)
        }
    }

    // ---------------------------------------------------------------- accounting

    /// DRAM the FTL itself uses, by structure (bytes).
    pub fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("mapping table", self.l2p.len() as u64 * 4),
            ("reverse map", self.p2l.len() as u64 * 4),
            ("page flags", self.pflags.len() as u64),
            (
                "block table",
                self.blocks.len() as u64 * std::mem::size_of::<BlockMeta>() as u64,
            ),
        ]
    }

    /// Number of mapped logical pages.
    pub fn mapped_pages(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.valid)).sum()
    }

    /// Verifies the mapping, reverse map, per-block counts and pools agree.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        for (lpn, ppa) in self.l2p.iter().enumerate() {
            if *ppa == Ppa::NONE {
                continue;
            }
            if self.p2l[ppa.0 as usize] != lpn as u32 {
                return Err(format!(
                    "l2p[{lpn}] = {ppa} but p2l says {}",
                    self.p2l[ppa.0 as usize]
                ));
            }
            if self.pflags[ppa.0 as usize] & VALID == 0 {
                return Err(format!("lpn {lpn} maps to {ppa}, which is not VALID"));
            }
        }
        for b in 0..self.geo.blocks() {
            let block = BlockId(b);
            let m = &self.blocks[b as usize];
            let (mut live, mut valid) = (0u16, 0u16);
            for p in 0..self.geo.pages_per_block {
                let ppa = self.geo.ppa(block, p);
                let f = self.pflags[ppa.0 as usize];
                if f & LIVE != 0 {
                    live += 1;
                }
                if f & VALID != 0 {
                    valid += 1;
                    let lpn = self.p2l[ppa.0 as usize];
                    if lpn == u32::MAX || self.l2p.get(lpn as usize) != Some(&ppa) {
                        return Err(format!("{ppa} VALID but not the mapping of its lpn {lpn}"));
                    }
                }
            }
            if live != m.live || valid != m.valid {
                return Err(format!(
                    "{block}: counts live={} valid={} but pages say live={live} valid={valid}",
                    m.live, m.valid
                ));
            }
            let pu = self.geo.pu_of_block(block);
            let pooled = self.pus[pu.0 as usize].free.contains(&block)
                || self.pus[pu.0 as usize]
                    .window
                    .iter()
                    .any(|(x, _)| *x == block);
            if pooled != (m.state == BlockState::Free) {
                return Err(format!("{block}: state {:?} but pooled={pooled}", m.state));
            }
            if m.state == BlockState::Free && m.live != 0 {
                return Err(format!("{block} is free with {} live pages", m.live));
            }
        }
        for (pu, a) in self.pus.iter().enumerate() {
            for (s, h) in a.heads.iter().enumerate() {
                if *h != u32::MAX {
                    let m = &self.blocks[*h as usize];
                    if m.state != BlockState::Open || m.stream as usize != s {
                        return Err(format!(
                            "pu {pu} stream {s} head block {h} is {:?}/{}",
                            m.state, m.stream
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- recovery support

    /// Resets all bookkeeping to "nothing live", ready for recovery to map and pin pages.
    pub(crate) fn clear_for_recovery(&mut self) {
        self.l2p.fill(Ppa::NONE);
        self.p2l.fill(u32::MAX);
        self.pflags.fill(0);
        for m in &mut self.blocks {
            *m = BlockMeta::new();
        }
    }

    /// Marks a page as programmed (recovery found it on the medium).
    pub(crate) fn mark_written(&mut self, ppa: Ppa) {
        self.pflags[ppa.0 as usize] |= WRITTEN;
    }

    /// After recovery has mapped and pinned pages: blocks holding live pages are full, the
    /// rest are free but dirty: erased before reuse, since an interrupted erase may have left
    /// a block that reads as erased but cannot be programmed, and no read can tell.
    ///
    /// Partly written blocks that hold live pages are resumed where the scan found their
    /// first erased page (`tails`): up to one per parallel unit for GC and one for host
    /// writes, the emptiest first. Without this, a crash just after GC opened a unit's last
    /// free block would leave that unit with no block for GC to write into.
    pub(crate) fn finish_recovery(&mut self, tails: &[(BlockId, u32)]) {
        for b in 0..self.geo.blocks() {
            let m = &mut self.blocks[b as usize];
            if m.live > 0 {
                m.state = BlockState::Full;
                m.next_page = self.geo.pages_per_block as u16;
            } else {
                m.state = BlockState::Free;
            }
        }
        self.rebuild_pools(true);
        let mut tails: Vec<(BlockId, u32)> = tails
            .iter()
            .copied()
            .filter(|(b, next)| {
                self.blocks[b.0 as usize].state == BlockState::Full
                    && *next < self.data_pages_per_block
            })
            .collect();
        tails.sort_by_key(|(b, next)| (*next, b.0));
        for (b, next) in tails {
            let pu = self.geo.pu_of_block(b);
            let heads = &mut self.pus[pu.0 as usize].heads;
            let stream = if heads[Stream::GC.0 as usize] == u32::MAX {
                Stream::GC
            } else if heads[Stream::HOST.0 as usize] == u32::MAX {
                Stream::HOST
            } else {
                continue;
            };
            heads[stream.0 as usize] = b.0;
            let m = &mut self.blocks[b.0 as usize];
            m.state = BlockState::Open;
            m.stream = stream.0;
            m.next_page = next as u16;
        }
    }
}

/// Turns a page view into what a host read returns.
pub fn outcome_of(view: PageView<'_>) -> ReadOutcome {
    match view {
        PageView::Erased => ReadOutcome::Unmapped,
        PageView::Uncorrectable => ReadOutcome::Uncorrectable,
        PageView::Programmed { data, .. } => match data {
            media::image::DataRef::Tag { tag, .. } => ReadOutcome::Tag(tag),
            media::image::DataRef::Bytes(b) => ReadOutcome::Bytes(b.to_vec()),
        },
    }
}

/// The order in which round-robin striping visits parallel units.
fn stripe_order(g: &Geometry, s: Striping) -> Vec<PuId> {
    let mut pus: Vec<PuId> = (0..g.pus()).map(PuId).collect();
    if s == Striping::ChannelFirst {
        // Sort by (plane, die, chip, channel): consecutive picks change channel first.
        pus.sort_by_key(|pu| {
            let a = g.addr(g.first_page(g.blocks_of_pu(*pu).next().unwrap_or(BlockId(0))));
            (a.plane, a.die, a.chip, a.channel)
        });
    }
    pus
}

/// Builds an OOB buffer of the device's width with the kind byte set and the rest erased.
pub fn blank_oob(core: &FtlCore, page_kind: u8) -> Vec<u8> {
    let mut v = vec![0xFF; core.nand.image().oob_used()];
    v[0] = page_kind;
    v
}

/// Convenience for layouts: write a u32 field.
pub fn oob_u32(buf: &mut [u8], off: usize, v: u32) {
    oob::put_u32(buf, off, v);
}
