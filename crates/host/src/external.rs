//! The external store of the PCM strategies (`host.pcm.external`, PCMLogging §6.1 and
//! Table 2): a latency-constant disk (`hdd`, `ssd`, `sd-card`,
//! `media::disk`) or commitlab's own emulated SSD (`emulated`): the engine's `ssd::Device`
//! — the device every other host strategy writes, built from the same configuration (for
//! the paper's setting a 32 GiB device of eight 4 GiB packages, e.g. `--preset txflash`)
//! and run with the plain `none` FTL — so destages and page reads see the device's queues,
//! channels, planes and GC instead of a constant.
//!
//! Layout on the device (as the `wal` strategy lays the database, `engine::data_lpn`): DB
//! page p is `parts` logical flash pages (`host.page_bytes` over the flash page size) from
//! LPN `p × parts`; wal-pcm's archived log page `DISK_LOG_BASE + s` (s < `host.log_pages`)
//! follows the database at `data_lpns + s × parts`. Each part is one plain write
//! (`Device::write_plain`, durable when acked); a disk page write is its parts, issued 1 ns
//! apart like the engine's, and completes with the last. The page's words are split over the
//! parts by `media::disk::part_range`; a tag names (page, part, contents) (`FlashLog`).
//!
//! The engine's device is moved into the store when the strategy is created; the engine
//! keeps a tiny placeholder device that nobody writes (so the host metrics' NAND counters
//! are zero for a PCM strategy; the store's figures are the strategy counters `ext_*`).
//!
//! Crash model (DESIGN.md, `pcm_tier::check`): the flash operations (host programs, GC
//! migrations, erases) are crash points; one in flight persists, does not, or tears as the
//! device checker's model says; recovery rebuilds the FTL (`Device::recover`, the `none`
//! protocol's scan) and reads the disk pages back (`flash_image`). A disk page whose parts
//! persisted in part reads as a page torn at part granularity, which the strategies already
//! tolerate (a torn disk page at slot granularity, `media::disk`).
//!
//! The loaded database. The engine's convention for every strategy is that a page never
//! written is unmapped and reads as loaded (`Core::disk`), and an unmapped read costs no
//! NAND read, where a Table 2 disk charges its latency for every page. So that the emulated
//! store pays for reading the loaded database too, `load_database` (called by
//! `world::host_run` before the engine starts, so the load is not part of the run's time:
//! the engine starts when the device is idle) programs every DB page's parts with a
//! *loaded* tag (bit 61 and the LPN), which reads back and recovers as the loaded contents.
//! The crash checker's tiny runs start from an unloaded device (`check::record` builds its
//! own); there a page as loaded is unmapped. `ext_unmapped_page_reads` counts reads of
//! pages never written that found no flash page (0 on a loaded device).
//!
//! Does not: share the device with another store, trim, or write anything but DB and log
//! pages (no superblock: the layout follows from the configuration).

use crate::data::{Layout, PageNo, LOADED_BIT};
use crate::engine::{data_lpns, Core};
use crate::strategy::wal_pcm::DISK_LOG_BASE;
use crate::{HostConfig, HostError, Result};
use media::disk::{part_range, Disk, DiskKind, FlashLog, PageBackend};
use media::NandImage;
use sim::{Lpn, SimTime};
use ssd::{Device, DeviceConfig, ReadOutcome};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The value of `host.pcm.external` that selects the emulated SSD.
pub const EMULATED: &str = "emulated";

/// Tags the store writes carry this bit, so a tag left on the device by an earlier use
/// (an aged device) is never taken for one of the store's pages.
const TAG_BIT: u64 = 1 << 62;
/// The tag a loaded database page's part carries (`data::loaded_tag`).
pub use crate::data::loaded_tag;

/// Programs every part of every DB page of `cfg`'s database with its loaded tag
/// (`loaded_tag`), plain writes at the device's idle instant: the database as loaded, on
/// the device, in the engine's data area (`engine::data_lpn`). For strategies whose
/// database is that area and whose reads and recovery take a loaded tag for the loaded
/// contents: `device-tx`, `wal`, and `cfc-ex` / `afc-ex`, whose version slot 0 is that area
/// and whose recovery reads a slot 0 holding its loaded tag (record area untouched) as the
/// page as loaded, no version, as an unmapped slot (their master, log and version slots 1..
/// stay unmapped). Returns the flash pages written.
pub fn load_data_area(cfg: &HostConfig, seed: u64, device: &mut Device) -> Result<u64> {
    let src = crate::source::build(cfg, seed)?;
    let parts = crate::engine::parts_for(cfg, device.core.geo.page_bytes)?;
    crate::engine::check_fits(cfg, src.as_ref(), parts, device.logical_pages())?;
    write_loaded(&Layout::from_source(src.as_ref(), parts), device)
}

