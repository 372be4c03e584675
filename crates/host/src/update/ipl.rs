//! `ipl`: In-Page Logging (Lee & Moon, "Design of flash-based DBMS: an in-page logging
//! approach", SIGMOD 2007), the baseline In-Place Appends is compared against
//! (in-place-appends.md §1: "The logs are written to the separate, reserved Flash pages on
//! the same Flash block the original data is").
//!
//! Two layouts (`host.ipl.layout`):
//!
//! # `in-block` (default): the paper's layout, on host-managed erase units
//!
//! DB pages are grouped into *erase units* of `host.ipl.unit_pages` pages (15: Lee & Moon's
//! 128 KiB erase unit of 15 data pages of 8 KiB and an 8 KiB log region). Each unit lives in
//! one flash block the host owns (`ssd::Device::native_*`: taken out of the plain FTL's
//! free pools, programmed and erased by the host; a page-mapping FTL cannot keep a unit's
//! pages in one block). The block of unit u, generation g, holding n = pages × parts data
//! pages (the unit's last block may hold fewer pages):
//!
//! ```text
//! slot 0 .. n-1           DB page (u × unit_pages + i), part k at slot i × parts + k: a
//!                         tagged program (TagContent::Data), programmed by a merge
//! slot n .. n+L-1         the log region: L = ceil(log_sectors × sector_bytes / flash page)
//!                         log pages; log sector s at slot n + s / spp, byte
//!                         (s mod spp) × sector_bytes (spp = sectors per flash page): the
//!                         first sector of a log page is its program, later ones partial
//!                         programs of the same page (NOP ≥ spp is required)
//! OOB of every slot       NATIVE page (ssd device::native): a = u, b = g, c = n
//! ```
//!
//! Normal processing. Each buffered page has a 512 B in-memory log sector; every update
//! adds a record of `host.ipl.record_header_bytes` (8: the original is silent; offset,
//! length, slot and LSN) plus the net changed bytes (`update::net`). A dirty page's
//! write-back (eviction, checkpoint flush) writes its log sector(s) into its unit's log
//! region instead of the page: one sector, plus one per sector that filled while the page
//! was buffered. *Choice where the original is silent / our engine differs:* the original
//! writes a full sector the moment it fills; the engine's update hook issues no I/O, so a
//! filled sector is written at the page's next write-back (same count of sector writes,
//! later).
//!
//! Merge (Lee & Moon §4.3). A write-back that finds the log region without room for its
//! sectors merges the unit: the old block's data pages and log pages are read, a fresh
//! block is taken, every page of the unit is programmed into it with its logs applied (the
//! page being written back with its buffered image), and then the old block is erased —
//! the erase is issued not before every merged page's program has completed. The new log
//! region starts empty, and the next sector is programmed after the merge's programs.
//!
//! The loaded database. The engine's convention for every strategy is that a page never
//! written is not on the device and reads as loaded. Here a unit has no block until its
//! first write-back, which *loads* the unit: a merge without an old block (its pages
//! programmed as loaded, the written-back page with its image; `ipl_unit_loads`). A read
//! of a page of a unit with no block costs no flash read, as an unmapped page's.
//!
//! Reads. A page's fetch reads its data page(s) and every log page of its unit's block
//! holding a sector with records for it (`ipl_log_page_reads`).
//!
//! Restart (`apply_logs`): every block the device kept for the host (`native_blocks`) is
//! read; per unit, the block with the highest generation whose n data slots all read back
//! (tagged, with the unit's (u, g)) is the unit; its data pages, then every valid log entry
//! of its log region, give per page and part the image with the highest page LSN. A unit
//! with no complete block is as loaded.
//!
//! Why it is right, case by case (WAL is the recovery strategy; a sector or a merge is a
//! page write-back, issued after the log is forced past its page LSN, so anything a lost
//! write-back held is redone from the log, which the master record keeps until every data
//! write issued before it has completed):
//! - Crash before a load's programs all complete: the unit has no complete block, reads as
//!   loaded; the written-back page is redone from the log.
//! - Crash during a merge g → g+1: g+1 is incomplete (a data slot erased or torn) and is
//!   ignored; g is intact, because its erase is issued only after every program of g+1 has
//!   completed, and no sector of g+1 exists (sectors are programmed after the merge).
//! - Crash after the merge, during or after g's erase: g+1 is complete and its generation
//!   is higher; g, torn or erased, is never chosen over it.
//! - Two merges in a row (g+1, g+2): g+2's programs start after g+1's completed, so when
//!   g+2 is incomplete g+1 is complete and not yet erased (its erase waits for g+2).
//! - Torn log sector: a partial program that cleared some bits fails its CRC and is
//!   ignored; a torn first program of a log page reads uncorrectable and is skipped; either
//!   way the sector was not needed for durability (WAL redo).
//! - Log sectors from before a merge are erased with the old block; a merged page's image
//!   carries the LSN of its newest record, so the highest-LSN rule never rolls it back.
//!
//! Refused: any protocol but `none`; mapping checkpoints (the host's blocks must be found by
//! scanning); a unit that does not fit a block (unit_pages × parts + L slots); sectors per
//! flash page beyond the page's NOP (plain MLC; odd-MLC, whose MSB pages allow one program);
//! capturing a `txn` trace (it has no command for a host-managed page).
//!
//! # `separate`: log regions as logical pages (the layout before the paper's)
//!
//! Each unit's log region is laid on `ceil(16 × 512 / flash page)` logical pages past the
//! WAL's log area, written through the page-mapped FTL (`Device::write_sector`: the first
//! sector of a log page is its program, out of place, later ones partial programs when the
//! page allows). A page never written before is written whole the first time. A merge
//! rewrites the unit's pages out of place through the FTL, and the old copies and log pages
//! are reclaimed by GC: the merge's erase is GC's, later, not an immediate one. Restart
//! reads every log page and applies the valid entries with the highest page LSN. Kept as an
//! option to measure what the paper's layout changes (docs/HOST.md, "In-Page Logging's layout").
//!
//! Sector format (tag data mode; bytes stand for the records through the tag table), both
//! layouts:
//!
//! ```text
//! [0]            entry count e (1..=40; 0xFF = never written)
//! [1..1+12e]     entries: DB page number u32 LE, tag u64 LE (the page image after the
//!                records: TagContent::Data { image, part 0 })
//! [1+12e..5+12e] CRC-32 of bytes [0..1+12e]
//! ```
//!
//! Not modelled: the original's log-sector-granularity ECC, its "log region full → merge
//! before the write" timing subtleties beyond the above.

