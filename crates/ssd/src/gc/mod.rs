//! Garbage collection and wear leveling.
//!
//! Victim selection is a pure policy over a read-only view of one parallel unit's candidate
//! blocks (`GcView`) returning a choice; the engine here carries it out: copy every live page
//! of the victim to the unit's GC head, let the protocol adjust the copy's OOB and follow the
//! move, let the protocol act before the erase (move commit flags), then erase no earlier than
//! the victim's `erase_not_before`.
//!
//! Policies, one file each: `Greedy` (fewest live pages), `CostBenefit` (LFS: age × free /
//! cost), `WearAware` (greedy with a penalty on worn blocks). Static wear leveling is a policy
//! too (`wear::StaticWl`): when the erase-count gap exceeds a threshold, relocate the least
//! worn full block so its cold data stops pinning a young block.

mod cost_benefit;
mod greedy;
mod wear;
mod wear_aware;

pub use cost_benefit::CostBenefit;
pub use greedy::Greedy;
pub use wear::StaticWl;
pub use wear_aware::WearAware;

use crate::config::GcPolicyKind;
use crate::core::{BlockState, FtlCore, OobBuf, Stream, PIN_CORE, PIN_PROTO, VALID};
use crate::error::{Result, SsdError};
use media::{BlockId, Content, PageView, PuId};
use sim::SimTime;

pub use crate::core::hooks::FtlHooks;

/// The read-only view a victim policy decides over: parallel slices with one entry per
/// block, entry `i` being block `first_block + i`.
pub struct GcView<'a> {
    pub first_block: u32,
    /// Live (mapped or pinned) pages.
    pub live: &'a [u16],
    /// Whether the block may be collected: full, and not protected by the protocol.
    pub collectable: &'a [bool],
    /// Host-write clock at the block's last program; `clock - stamp` is its age.
    pub stamp: &'a [u64],
    pub clock: u64,
    pub erase_count: &'a [u32],
    /// Data pages per block.
    pub pages: u32,
}

impl GcView<'_> {
    /// Indices of blocks worth collecting (collectable, not entirely live).
    pub fn candidates(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.live.len())
            .filter(|&i| self.collectable[i] && u32::from(self.live[i]) < self.pages)
    }
    pub fn block(&self, i: usize) -> BlockId {
        BlockId(self.first_block + i as u32)
    }
}

/// A victim-selection policy: a pure choice, or `None` when no block is worth collecting.
pub trait VictimPolicy {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId>;
}

pub fn policy(kind: GcPolicyKind) -> &'static dyn VictimPolicy {
    match kind {
        GcPolicyKind::Greedy => &Greedy,
        GcPolicyKind::CostBenefit => &CostBenefit,
        GcPolicyKind::WearAware => &WearAware,
    }
}

fn view_of(core: &FtlCore, first: u32, n: u32) -> GcView<'_> {
    let (live, collectable, stamp) = core.gc_slices(first, n);
    let r = first as usize..(first + n) as usize;
    GcView {
        first_block: first,
        live,
        collectable,
        stamp,
        clock: core.clock,
        erase_count: &core.nand.image().erase_counts()[r],
        pages: core.data_pages_per_block(),
    }
}

/// Runs GC in `pu` until it is back above the threshold or nothing can be reclaimed.
/// Returns the instant the last erase completes (or `now`).
pub fn collect(
    core: &mut FtlCore,
    hooks: &mut dyn FtlHooks,
    pu: PuId,
    now: SimTime,
) -> Result<SimTime> {
    let mut done = now;
    let mut rounds = 0u32;
    let first = pu.0 * core.geo.blocks_per_plane;
    while core.needs_gc(pu) {
        let view = view_of(core, first, core.geo.blocks_per_plane);
        let Some(victim) = policy(core.cfg.gc_policy).choose(&view) else {
            break;
        };
        done = done.max(relocate(core, hooks, victim, now, Reason::Gc)?);
        rounds += 1;
        if rounds > core.geo.blocks_per_plane * 2 {
            break;
        }
    }
    Ok(done)
}