/// Writes `layout`'s data area with loaded tags (`load_data_area`).
fn write_loaded(layout: &Layout, device: &mut Device) -> Result<u64> {
    let n = data_lpns(layout);
    let t = device.barrier(SimTime::ZERO);
    for lpn in 0..n as u32 {
        device
            .write_plain(Lpn(lpn), loaded_tag(Lpn(lpn)), t)
            .map_err(|error| HostError::Device {
                at: t,
                what: format!("loading the database at {}", Lpn(lpn)),
                error,
            })?;
    }
    Ok(n)
}

/// Programs the loaded database onto `device` when `cfg` runs a PCM strategy over the
/// emulated store (module docs); returns the flash pages written (0 otherwise). Issued at
/// the device's idle instant; the engine starts after they completed.
pub fn load_database(cfg: &HostConfig, seed: u64, device: &mut Device) -> Result<u64> {
    let pcm = matches!(
        cfg.strategy.as_str(),
        "pcmlogging" | "pcmlogging-page" | "wal-pcm" | "scmlogging"
    );
    if !pcm || !is_emulated(&cfg.pcm.external) {
        return Ok(0);
    }
    let src = crate::source::build(cfg, seed)?;
    let parts = crate::engine::parts_for(cfg, device.core.geo.page_bytes)?;
    if crate::engine::check_fits(cfg, src.as_ref(), parts, device.logical_pages()).is_err() {
        return Ok(0); // refused with the reason when the engine starts
    }
    write_loaded(&Layout::from_source(src.as_ref(), parts), device)
}

fn cfg_err(reason: String) -> HostError {
    HostError::Config {
        key: "host.pcm.external".into(),
        reason,
    }
}

/// Whether `external` names the emulated SSD.
pub fn is_emulated(external: &str) -> bool {
    matches!(DiskKind::parse(external), Ok(DiskKind::Emulated { .. }))
}

/// The nominal latencies of the emulated store on a device of `dcfg` (`DiskKind::emulated`).
pub fn emulated_kind(dcfg: &DeviceConfig, parts: u32) -> DiskKind {
    DiskKind::emulated(&dcfg.nand.timing, dcfg.nand.page_bytes, parts)
}

/// The external store `host.pcm.external` names, for a PCM strategy being created on
/// `core`. The emulated SSD takes the engine's device (module docs).
pub fn open(cfg: &HostConfig, core: &mut Core) -> Result<Disk> {
    let kind = DiskKind::parse(&cfg.pcm.external).map_err(cfg_err)?;
    if !matches!(kind, DiskKind::Emulated { .. }) {
        return Ok(Disk::new(kind));
    }
    let mut placeholder = Device::in_memory(&placeholder_config())
        .map_err(|e| HostError::Stuck(format!("internal: building the placeholder device: {e}")))?;
    if core.device.core.nand.log().is_some() {
        // Strategies ask the engine's device whether the run is recorded.
        placeholder.core.nand.enable_log();
    }
    let dev = std::mem::replace(&mut core.device, placeholder);
    let store = FlashStore::new(cfg, &core.layout, dev)?;
    Ok(Disk::with_backend(store.kind, Box::new(store)))
}

/// The device left in the engine: the crash checker's tiny device (`check::tiny_config`).
fn placeholder_config() -> DeviceConfig {
    let mut d = DeviceConfig::default();
    d.protocol.name = "none".into();
    let n = &mut d.nand;
    n.channels = 1;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = 2;
    n.blocks_per_plane = 16;
    n.pages_per_block = 8;
    n.page_bytes = 2048;
    n.oob_bytes = 64;
    d
}

/// The emulated SSD as a `PageBackend` (module docs).
pub struct FlashStore {
    dev: Device,
    kind: DiskKind,
    parts: u32,
    db_pages: u64,
    log_first: u32,
    log_pages: u64,
    next_tag: u64,
    /// LPN → the tag last written there (the read-back check).
    current: BTreeMap<u32, u64>,
    log: Option<FlashLog>,
    /// Reads whose flash contents differed from what was written (an FTL bug).
    mismatches: u64,
    /// Planted bug (`PcmSettings::fault_flash_ack_at_issue`).
    fault_ack_at_issue: bool,
    /// Reads of pages never written (as loaded): unmapped on the device, no NAND read.
    unmapped_reads: u64,
    /// The device's counters when the store opened (the load is not the run's).
    base_nand: media::NandCounters,
    base_ftl: ssd::FtlStats,
}