use crate::data::{PageImage, PageNo, TagContent};
use crate::engine::{data_lpn, Core};
use crate::hooks::RecoverCtx;
use crate::{HostConfig, HostError, Result};

/// The first data-device lpn past what `wal` lays out there — the data area, then (on a
/// shared log device) the master record and the log — where IPL's `separate` log regions
/// start. Here, below `wal`, because IPL's recovery needs it and `wal` is built on IPL.
pub fn data_device_end(cfg: &HostConfig, layout: &crate::data::Layout) -> u64 {
    if cfg.separate_log() {
        crate::state::data_lpns(layout)
    } else {
        crate::state::data_lpns(layout) + 1 + u64::from(cfg.log_pages)
    }
}
use serde::{Deserialize, Serialize};
use sim::{Lpn, SimTime};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use workload::db::RecOp;

/// `host.ipl`: In-Page Logging's parameters (defaults: Lee & Moon's 128 KiB erase unit).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IplConfig {
    /// DB pages per erase unit (15).
    pub unit_pages: u32,
    /// Log sectors per erase unit's log region (16).
    pub log_sectors: u32,
    /// Bytes of a log sector, and of a page's in-memory log sector (512).
    pub sector_bytes: u32,
    /// Bytes of an update record besides its changed bytes (8; the original is silent).
    pub record_header_bytes: u32,
    /// Where the log regions live: `in-block` (the paper's: in the unit's own flash
    /// block, host-managed, merges erase it) or `separate` (logical pages of the
    /// page-mapped FTL; merges rewrite out of place and leave erases to GC).
    pub layout: String,
}

/// `host.ipl.layout` values.
pub const LAYOUTS: &[&str] = &["in-block", "separate"];

impl Default for IplConfig {
    fn default() -> Self {
        IplConfig {
            unit_pages: 15,
            log_sectors: 16,
            sector_bytes: 512,
            record_header_bytes: 8,
            layout: "in-block".into(),
        }
    }
}

/// Sector bytes the format itself takes (count byte and CRC).
const SECTOR_META: u32 = 5;

#[derive(Default)]
struct Mem {
    /// Bytes of records in the in-memory sector.
    used: u32,
    /// Sectors that filled while the page was buffered, not yet written.
    full: u32,
}

pub struct Ipl {
    unit_pages: u64,
    sectors: u32,
    sector_bytes: u32,
    header: u32,
    /// Sectors per device page, device pages per log region, first log LPN.
    spp: u32,
    log_lpns: u32,
    base: u32,
    /// Per unit: sectors written since its last merge.
    used: Vec<u32>,
    /// Per unit, per log page: the DB pages its sectors hold records for.
    holders: Vec<Vec<BTreeSet<u64>>>,
    /// Per unit: when its last log write completes (sectors of one page in order).
    last_end: Vec<SimTime>,
    mem: BTreeMap<PageNo, Mem>,
    /// `in-block`: the host-managed erase units (None: `separate`).
    blocks: Option<InBlock>,
    pub sector_writes: u64,
    pub sector_in_place: u64,
    pub merges: u64,
    pub merge_page_writes: u64,
    pub first_writes: u64,
}

/// One erase unit's block (`in-block`).
#[derive(Clone, Debug, Default)]
struct Unit {
    /// Its block and generation (None: not loaded yet, as loaded).
    block: Option<(media::BlockId, u64)>,
}

/// `in-block` state: per unit its block; the slots a unit's data pages take.
struct InBlock {
    units: Vec<Unit>,
    parts: u32,
    pub loads: u64,
    pub erases: u64,
    pub merge_page_reads: u64,
    pub load_page_writes: u64,
}

impl InBlock {
    /// Data slots of unit `u` (its pages × parts).
    fn data_slots(&self, unit_pages: u64, pages: u64, u: usize) -> u32 {
        let first = u as u64 * unit_pages;
        ((first + unit_pages).min(pages) - first) as u32 * self.parts
    }
}

/// Log LPNs needed by the layout (for the capacity check; 0 for `in-block`, whose log
/// regions are in the units' own blocks).
pub fn log_lpns_needed(cfg: &HostConfig, pages: u64, flash_page_bytes: u32) -> u64 {
    if cfg.ipl.layout == "in-block" {
        return 0;
    }
    let per = u64::from((cfg.ipl.log_sectors * cfg.ipl.sector_bytes).div_ceil(flash_page_bytes));
    pages.div_ceil(u64::from(cfg.ipl.unit_pages.max(1))) * per
}