/// Restores the protocol's free-block reserve (`FtlCore::reserve_shortfall`): collects one
/// victim at a time where a block is cheapest to win (the candidate with the fewest live
/// pages over every unit GC can copy in: one with a free block, or whose open GC block has
/// room for the victim's pages), first in a unit left without a free block for GC. A victim
/// collected for the reserve is erased, never kept for later (`collecting_for_reserve`).
/// Blocks the protocol keeps (AW's victims waiting for a carrier record) stay kept while
/// other victims can be collected, and are given back (`before_reserve`) when none can.
/// Stops when the reserve holds or nothing is left to collect or give back; the reserve
/// then stays short, and the caller's `reserve_shortfall` says so.
pub fn restore_reserve(core: &mut FtlCore, hooks: &mut dyn FtlHooks, now: SimTime) -> Result<()> {
    if core.reserve_shortfall().is_none() {
        return Ok(());
    }
    #[cfg(feature = "mutants")]
    if crate::mutant::on("core-no-reserve") {
        // Planted bug: the reserve is declared (and checked) but never restored.
        return Ok(());
    }
    let dp = core.data_pages_per_block();
    let bpp = core.geo.blocks_per_plane;
    let mut gave_back = false;
    for _ in 0..core.geo.blocks() + 1 {
        if core.reserve_shortfall().is_none() {
            break;
        }
        let mut best: Option<(bool, u32, BlockId)> = None;
        for p in 0..core.geo.pus() {
            let pu = PuId(p);
            let Some(v) = policy(core.cfg.gc_policy).choose(&view_of(core, p * bpp, bpp)) else {
                continue;
            };
            let live = core.live(v);
            let free = core.free_blocks(pu);
            let head = core.pus[p as usize].heads[Stream::GC.0 as usize];
            let room = if head == u32::MAX {
                0
            } else {
                dp.saturating_sub(u32::from(core.block(BlockId(head)).next_page))
            };
            if free == 0 && room < live {
                continue;
            }
            // A unit without a free block first, then the fewest live pages.
            let key = (free != 0, live, v);
            if best.map_or(true, |b| key < b) {
                best = Some(key);
            }
        }
        let Some((_, _, victim)) = best else {
            if gave_back {
                break;
            }
            hooks.before_reserve(core, now)?;
            gave_back = true;
            continue;
        };
        core.reserve_gc = true;
        let done = relocate(core, hooks, victim, now, Reason::Gc);
        core.reserve_gc = false;
        done?;
    }
    Ok(())
}

/// Reclaims one victim in `pu` whether or not the unit is below the GC threshold (a
/// host-managed erase unit needs a block beyond the ones GC keeps: `Device::native_take_
/// block`). Returns None when no block holds anything reclaimable.
pub(crate) fn collect_one(
    core: &mut FtlCore,
    hooks: &mut dyn FtlHooks,
    pu: PuId,
    now: SimTime,
) -> Result<Option<SimTime>> {
    let first = pu.0 * core.geo.blocks_per_plane;
    let view = view_of(core, first, core.geo.blocks_per_plane);
    let Some(victim) = policy(core.cfg.gc_policy).choose(&view) else {
        return Ok(None);
    };
    if core.valid(victim) >= core.data_pages_per_block() {
        return Ok(None);
    }
    relocate(core, hooks, victim, now, Reason::Gc).map(Some)
}

/// Why a block is being emptied (for the statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Gc,
    WearLeveling,
    /// A protocol needs the block erased now (SCC erasing an uncommitted intention).
    Forced,
}