impl FlashStore {
    pub fn new(cfg: &HostConfig, layout: &Layout, dev: Device) -> Result<FlashStore> {
        if dev.info().name != "none" {
            return Err(HostError::Config {
                key: "protocol.name".into(),
                reason: format!(
                    "the emulated external store runs on the plain FTL (protocol none), not {}",
                    dev.info().name
                ),
            });
        }
        let parts = layout.parts.max(1);
        let data = data_lpns(layout);
        // Only wal-pcm archives its log to the store (`wal_pcm::DISK_LOG_BASE`).
        let log_pages = if cfg.strategy == "wal-pcm" {
            u64::from(cfg.log_pages)
        } else {
            0
        };
        let need = data + log_pages * u64::from(parts);
        if need > u64::from(dev.logical_pages()) {
            return Err(cfg_err(format!(
                "the database and the log area need {need} flash pages ({} DB pages and {log_pages} log pages of {parts} parts) but the device has {}",
                layout.pages,
                dev.logical_pages()
            )));
        }
        let t = dev.core.nand.timing().clone();
        let kind = DiskKind::emulated(&t, dev.core.geo.page_bytes, parts);
        Ok(FlashStore {
            kind,
            parts,
            db_pages: layout.pages,
            log_first: data as u32,
            log_pages,
            next_tag: 1,
            current: BTreeMap::new(),
            log: None,
            mismatches: 0,
            fault_ack_at_issue: cfg.pcm.fault_flash_ack_at_issue,
            unmapped_reads: 0,
            base_nand: dev.core.nand.counters(),
            base_ftl: dev.core.stats,
            dev,
        })
    }

    /// The first LPN of disk page `page` (module docs).
    fn first_lpn(&self, page: u64) -> u32 {
        if page < self.db_pages {
            return data_lpn_of(self.parts, page);
        }
        let s = page.wrapping_sub(DISK_LOG_BASE);
        // Strategies address only DB pages and the circular log area (wal_pcm); anything
        // else is a programming error, caught here before it reaches the device.
        assert!(
            page >= DISK_LOG_BASE && s < self.log_pages,
            "internal: disk page {page} is neither a DB page nor a log page"
        );
        self.log_first + (s * u64::from(self.parts)) as u32
    }
}

fn data_lpn_of(parts: u32, page: u64) -> u32 {
    (page * u64::from(parts)) as u32
}

impl PageBackend for FlashStore {
    fn read(&mut self, page: u64, expect: Option<&[u64]>, now: SimTime) -> SimTime {
        let first = self.first_lpn(page);
        let mut end = now;
        for k in 0..self.parts {
            let lpn = first + k;
            let want = self.current.get(&lpn).copied();
            match self.dev.read(Lpn(lpn), now) {
                Ok((o, t)) => {
                    end = end.max(t);
                    if k == 0 && o == ReadOutcome::Unmapped {
                        self.unmapped_reads += 1;
                    }
                    let ok = match (o, want) {
                        (ReadOutcome::Unmapped, None) => expect.is_none(),
                        (ReadOutcome::Tag(g), None) => {
                            expect.is_none() && g == LOADED_BIT | u64::from(lpn)
                        }
                        (ReadOutcome::Tag(g), Some(w)) => g == w && expect.is_some(),
                        _ => false,
                    };
                    if !ok {
                        self.mismatches += 1;
                    }
                }
                Err(_) => self.mismatches += 1,
            }
        }
        debug_assert_eq!(self.mismatches, 0, "flash read-back of disk page {page}");
        end
    }

    fn write(
        &mut self,
        page: u64,
        data: &Arc<Vec<u64>>,
        now: SimTime,
    ) -> std::result::Result<(SimTime, SimTime), String> {
        let first = self.first_lpn(page);
        let mut end = now;
        for k in 0..self.parts {
            let lpn = first + k;
            let tag = TAG_BIT | self.next_tag;
            self.next_tag += 1;
            if let Some(l) = self.log.as_mut() {
                l.contents.insert(tag, (page, k, data.clone()));
                l.pages.insert(page, first);
            }
            // The layout was checked against the device's size at `new`, and the `none`
            // FTL reserves its GC space; a device can still refuse (blocks retired when
            // worn out, `nand.endurance`): the run then ends with that error.
            let t = self
                .dev
                .write_plain(Lpn(lpn), tag, now + u64::from(k))
                .map_err(|e| {
                    format!("the emulated SSD refused disk page {page} (flash page {lpn}): {e}")
                })?;
            self.current.insert(lpn, tag);
            end = end.max(t);
        }
        if self.fault_ack_at_issue {
            // BUG (planted): durable "now", while the programs are still in flight.
            return Ok((now, now));
        }
        Ok((now, end))
    }