/// The `in-block` layout's refusals (module docs) and its empty state.
fn in_block_check(cfg: &HostConfig, core: &Core, log_pages: u32, units: usize) -> Result<InBlock> {
    let c = &cfg.ipl;
    let bad = |key: &str, reason: String| {
        Err(HostError::Config {
            key: key.into(),
            reason,
        })
    };
    let dev = &core.device;
    if let Err(e) = dev.native_supported() {
        return match e {
            ssd::SsdError::Config { key, reason } => {
                bad(&key, format!("ipl (layout in-block): {reason}"))
            }
            other => bad("host.ipl.layout", other.to_string()),
        };
    }
    let parts = core.layout.parts;
    let slots = dev.native_slots();
    let need = u64::from(c.unit_pages) * u64::from(parts) + u64::from(log_pages);
    if need > u64::from(slots) || need > 255 {
        return bad(
            "host.ipl.unit_pages",
            format!(
                "an erase unit of {} DB pages ({} flash pages each) and a log region of {log_pages} flash pages needs {need} pages; a block holds {slots} (and at most 255 are supported): lower host.ipl.unit_pages or host.ipl.log_sectors, or use host.ipl.layout = \"separate\"",
                c.unit_pages, parts
            ),
        );
    }
    let params = dev.core.nand.image().params();
    if dev.core.cfg.mlc_mode == ssd::modes::MlcMode::OddMlc {
        return bad(
            "ftl.mlc_mode",
            "ipl's in-block log pages take partial programs, which odd-MLC allows on LSB pages only; use pslc or an SLC device".into(),
        );
    }
    let spp = params.geometry.page_bytes / c.sector_bytes;
    let nop = dev.native_nop(media::BlockId(0));
    if spp > u32::from(nop) {
        return bad(
            "host.ipl.sector_bytes",
            format!(
                "{spp} log sectors per flash page need {spp} programs of a log page, but a page allows {nop} (nand.nop; plain MLC: 1): raise host.ipl.sector_bytes, or use pslc / an SLC device with a larger nand.nop"
            ),
        );
    }
    Ok(InBlock {
        units: vec![Unit::default(); units],
        parts,
        loads: 0,
        erases: 0,
        merge_page_reads: 0,
        load_page_writes: 0,
    })
}

impl Ipl {
    /// `base`: the first LPN past everything else the recovery strategy uses.
    pub fn new(cfg: &HostConfig, core: &Core, base: u64) -> Result<Ipl> {
        let c = &cfg.ipl;
        let bad = |key: &str, reason: String| {
            Err(HostError::Config {
                key: key.into(),
                reason,
            })
        };
        if cfg.strategy != "wal" {
            return bad(
                "host.update",
                format!(
                    "ipl runs with the wal recovery strategy, not {}",
                    cfg.strategy
                ),
            );
        }
        let flash = core.device.core.geo.page_bytes;
        if c.unit_pages == 0 || c.log_sectors == 0 {
            return bad(
                "host.ipl",
                "unit_pages and log_sectors must be at least 1".into(),
            );
        }
        if c.sector_bytes < 64 || c.sector_bytes > flash || flash % c.sector_bytes != 0 {
            return bad(
                "host.ipl.sector_bytes",
                format!(
                    "is {}; it must be at least 64 and divide the {flash} B flash page",
                    c.sector_bytes
                ),
            );
        }
        if core.device.info().name != "none" {
            return bad(
                "protocol.name",
                "ipl writes log sectors through the plain FTL: protocol none".into(),
            );
        }
        if !LAYOUTS.contains(&c.layout.as_str()) {
            return bad(
                "host.ipl.layout",
                format!("is \"{}\"; expected one of {LAYOUTS:?}", c.layout),
            );
        }
        let pages = core.layout.pages;
        let need = base + log_lpns_needed(cfg, pages, flash);
        if need > u64::from(core.device.logical_pages()) {
            return bad(
                "host.ipl",
                format!(
                    "the data, WAL and IPL log regions need {need} device pages; the device has {}",
                    core.device.logical_pages()
                ),
            );
        }
        let units = pages.div_ceil(u64::from(c.unit_pages)) as usize;
        let log_lpns = (c.log_sectors * c.sector_bytes).div_ceil(flash);
        let blocks = if c.layout == "in-block" {
            Some(in_block_check(cfg, core, log_lpns, units)?)
        } else {
            None
        };
        Ok(Ipl {
            blocks,
            unit_pages: u64::from(c.unit_pages),
            sectors: c.log_sectors,
            sector_bytes: c.sector_bytes,
            header: c.record_header_bytes,
            spp: flash / c.sector_bytes,
            log_lpns,
            base: base as u32,
            used: vec![0; units],
            holders: vec![vec![BTreeSet::new(); log_lpns as usize]; units],
            last_end: vec![SimTime::ZERO; units],
            mem: BTreeMap::new(),
            sector_writes: 0,
            sector_in_place: 0,
            merges: 0,
            merge_page_writes: 0,
            first_writes: 0,
        })
    }

    fn add_record(&mut self, page: PageNo, bytes: u32) {
        let cap = self.sector_bytes - SECTOR_META;
        let rec = (self.header + bytes).min(cap);
        let m = self.mem.entry(page).or_default();
        if m.used + rec > cap {
            m.full += 1;
            m.used = rec;
        } else {
            m.used += rec;
        }
    }

    /// A record operation changed `page` (`update::net::changed_ranges`).
    pub fn on_op(&mut self, core: &Core, page: PageNo, op: &RecOp, before: u64) {
        let (_, rb) = super::net::slot_bytes(&core.layout, page, op.rid().slot);
        let n: u32 = super::net::changed_ranges(op, before, rb)
            .iter()
            .map(|r| r.1)
            .sum();
        if n > 0 || !matches!(op, RecOp::Read(_)) {
            self.add_record(page, n);
        }
    }

    /// Rollback restored a whole record image.
    pub fn on_undo(&mut self, core: &Core, page: PageNo, slot: u16) {
        let (_, rb) = super::net::slot_bytes(&core.layout, page, slot);
        self.add_record(page, rb);
    }

    fn log_lpn(&self, unit: usize, sector: u32) -> Lpn {
        Lpn(self.base + unit as u32 * self.log_lpns + sector / self.spp)
    }