/// Copies every live page out of `victim` (same parallel unit) and erases it.
pub fn relocate(
    core: &mut FtlCore,
    hooks: &mut dyn FtlHooks,
    victim: BlockId,
    now: SimTime,
    reason: Reason,
) -> Result<SimTime> {
    let g = core.geo.clone();
    let pu = g.pu_of_block(victim);
    let state = core.block(victim).state;
    if matches!(state, BlockState::Meta | BlockState::Bad) {
        return Err(SsdError::OutOfSpace {
            detail: format!("internal: relocate of {state:?} {victim}"),
        });
    }
    if state == BlockState::Open {
        // Close the head so nothing more is written into the block being emptied.
        for s in 0..crate::core::NSTREAMS {
            if core.pus[pu.0 as usize].heads[s] == victim.0 {
                core.pus[pu.0 as usize].heads[s] = u32::MAX;
            }
        }
        core.blocks[victim.0 as usize].state = BlockState::Full;
    }
    let timing = core.nand.timing().clone();
    for page in 0..g.pages_per_block {
        if let Some(lpn) = core.reverse(g.ppa(victim, page)) {
            core.prefetch_mapping(lpn);
        }
    }
    let mut ready_erase = now;
    let mut moved = 0u64;
    let mut core_moved = false;
    for page in 0..g.pages_per_block {
        let from = g.ppa(victim, page);
        let flags = core.page_flags(from);
        if flags & (VALID | PIN_PROTO | PIN_CORE) == 0 {
            continue;
        }
        let copyback = core.cfg.gc_copyback;
        let (rt, view) = if copyback {
            core.nand.read_for_copyback(from, now)?
        } else {
            core.nand.read(from, now)?
        };
        // A page carrying in-place-appended bytes (its delta area) is copied whole, body
        // and delta area in one program (`Content::TagTail`), as firmware would program the
        // page register it just read. Neither folded (the FTL cannot interpret delta
        // records) nor split into program + partial program: the split needed a second
        // program on the target, which an odd-MLC MSB page (NOP 1) refuses — GC failed with
        // `NopExceeded` when a page with appends was moved onto an MSB page (the bug named
        // in docs/FTL.md ("The FTL", appends), found by review; regression
        // test `odd_mlc_gc_moves_appended_pages_onto_msb_pages` in modes.rs). One program
        // also closes the crash window between the two (a copy without its tail).
        let (content, mut oob) = match view {
            PageView::Programmed { data, oob } => match data {
                media::image::DataRef::Tag { tag, tail } if tail.iter().all(|b| *b == 0xFF) => {
                    (Content::Tag(tag), OobBuf::copy_of(oob))
                }
                media::image::DataRef::Tag { tag, tail } => {
                    (Content::TagTail(tag, tail.into()), OobBuf::copy_of(oob))
                }
                media::image::DataRef::Bytes(b) => (Content::Bytes(b.into()), OobBuf::copy_of(oob)),
            },
            other => {
                return Err(SsdError::CorruptImage {
                    detail: format!("live page {from} reads as {other:?} during GC"),
                })
            }
        };
        hooks.migrate_oob(core, from, &mut oob);
        let (to, t) = if copyback {
            core.program_copyback(pu, from, content, &oob, rt.end)?
        } else {
            core.program(Stream::GC, Some(pu), content, &oob, rt.end)?
        };
        // The planted `gc-erase-before-copies` takes the read's end here. Without
        // checkpoints it changes no crash state, so on a protocol that refuses them (tc)
        // it is equivalent: the copies go to the victim's own plane (`pu`), which executes
        // its operations in issue order (docs/CRASH-MODEL.md, "Time and the crash model"),
        // so the victim's erase, issued after them, starts after the last copy's program
        // ends whatever `ready_erase` says, and the erase ends at the same instant. With
        // checkpoints, metadata written on any plane is ordered by `end` (the root written
        // for moved pages, `write_root` below): `none`'s checkpoint variants reach that and
        // catch the mutant (docs/MUTATION.md, "Device mutants re-run on the current tree").
        #[cfg(feature = "mutants")]
        let end = if crate::mutant::on("gc-erase-before-copies") {
            rt.end
        } else {
            t.end
        };
        #[cfg(not(feature = "mutants"))]
        let end = t.end;
        ready_erase = ready_erase.max(end);
        moved += 1;
        core.stats.gc_busy_ns += timing.read_ns + timing.program_ns;
        if flags & VALID != 0 {
            if let Some(lpn) = core.reverse(from) {
                // The copy is durable at `end`; the old page is erased only after that.
                core.remap_moved(lpn, from, to, end);
            }
        }
        if flags & PIN_PROTO != 0 {
            core.pin(to);
            core.unpin(from, end);
            hooks.on_moved(core, from, to);
        }
        if flags & PIN_CORE != 0 {
            core.pin_core(to);
            core.unpin_core(from, end);
            core_moved |= core.ckpt.on_moved(from, to);
        }
    }
    if core_moved {
        ready_erase = ready_erase.max(crate::meta::write_root(core, ready_erase)?);
    }
    let before = core.nand.counters().partial_programs;
    ready_erase = hooks.before_erase(core, victim, ready_erase)?;
    let flags = core.nand.counters().partial_programs - before;
    core.stats.gc_busy_ns += flags * timing.partial_program_ns;
    if core.live(victim) != 0 {
        return Err(SsdError::OutOfSpace {
            detail: format!("internal: {victim} still has live pages after relocation"),
        });
    }
    // The protocol kept the victim to erase it later (`FtlCore::defer_erase`): the erase
    // is decided, so it counts here, but is issued by the protocol.
    let end = if core.is_owned(victim) {
        ready_erase
    } else {
        core.erase_block(victim, ready_erase)?.end
    };
    core.stats.gc_busy_ns += timing.erase_ns;
    match reason {
        Reason::Gc => {
            core.stats.gc_page_migrations += moved;
            core.stats.gc_erases += 1;
        }
        Reason::WearLeveling => {
            core.stats.wl_migrations += moved;
            core.stats.wl_erases += 1;
        }
        Reason::Forced => {
            core.stats.forced_migrations += moved;
            core.stats.forced_erases += 1;
        }
    }
    Ok(end)
}

/// Static wear leveling: every `static_wl_interval` erases, if the erase-count gap exceeds
/// the threshold, relocate the least-worn full block.
pub fn wear_level(core: &mut FtlCore, hooks: &mut dyn FtlHooks, now: SimTime) -> Result<SimTime> {
    if !core.cfg.static_wear_leveling || core.erases_since_wl_check < core.cfg.static_wl_interval {
        return Ok(now);
    }
    core.erases_since_wl_check = 0;
    let view = view_of(core, 0, core.geo.blocks());
    let choice = StaticWl {
        threshold: core.cfg.static_wl_threshold,
    }
    .choose(&view);
    match choice {
        Some(b) => relocate(core, hooks, b, now, Reason::WearLeveling),
        None => Ok(now),
    }
}