    fn set_logging(&mut self, on: bool) {
        if !on {
            self.log = None;
            return;
        }
        let nand = &mut self.dev.core.nand;
        let _ = nand.take_log();
        nand.enable_log();
        self.log = Some(FlashLog {
            base: nand.image().clone(),
            ops: Vec::new(),
            parts: self.parts,
            pages: BTreeMap::new(),
            contents: BTreeMap::new(),
        });
    }

    fn take_log(&mut self) -> Option<FlashLog> {
        let mut l = self.log.take()?;
        l.ops = self.dev.core.nand.take_log();
        Some(l)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let (n, b) = (self.dev.core.nand.counters(), &self.base_nand);
        let (f, g) = (self.dev.core.stats, &self.base_ftl);
        vec![
            (
                "ext_flash_reads",
                (n.reads + n.oob_reads) - (b.reads + b.oob_reads),
            ),
            ("ext_flash_programs", n.programs - b.programs),
            ("ext_flash_erases", n.erases - b.erases),
            (
                "ext_gc_migrations",
                f.gc_page_migrations - g.gc_page_migrations,
            ),
            ("ext_gc_erases", f.gc_erases - g.gc_erases),
            ("ext_readback_mismatches", self.mismatches),
            ("ext_unmapped_page_reads", self.unmapped_reads),
        ]
    }
}

/// The disk image a crashed emulated store holds: the FTL rebuilt from `img` alone
/// (`Device::recover`), then every page the run wrote read back and reassembled from its
/// parts (a part never written, or holding a tag from before the run, is as loaded).
/// Returns the image and the device's recovery time.
pub fn flash_image(
    dcfg: &DeviceConfig,
    layout: &Layout,
    log: &FlashLog,
    img: NandImage,
) -> std::result::Result<(BTreeMap<u64, Vec<u64>>, u64), String> {
    let nand = media::Nand::from_image(img, dcfg.nand.timing.clone());
    let (mut dev, rep) = Device::recover(dcfg, nand)
        .map_err(|e| format!("device recovery failed on a legitimate crash image: {e}"))?;
    let mut now = SimTime::from_ns(rep.time_ns);
    let mut out = BTreeMap::new();
    for (&page, &first) in &log.pages {
        let mut got: Vec<Option<&Arc<Vec<u64>>>> = Vec::new();
        for k in 0..log.parts {
            let lpn = Lpn(first + k);
            let (o, t) = dev
                .read(lpn, now)
                .map_err(|e| format!("reading {lpn} (disk page {page}): {e}"))?;
            now = now.max(t);
            got.push(match o {
                ReadOutcome::Unmapped => None,
                ReadOutcome::Tag(tag) => match log.contents.get(&tag) {
                    Some((p, part, v)) if *p == page && *part == k => Some(v),
                    Some((p, part, _)) => {
                        return Err(format!(
                            "{lpn} (disk page {page} part {k}) holds disk page {p} part {part}"
                        ))
                    }
                    // The loaded database, or a tag from before the store's use.
                    None if tag & TAG_BIT == 0 => None,
                    None => return Err(format!("{lpn} holds unknown tag {tag:#x}")),
                },
                other => return Err(format!("{lpn} (disk page {page}) reads {other:?}")),
            });
        }
        let Some(n) = got.iter().flatten().map(|v| v.len()).max() else {
            continue;
        };
        let mut v = if page < layout.pages {
            layout.initial_page(PageNo(page))
        } else {
            Vec::new()
        };
        v.resize(n.max(v.len()), 0);
        for (k, part) in got.iter().enumerate() {
            if let Some(c) = part {
                let r = part_range(c.len(), log.parts, k as u32);
                v[r.clone()].copy_from_slice(&c[r]);
            }
        }
        out.insert(page, v);
    }
    Ok((out, rep.time_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::data_lpn;

    #[test]
    fn parts_split_a_page_and_db_pages_sit_where_the_engine_puts_them() {
        assert_eq!(part_range(10, 4, 0), 0..3);
        assert_eq!(part_range(10, 4, 3), 9..10);
        assert_eq!(part_range(2, 4, 3), 2..2);
        let cfg = HostConfig::default();
        let src = crate::source::build(&cfg, 1).unwrap();
        let layout = Layout::from_source(src.as_ref(), 4);
        for p in [0, 1, 7] {
            assert_eq!(data_lpn(&layout, PageNo(p), 0).0, data_lpn_of(4, p));
        }
    }
}