    /// Writes back `img` as log sectors (or merges its unit); None when the page must be
    /// written whole (never written before) — the caller does that, then calls `written`.
    pub fn write_back(
        &mut self,
        core: &mut Core,
        img: &Arc<PageImage>,
        at: SimTime,
    ) -> Result<Option<SimTime>> {
        let p = img.page;
        let m = self.mem.remove(&p).unwrap_or_default();
        if self.blocks.is_some() {
            return self
                .write_back_in_block(core, img, m.full + 1, at)
                .map(Some);
        }
        if core.disk[p.0 as usize].is_none() {
            self.first_writes += 1;
            return Ok(None);
        }
        let u = (p.0 / self.unit_pages) as usize;
        let k = m.full + 1;
        if self.used[u] + k > self.sectors {
            return self.merge(core, u, img, at).map(Some);
        }
        let tag = core.tags.add(|| TagContent::Data {
            image: img.clone(),
            part: 0,
        });
        let sector = encode(&[(p.0 as u32, tag)]);
        let mut end = at;
        for _ in 0..k {
            let s = self.used[u];
            let lpn = self.log_lpn(u, s);
            let off = (s % self.spp) * self.sector_bytes;
            let ready = at.max(self.last_end[u]);
            let (t, in_place) =
                core.device
                    .write_sector(lpn, off, &sector, ready)
                    .map_err(Core::dev_err(
                        ready,
                        format!("writing a log sector to {lpn}"),
                    ))?;
            self.last_end[u] = t;
            end = end.max(t);
            self.used[u] += 1;
            self.sector_writes += 1;
            self.sector_in_place += u64::from(in_place);
            self.holders[u][(s / self.spp) as usize].insert(p.0);
            core.net.written(p, u64::from(self.sector_bytes));
        }
        self.refresh_reads(core, u);
        let t0 = core.disk[p.0 as usize].as_ref().map_or(0, |d| d.0);
        core.disk[p.0 as usize] = Some((t0, img.clone()));
        Ok(Some(end))
    }

    /// Merge: every page of unit `u` on flash written whole with its logs applied (`img`
    /// for the page being written back), then an empty log region.
    fn merge(
        &mut self,
        core: &mut Core,
        u: usize,
        img: &Arc<PageImage>,
        at: SimTime,
    ) -> Result<SimTime> {
        self.merges += 1;
        let mut end = at;
        let first = u as u64 * self.unit_pages;
        let last = (first + self.unit_pages).min(core.layout.pages);
        for q in first..last {
            let image = if q == img.page.0 {
                img.clone()
            } else {
                match &core.disk[q as usize] {
                    Some((_, i)) => i.clone(),
                    None => continue,
                }
            };
            let (t0, e) =
                core.write_image(&image, None, at, |d, lpn, tag| d.write_plain(lpn, tag, at))?;
            core.disk[q as usize] = Some((t0, image));
            self.merge_page_writes += 1;
            end = end.max(e);
        }
        self.used[u] = 0;
        for h in &mut self.holders[u] {
            h.clear();
        }
        // The next sector starts a fresh log page, ordered after the merge's writes (a
        // sector naming a newer image is harmless before them, but keep logs behind data).
        #[cfg(feature = "mutants")]
        let end_for_log = if ssd::mutant::on("ipl-sector-before-merge") {
            at
        } else {
            end
        };
        #[cfg(not(feature = "mutants"))]
        let end_for_log = end;
        self.last_end[u] = self.last_end[u].max(end_for_log);
        self.refresh_reads(core, u);
        Ok(end)
    }

    fn in_block(&mut self) -> Result<&mut InBlock> {
        self.blocks
            .as_mut()
            .ok_or_else(|| HostError::Stuck("internal: ipl in-block state missing".into()))
    }

    /// `in-block` write-back of `img` as `k` log sectors in its unit's block, or a merge
    /// (a load, for a unit with no block yet). Returns when it completes.
    fn write_back_in_block(
        &mut self,
        core: &mut Core,
        img: &Arc<PageImage>,
        k: u32,
        at: SimTime,
    ) -> Result<SimTime> {
        if core.trace.is_some() {
            return Err(HostError::Config {
                key: "host.ipl.layout".into(),
                reason: "in-block programs host-managed flash pages, which a txn trace cannot express; use layout separate to capture a trace".into(),
            });
        }
        let p = img.page;
        let u = (p.0 / self.unit_pages) as usize;
        let Some((block, gen)) = self.in_block()?.units[u].block else {
            return self.merge_in_block(core, u, img, at);
        };
        if self.used[u] + k > self.sectors {
            return self.merge_in_block(core, u, img, at);
        }
        let n = {
            let up = self.unit_pages;
            self.in_block()?.data_slots(up, core.layout.pages, u)
        };
        let tag = core.tags.add(|| TagContent::Data {
            image: img.clone(),
            part: 0,
        });
        let sector = encode(&[(p.0 as u32, tag)]);
        let oob = ssd::NativeOob {
            a: u as u32,
            b: gen,
            c: n as u8,
        };
        let mut end = at;
        for _ in 0..k {
            let s = self.used[u];
            let slot = n + s / self.spp;
            let off = (s % self.spp) * self.sector_bytes;
            // Sectors of one unit in order, and after the merge that made its block.
            let ready = at.max(self.last_end[u]);
            let t = if off == 0 {
                core.device.native_program(
                    block,
                    slot,
                    media::Content::Bytes(sector.clone().into()),
                    oob,
                    ready,
                )
            } else {
                self.sector_in_place += 1;
                core.device.native_append(block, slot, off, &sector, ready)
            }
            .map_err(Core::dev_err(
                ready,
                format!("writing log sector {s} of erase unit {u}"),
            ))?;
            self.last_end[u] = t;
            end = end.max(t);
            self.used[u] += 1;
            self.sector_writes += 1;
            self.holders[u][(s / self.spp) as usize].insert(p.0);
            core.net.written(p, u64::from(self.sector_bytes));
        }
        let t0 = core.disk[p.0 as usize].as_ref().map_or(0, |d| d.0);
        core.disk[p.0 as usize] = Some((t0, img.clone()));
        Ok(end)
    }

