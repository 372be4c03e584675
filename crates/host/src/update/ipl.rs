//! `ipl`: In-Page Logging (Lee & Moon, "Design of flash-based DBMS: an in-page logging
//! approach", SIGMOD 2007), the baseline In-Place Appends is compared against
//! (in-place-appends.md §1; issue 12 item 1).
//!
//! Layout. DB pages are grouped into *erase units* of `host.ipl.unit_pages` pages (15: a
//! 128 KiB erase unit holding 15 data pages of 8 KiB and an 8 KiB log region). Each unit
//! owns a *log region* of `host.ipl.log_sectors` sectors of `host.ipl.sector_bytes` (16 ×
//! 512 B), laid on `ceil(16 × 512 / flash page)` device pages past the WAL's log area; a
//! log page holds `flash page / 512` sectors, written one at a time: the first sector of a
//! log page is its program (out of place), later ones partial programs of the same page
//! (`Device::write_sector`; on MLC only LSB pages allow that, otherwise the device rewrites
//! the log page out of place).
//!
//! Normal processing. Each buffered page has a 512 B in-memory log sector; every update
//! adds a record of `host.ipl.record_header_bytes` (8: the original is silent; offset,
//! length, slot and LSN) plus the net changed bytes (`update::net`). A dirty page's
//! write-back (eviction, checkpoint flush) writes its log sector(s) to its unit's log
//! region instead of the page: one sector, plus one per sector that filled while the page
//! was buffered. *Choice where the original is silent / our engine differs:* the original
//! writes a full sector the moment it fills; the engine's update hook issues no I/O, so a
//! filled sector is written at the page's next write-back (same count of sector writes,
//! later). A page never written before (the loaded state needs no writes here) is written
//! whole the first time, so logs always apply over a body on flash.
//!
//! Reads. A page's fetch reads its data page(s) and every log page of its unit holding a
//! sector with records for it (`Core::also_read`).
//!
//! Merge. When a write-back needs more sectors than the unit's log region has left, the
//! unit is merged: every page of the unit on flash is written with its logs applied (the
//! page being written back with its buffered image), out of place, and the log region
//! starts over. *Choice:* on our page-mapped FTL "write the block's pages to a fresh block
//! and erase the old one" becomes 15 (or fewer: pages never written stay in the loaded
//! state) out-of-place page writes; the old copies and log pages are reclaimed by GC, so
//! the merge's erase is GC's, not an immediate one.
//!
//! Sector format (tag data mode; bytes stand for the records through the tag table):
//!
//! ```text
//! [0]            entry count e (1..=40; 0xFF = never written)
//! [1..1+12e]     entries: DB page number u32 LE, tag u64 LE (the page image after the
//!                records: TagTable entry Data { image, part 0 })
//! [1+12e..5+12e] CRC-32 of bytes [0..1+12e]
//! ```
//!
//! Crash. A torn sector fails its CRC and is ignored; a torn log-page program reads
//! uncorrectable and the FTL keeps the previous copy. Restart takes, per page and part,
//! the image with the highest page LSN among its body and every valid log entry of its
//! unit — so log sectors from before a merge (left in place until overwritten) can never
//! roll a merged page back. WAL redo restores what a lost sector held (a sector is written
//! only after the log is forced past the page LSN, like any page write).
//!
//! Not modelled: the original's log-sector-granularity ECC, its "log region full → merge
//! before the write" timing subtleties beyond the above.

use crate::data::{PageImage, PageNo, TagContent};
use crate::engine::{data_lpn, data_lpns, Core};
use crate::strategy::RecoverCtx;
use crate::{HostConfig, HostError, Result};
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
}

impl Default for IplConfig {
    fn default() -> Self {
        IplConfig {
            unit_pages: 15,
            log_sectors: 16,
            sector_bytes: 512,
            record_header_bytes: 8,
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
    pub sector_writes: u64,
    pub sector_in_place: u64,
    pub merges: u64,
    pub merge_page_writes: u64,
    pub first_writes: u64,
}

/// Log LPNs needed by the layout (for the capacity check).
pub fn log_lpns_needed(cfg: &HostConfig, pages: u64, flash_page_bytes: u32) -> u64 {
    let per = u64::from((cfg.ipl.log_sectors * cfg.ipl.sector_bytes).div_ceil(flash_page_bytes));
    pages.div_ceil(u64::from(cfg.ipl.unit_pages.max(1))) * per
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
        Ok(Ipl {
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
        self.last_end[u] = self.last_end[u].max(end);
        self.refresh_reads(core, u);
        Ok(end)
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
        vec![
            ("ipl_sector_writes", self.sector_writes),
            ("ipl_sector_writes_in_place", self.sector_in_place),
            ("ipl_merges", self.merges),
            ("ipl_merge_page_writes", self.merge_page_writes),
            ("ipl_first_page_writes", self.first_writes),
        ]
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
    let cfg = ctx.cfg;
    let flash = ctx.device.core.geo.page_bytes;
    let pages = ctx.layout.pages;
    let parts = ctx.layout.parts as usize;
    let base = data_lpns(ctx.layout) + 1 + u64::from(cfg.log_pages);
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