    /// `in-block` merge of unit `u` (module docs): the old block's pages read, every page of
    /// the unit programmed into a fresh block (`img` for the page being written back), then
    /// the old block erased after those programs; a unit with no block is loaded.
    fn merge_in_block(
        &mut self,
        core: &mut Core,
        u: usize,
        img: &Arc<PageImage>,
        at: SimTime,
    ) -> Result<SimTime> {
        let n = {
            let up = self.unit_pages;
            self.in_block()?.data_slots(up, core.layout.pages, u)
        };
        let old = self.in_block()?.units[u].block;
        let mut ready = at.max(self.last_end[u]);
        if let Some((ob, _)) = old {
            // Read the unit as it is on flash: its data pages and its written log pages.
            let log_pages = self.used[u].div_ceil(self.spp);
            let mut done = ready;
            for slot in 0..n + log_pages {
                let (_, _, t) = core
                    .device
                    .native_read(ob, slot, ready)
                    .map_err(Core::dev_err(
                        ready,
                        format!("reading erase unit {u} for a merge"),
                    ))?;
                done = done.max(t);
                self.in_block()?.merge_page_reads += 1;
            }
            ready = done;
            self.merges += 1;
        } else {
            self.in_block()?.loads += 1;
        }
        let gen = old.map_or(1, |(_, g)| g + 1);
        let (nb, erased) = core.device.native_take_block(ready).map_err(Core::dev_err(
            ready,
            format!("taking a block for erase unit {u}"),
        ))?;
        let ready = ready.max(erased);
        let oob = ssd::NativeOob {
            a: u as u32,
            b: gen,
            c: n as u8,
        };
        let parts = core.layout.parts;
        let first = u as u64 * self.unit_pages;
        let mut end = ready;
        for (i, q) in (first..first + u64::from(n / parts)).enumerate() {
            let page = PageNo(q);
            let image: Option<Arc<PageImage>> = if q == img.page.0 {
                Some(img.clone())
            } else {
                core.disk[q as usize].as_ref().map(|d| d.1.clone())
            };
            let layout = &core.layout;
            let mut t0 = 0;
            for k in 0..parts {
                let tag = core.tags.add(|| TagContent::Data {
                    image: image.clone().unwrap_or_else(|| {
                        Arc::new(PageImage {
                            page,
                            lsn: 0,
                            values: layout.initial_page(page),
                        })
                    }),
                    part: k,
                });
                if k == 0 {
                    t0 = tag;
                }
                let slot = i as u32 * parts + k;
                let t = core
                    .device
                    .native_program(nb, slot, media::Content::Tag(tag), oob, ready)
                    .map_err(Core::dev_err(
                        ready,
                        format!("merging page {q} of erase unit {u}"),
                    ))?;
                end = end.max(t);
            }
            if let Some(image) = image {
                core.disk[q as usize] = Some((t0, image));
            }
            core.stats.page_writes += 1;
            core.net.written(page, u64::from(core.cfg.page_bytes));
            if old.is_some() {
                self.merge_page_writes += 1;
            } else {
                self.in_block()?.load_page_writes += 1;
            }
        }
        if let Some((ob, _)) = old {
            // The old block goes only when every merged page is durable.
            core.device.native_erase(ob, end).map_err(Core::dev_err(
                end,
                format!("erasing erase unit {u}'s old block"),
            ))?;
            self.in_block()?.erases += 1;
        }
        self.in_block()?.units[u].block = Some((nb, gen));
        self.used[u] = 0;
        for h in &mut self.holders[u] {
            h.clear();
        }
        self.last_end[u] = end;
        Ok(end)
    }

    /// `in-block` read of `page`: its data page(s) in its unit's block and the log pages
    /// holding sectors for it; nothing for a unit not loaded yet (as loaded).
    pub fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        let u = (page.0 / self.unit_pages) as usize;
        let mut end = now;
        if let Some((block, _)) = self.in_block()?.units[u].block {
            let parts = core.layout.parts;
            let n = {
                let up = self.unit_pages;
                self.in_block()?.data_slots(up, core.layout.pages, u)
            };
            let i = (page.0 % self.unit_pages) as u32;
            let mut slots: Vec<u32> = (0..parts).map(|k| i * parts + k).collect();
            let extra: Vec<u32> = self.holders[u]
                .iter()
                .enumerate()
                .filter(|(_, h)| h.contains(&page.0))
                .map(|(j, _)| n + j as u32)
                .collect();
            core.also_read_pages += extra.len() as u64;
            slots.extend(extra);
            for slot in slots {
                let (_, _, t) =
                    core.device
                        .native_read(block, slot, now)
                        .map_err(Core::dev_err(
                            now,
                            format!("reading page {} of erase unit {u}", page.0),
                        ))?;
                end = end.max(t);
            }
        }
        core.stats.page_reads += 1;
        Ok(end)
    }

    /// Whether the log regions are in the units' blocks (`in-block`).
    pub fn is_in_block(&self) -> bool {
        self.blocks.is_some()
    }

    fn refresh_reads(&self, core: &mut Core, u: usize) {
        let first = u as u64 * self.unit_pages;
        for q in first..first + self.unit_pages {
            let lpns: Vec<Lpn> = self.holders[u]
                .iter()
                .enumerate()
                .filter(|(_, h)| h.contains(&q))
                .map(|(i, _)| Lpn(self.base + u as u32 * self.log_lpns + i as u32))
                .collect();
            if lpns.is_empty() {
                core.also_read.remove(&q);
            } else {
                core.also_read.insert(q, lpns);
            }
        }
    }

    /// The page was written whole (first write).
    pub fn written(&mut self, _page: PageNo, _end: SimTime) {}

    /// (`ipl_log_page_reads`, the extra reads, is added by the metrics from `Core`.)
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("ipl_sector_writes", self.sector_writes),
            ("ipl_sector_writes_in_place", self.sector_in_place),
            ("ipl_merges", self.merges),
            ("ipl_merge_page_writes", self.merge_page_writes),
            ("ipl_first_page_writes", self.first_writes),
        ];
        if let Some(b) = &self.blocks {
            v.extend([
                ("ipl_unit_loads", b.loads),
                ("ipl_unit_erases", b.erases),
                ("ipl_merge_page_reads", b.merge_page_reads),
                ("ipl_load_page_writes", b.load_page_writes),
            ]);
        }
        v
    }
}

/// One log sector's bytes.
pub fn encode(entries: &[(u32, u64)]) -> Vec<u8> {
    let mut r = Vec::with_capacity(1 + 12 * entries.len() + 4);
    r.push(entries.len() as u8);
    for (p, t) in entries {
        r.extend_from_slice(&p.to_le_bytes());
        r.extend_from_slice(&t.to_le_bytes());
    }
    let crc = sim::crc::crc32(&r);
    r.extend_from_slice(&crc.to_le_bytes());
    r
}

/// The entries of one sector, or None if it is empty or torn. `bytes` may be short (bytes
/// never stored read as 0xFF).
pub fn decode(bytes: &[u8], skip_crc: bool) -> Option<Vec<(u32, u64)>> {
    let at = |j: usize| bytes.get(j).copied().unwrap_or(0xFF);
    let e = at(0) as usize;
    if e == 0 || e == 0xFF || e > 40 {
        return None;
    }
    let body: Vec<u8> = (0..1 + 12 * e).map(at).collect();
    let crc = u32::from_le_bytes([
        at(1 + 12 * e),
        at(2 + 12 * e),
        at(3 + 12 * e),
        at(4 + 12 * e),
    ]);
    if !skip_crc && sim::crc::crc32(&body) != crc {
        return None;
    }
    Some(
        (0..e)
            .map(|i| {
                let o = 1 + 12 * i;
                let p = u32::from_le_bytes(body[o..o + 4].try_into().unwrap_or([0; 4]));
                let t = u64::from_le_bytes(body[o + 4..o + 12].try_into().unwrap_or([0; 8]));
                (p, t)
            })
            .collect(),
    )
}

/// Restart: applies every valid log entry over the pages read from flash (`out`, per page
/// and part, None = loaded state), keeping per part the image with the highest page LSN.
pub fn apply_logs(
    ctx: &mut RecoverCtx<'_>,
    out: &mut BTreeMap<PageNo, Vec<Option<Arc<PageImage>>>>,
) -> Result<()> {
    if ctx.cfg.ipl.layout == "in-block" {
        return recover_in_block(ctx, out);
    }
    let cfg = ctx.cfg;
    let flash = ctx.device.core.geo.page_bytes;
    let pages = ctx.layout.pages;
    let parts = ctx.layout.parts as usize;
    let base = data_device_end(cfg, ctx.layout);
    let n = log_lpns_needed(cfg, pages, flash);
    let sector = cfg.ipl.sector_bytes as usize;
    for i in 0..n {
        let lpn = Lpn((base + i) as u32);
        let (o, t) = ctx
            .device
            .read(lpn, ctx.now)
            .map_err(|e| HostError::Corrupt(format!("reading IPL log page {lpn}: {e}")))?;
        ctx.now = ctx.now.max(t);
        let bytes = match o {
            ssd::ReadOutcome::Bytes(b) => b,
            ssd::ReadOutcome::Unmapped => continue,
            other => {
                return Err(HostError::Corrupt(format!(
                    "IPL log page {lpn} reads {other:?}"
                )))
            }
        };
        for s in 0..(flash as usize / sector) {
            let from = (s * sector).min(bytes.len());
            let Some(entries) = decode(&bytes[from..], cfg.fault_ipa_skip_crc) else {
                continue;
            };
            for (p, tag) in entries {
                let page = PageNo(u64::from(p));
                let img = match ctx.tags.get(tag) {
                    Some(TagContent::Data { image, part: 0 }) if image.page == page => {
                        image.clone()
                    }
                    other => {
                        return Err(HostError::Corrupt(format!(
                            "IPL log page {lpn} names tag {tag} for page {p}, which is {other:?}"
                        )))
                    }
                };
                let v = out.entry(page).or_insert_with(|| vec![None; parts]);
                for part in v.iter_mut() {
                    if part.as_ref().is_none_or(|cur| cur.lsn < img.lsn) {
                        *part = Some(img.clone());
                    }
                }
            }
        }
    }
    let _ = data_lpn;
    Ok(())
}

/// Keeps `img` for every part of `page` whose current image is older.
fn keep_newer(
    out: &mut BTreeMap<PageNo, Vec<Option<Arc<PageImage>>>>,
    parts: usize,
    page: PageNo,
    part: Option<usize>,
    img: &Arc<PageImage>,
) {
    let v = out.entry(page).or_insert_with(|| vec![None; parts]);
    for (k, cur) in v.iter_mut().enumerate() {
        if part.is_some_and(|p| p != k) {
            continue;
        }
        if cur.as_ref().is_none_or(|c| c.lsn < img.lsn) {
            *cur = Some(img.clone());
        }
    }
}

/// `in-block` restart (module docs): per unit the complete block of the highest
/// generation, its data pages, then its log sectors.
fn recover_in_block(
    ctx: &mut RecoverCtx<'_>,
    out: &mut BTreeMap<PageNo, Vec<Option<Arc<PageImage>>>>,
) -> Result<()> {
    let unit_pages = u64::from(ctx.cfg.ipl.unit_pages.max(1));
    let parts = ctx.layout.parts;
    let pages = ctx.layout.pages;
    let units = pages.div_ceil(unit_pages);
    let slots = ctx.device.native_slots();
    let sector = ctx.cfg.ipl.sector_bytes as usize;
    let corrupt = |s: String| HostError::Corrupt(s);
    // Per block: what each slot reads, and the block's owner words (from any slot).
    type Slot = (ssd::ReadOutcome, Option<ssd::NativeOob>);
    let mut cands: BTreeMap<u32, Vec<(u64, Vec<Slot>)>> = BTreeMap::new();
    for b in ctx.device.native_blocks() {
        let mut v = Vec::with_capacity(slots as usize);
        for slot in 0..slots {
            let (o, oob, t) = ctx
                .device
                .native_read(b, slot, ctx.now)
                .map_err(|e| corrupt(format!("reading host block {b} slot {slot}: {e}")))?;
            ctx.now = ctx.now.max(t);
            let stop = o == ssd::ReadOutcome::Unmapped;
            v.push((o, oob));
            if stop {
                break;
            }
        }
        let Some(owner) = v.iter().find_map(|x| x.1) else {
            continue;
        };
        if u64::from(owner.a) >= units {
            return Err(corrupt(format!(
                "host block {b} claims erase unit {}, beyond the {units} units",
                owner.a
            )));
        }
        cands.entry(owner.a).or_default().push((owner.b, v));
    }
    for (u, mut blocks) in cands {
        blocks.sort_by_key(|(g, _)| std::cmp::Reverse(*g));
        let first = u64::from(u) * unit_pages;
        let n = ((first + unit_pages).min(pages) - first) as u32 * parts;
        let mine = |x: &Slot, g: u64| {
            x.1.is_some_and(|o| o.a == u && o.b == g && u32::from(o.c) == n)
        };
        let Some((g, v)) = blocks.into_iter().find(|(g, v)| {
            v.len() >= n as usize
                && v[..n as usize]
                    .iter()
                    .all(|x| mine(x, *g) && matches!(x.0, ssd::ReadOutcome::Tag(_)))
        }) else {
            continue;
        };
        for (slot, x) in v.iter().enumerate() {
            let slot = slot as u32;
            if slot < n {
                let ssd::ReadOutcome::Tag(tag) = x.0 else {
                    continue;
                };
                let (page, k) = (PageNo(first + u64::from(slot / parts)), slot % parts);
                match ctx.tags.get(tag) {
                    Some(TagContent::Data { image, part }) if *part == k && image.page == page => {
                        let image = image.clone();
                        keep_newer(out, parts as usize, page, Some(k as usize), &image);
                    }
                    other => {
                        return Err(corrupt(format!(
                            "erase unit {u} (generation {g}) slot {slot} names tag {tag}, which is {other:?}"
                        )))
                    }
                }
                continue;
            }
            let ssd::ReadOutcome::Bytes(bytes) = &x.0 else {
                continue;
            };
            if !mine(x, g) {
                continue;
            }
            for s in 0..bytes.len().div_ceil(sector) {
                let from = (s * sector).min(bytes.len());
                let Some(entries) = decode(&bytes[from..], ctx.cfg.fault_ipa_skip_crc) else {
                    continue;
                };
                for (p, tag) in entries {
                    let page = PageNo(u64::from(p));
                    if page.0 < first || page.0 >= first + unit_pages {
                        return Err(corrupt(format!(
                            "erase unit {u}'s log names page {p}, outside the unit"
                        )));
                    }
                    let img = match ctx.tags.get(tag) {
                        Some(TagContent::Data { image, part: 0 }) if image.page == page => {
                            image.clone()
                        }
                        other => {
                            return Err(corrupt(format!(
                            "erase unit {u}'s log names tag {tag} for page {p}, which is {other:?}"
                        )))
                        }
                    };
                    keep_newer(out, parts as usize, page, None, &img);
                }
            }
        }
    }
    Ok(())
}

/// What a run-on restart leaves the resumed `Ipl` (`restart_merge`, `Ipl::resumed`).
#[derive(Debug, Default)]
pub struct Resume {
    /// `in-block`: per erase unit the block and generation the restart merged it into
    /// (None: the unit has no block, as loaded).
    units: Vec<Option<(media::BlockId, u64)>>,
    /// When the restart's page writes complete: every unit's next log sector waits for it.
    done: SimTime,
}

impl Resume {
    /// `separate`: the restart wrote its pages through the FTL by `done`; no unit state.
    pub fn separate(done: SimTime) -> Resume {
        Resume {
            units: Vec::new(),
            done,
        }
    }
}

impl Ipl {
    /// The engine starts on a medium whose run-on restart merged every erase unit
    /// (`restart_merge`): each unit's block is the restart's, its log region empty.
    pub fn resumed(&mut self, r: Resume) {
        for e in &mut self.last_end {
            *e = (*e).max(r.done);
        }
        if let Some(b) = self.blocks.as_mut() {
            for (u, x) in r.units.into_iter().enumerate() {
                if let Some(unit) = b.units.get_mut(u) {
                    unit.block = x;
                }
            }
        }
    }
}

/// The `in-block` part of a run-on restart's end-of-restart checkpoint (`strategy::wal`,
/// "Run-on restart"): every erase unit that holds a block or a recovered page is merged, as
/// a merge of the run is (Lee & Moon §4.3), into a fresh block holding the recovered
/// database — `pages` (their page LSN the checkpoint's), every other page of the unit as
/// loaded — with a generation above every block the device kept for the unit, its log
/// region empty; then every older block of the unit is erased, issued not before the fresh
/// block's programs have completed. Blocks whose owner words read nowhere (a torn first
/// program) are erased at once: no restart reads them. The crashed run's log sectors go
/// with their blocks, so the engine resumes with every log region empty
/// (`Ipl::resumed`). Programs are issued at `ready` (after the restart's log force: the
/// WAL rule). Records each written page in `disk`; returns when the programs complete.
///
/// Why it is right, case by case (a crash during it; the master is written only after the
/// programs complete): before a unit's fresh block is complete, the block restart chose
/// before is intact (its erase waits), and the old master's redo rebuilds what the first
/// restart did; once it is complete, its generation is above every other block of the
/// unit, so it is chosen whether or not their erases ran or were torn, and its pages carry
/// the checkpoint's LSN, above every record the old master's scan redoes.
pub fn restart_merge(
    ctx: &mut RecoverCtx<'_>,
    tags: &mut crate::data::TagTable,
    pages: &BTreeMap<PageNo, Arc<PageImage>>,
    disk: &mut BTreeMap<PageNo, (u64, Arc<PageImage>)>,
    ready: SimTime,
) -> Result<(SimTime, Resume)> {
    let unit_pages = u64::from(ctx.cfg.ipl.unit_pages.max(1));
    let parts = ctx.layout.parts;
    let total = ctx.layout.pages;
    let units = total.div_ceil(unit_pages) as usize;
    let slots = ctx.device.native_slots();
    let corrupt = |s: String| HostError::Corrupt(s);
    // Per unit: every block the device kept for it and the highest generation among them.
    let mut owned: Vec<Vec<media::BlockId>> = vec![Vec::new(); units];
    let mut top: Vec<u64> = vec![0; units];
    let mut orphans = Vec::new();
    for b in ctx.device.native_blocks() {
        let mut owner = None;
        for slot in 0..slots {
            let (o, oob, t) = ctx
                .device
                .native_read(b, slot, ctx.now)
                .map_err(|e| corrupt(format!("reading host block {b} slot {slot}: {e}")))?;
            ctx.now = ctx.now.max(t);
            if oob.is_some() {
                owner = oob;
                break;
            }
            if o == ssd::ReadOutcome::Unmapped {
                break;
            }
        }
        match owner {
            Some(o) if (o.a as usize) < units => {
                owned[o.a as usize].push(b);
                top[o.a as usize] = top[o.a as usize].max(o.b);
            }
            Some(o) => {
                return Err(corrupt(format!(
                    "host block {b} claims erase unit {}, beyond the {units} units",
                    o.a
                )))
            }
            None => orphans.push(b),
        }
    }
    let at = ready.max(ctx.now);
    let dev_err = |what: String| move |e: ssd::SsdError| corrupt(format!("{what}: {e}"));
    for b in orphans {
        ctx.device
            .native_erase(b, at)
            .map_err(dev_err(format!("erasing host block {b}")))?;
    }
    let mut out = Resume {
        units: vec![None; units],
        done: at,
    };
    for u in 0..units {
        let first = u as u64 * unit_pages;
        let last = (first + unit_pages).min(total);
        if owned[u].is_empty() && pages.range(PageNo(first)..PageNo(last)).next().is_none() {
            continue; // never loaded, nothing recovered: stays as loaded
        }
        let n = (last - first) as u32 * parts;
        let gen = top[u]
            .checked_add(1)
            .ok_or_else(|| corrupt(format!("erase unit {u} has a block of the last generation")))?;
        let (nb, erased) = ctx
            .device
            .native_take_block(at)
            .map_err(dev_err(format!("taking a block for erase unit {u}")))?;
        let start = at.max(erased);
        let oob = ssd::NativeOob {
            a: u as u32,
            b: gen,
            c: n as u8,
        };
        let mut end = start;
        for (i, q) in (first..last).enumerate() {
            let page = PageNo(q);
            let image = match pages.get(&page) {
                Some(img) => img.clone(),
                None => Arc::new(PageImage {
                    page,
                    lsn: 0,
                    values: ctx.layout.initial_page(page),
                }),
            };
            let mut t0 = 0;
            for k in 0..parts {
                let tag = tags.add(|| TagContent::Data {
                    image: image.clone(),
                    part: k,
                });
                if k == 0 {
                    t0 = tag;
                }
                let t = ctx
                    .device
                    .native_program(
                        nb,
                        i as u32 * parts + k,
                        media::Content::Tag(tag),
                        oob,
                        start,
                    )
                    .map_err(dev_err(format!("merging page {q} of erase unit {u}")))?;
                end = end.max(t);
            }
            if pages.contains_key(&page) {
                disk.insert(page, (t0, image));
            }
        }
        // The old blocks go only when every page of the fresh one is durable (§4.3's merge
        // order). The planted bug (`HostConfig::fault_restart = "ipl-erase-early"`) erases
        // them with the programs.
        let erase_at = if ctx.cfg.fault_restart == "ipl-erase-early" {
            start
        } else {
            end
        };
        for &b in &owned[u] {
            ctx.device
                .native_erase(b, erase_at)
                .map_err(dev_err(format!("erasing erase unit {u}'s block {b}")))?;
        }
        out.units[u] = Some((nb, gen));
        out.done = out.done.max(end);
    }
    Ok((out.done, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_round_trip_and_torn_ones_are_dropped() {
        let s = encode(&[(3, 77), (4, 78)]);
        assert_eq!(decode(&s, false), Some(vec![(3, 77), (4, 78)]));
        assert_eq!(decode(&[], false), None);
        let mut torn = s.clone();
        torn[5] &= 0x0F;
        assert_eq!(decode(&torn, false), None);
        assert!(decode(&torn, true).is_some());
        // A CRC ending in 0xFF, its last byte never stored.
        let t = (0..100_000u64)
            .find(|t| encode(&[(1, *t)]).last() == Some(&0xFF))
            .unwrap();
        let s = encode(&[(1, t)]);
        assert_eq!(decode(&s[..s.len() - 1], false), Some(vec![(1, t)]));
    }
}
