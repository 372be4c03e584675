//! The PCM tier of the host engine (PCMLogging §2–3, §6.1): its settings (`[host.pcm]`),
//! how DRAM and PCM sizes follow from them, what a recorded run of a PCM strategy leaves
//! for the crash checker (`TierLog`), recovery from a PCM image and an external-disk image
//! alone, and the crash sweep over PCM line writes and disk page writes.
//!
//! Sizes (§6.1): the paper runs a 2.4 GB TPC-C database (20 warehouses) with 128 MB of DRAM
//! and 128 MB of PCM. `dram_bytes = 0` / `pcm_bytes = 0` mean "scale with the database":
//! each is `db_bytes × 128 MiB / 2.4 GB` (5.3 % of the database), so smaller databases keep
//! the paper's ratios. The DRAM holds the buffer pool *and* PCMLogging's DRAM tables
//! (Mapping Table, Dirty Page Table, Transaction Table — §6.1: "the main memory area
//! included the space needed for holding the data structures of PCM management"); we
//! reserve their largest size (one `table_entry_bytes` entry per PCM unit, one
//! `tx_entry_bytes` entry per client), so the pool has
//! `(dram_bytes − reserve) / page_bytes` frames.
//!
//! Crash model (media::pcm, media::disk, as `pcm_check`): at instant `T` every write that
//! completed persisted; each write in progress persisted, did not, or tore (a PCM line
//! keeps a subset of its 8-byte words, a disk page a subset of its slots), independently;
//! later writes never began. Instants tried: every PCM line write and disk write start and
//! end, and every commit issue and ack. Exhaustive mode tries each distinct image once:
//! fates of a write that differ only in words it writes with the value already there are
//! one state (`distinct_fates`). The oracle is the host checker's (`check::judge`).
//! Recovery is the recorded strategy's (`recover_for`: PCMLogging's Algorithm 3, or the
//! ARIES restart of `wal-pcm` / `scmlogging` in `strategy::wal_pcm`).
//!
//! On the emulated SSD (`host.pcm.external = "emulated"`, `host::external`) the disk's
//! crash units are the flash operations under its page writes (programs, GC migrations,
//! erases: any subset of those in flight persisted and at most one tore, the device
//! checker's model), crossed with the PCM writes' fates; recovery first rebuilds the FTL
//! from the surviving flash image (`Device::recover`) and reads the disk image back
//! (`external::flash_image`).
//!
//! Run-on (`check_run_on`, pcmlogging and pcmlogging-page): recover from a first crash
//! state with the restart that writes back (`strategy::pcmlogging::restart`,
//! `strategy::pcmlogging_page::restart`), run the engine on the
//! restarted PCM and the crashed disk, and sweep a second crash over the restart's PCM
//! writes and the run's, from the first crash's images (`TierLog::disk_base`).
//!
//! Does not: crash during a restart that only reads (Algorithm 3 writes nothing); run on
//! after wal-pcm or scmlogging, or over the emulated SSD
//! (`check::run_on_refusal`).

use crate::check::{CheckReport, CrashState, HostRecording, Mode, Violation};
use crate::data::{Layout, PageNo};
use crate::strategy::RecoveredDb;
use crate::{HostConfig, HostError, Result};
use media::disk::{DiskKind, DiskWrite};
use media::pcm::{Pcm, PcmConfig};
// The fate of one in-flight PCM line write or disk page write.
use crashstates::WordFate as Fate;
use media::{LoggedOp, NandImage};
use serde::{Deserialize, Serialize};
use sim::{Rng, SimTime};
use std::collections::BTreeMap;

/// The PCM strategies keep the database on PCM and a Table 2 disk; the flash device the
/// engine is built over is unused, so a device protocol would change nothing but the label
/// of the run. Only `none` is accepted (a crash-check matrix or a sweep over protocols would
/// otherwise repeat identical runs under ten names). With `host.pcm.external = "emulated"`
/// the device *is* the external store, run as the plain FTL the issue names (`none`;
/// `host::external`), so the rule is the same.
pub fn check_protocol(strategy: &str, p: &'static ssd::ProtocolInfo) -> Result<()> {
    if p.name != "none" {
        return Err(HostError::Config {
            key: "protocol.name".into(),
            reason: format!(
                "{strategy} keeps the database in PCM and on the external store (host.pcm.external); the flash device is unused, or with external = \"emulated\" it is that store on the plain FTL, so run it with protocol none, not {}",
                p.name
            ),
        });
    }
    Ok(())
}

/// The paper's database size (§6.1: 2.4 GB, 20 warehouses).
pub const PAPER_DB_BYTES: u64 = 2_400_000_000;
/// The paper's DRAM and PCM sizes (§6.1, Table 2).
pub const PAPER_MEM_BYTES: u64 = 128 << 20;

/// `[host.pcm]`: the PCM tier of the PCM strategies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcmSettings {
    /// DRAM bytes: buffer pool plus the PCM strategy's DRAM tables. 0 = scale with the
    /// database (128 MiB per 2.4 GB, §6.1).
    pub dram_bytes: u64,
    /// PCM bytes. 0 = scale with the database (128 MiB per 2.4 GB, §6.1).
    pub pcm_bytes: u64,
    /// PCM allocation unit (§6.1: 128 B).
    pub unit_bytes: u32,
    /// PCM chips serving line requests in parallel (§6.1: 4).
    pub chips: u32,
    /// External store: "hdd", "ssd" (SATA SSD constant) or "sd-card" (Table 2), or
    /// "emulated": commitlab's own emulated SSD, the device the configuration describes, on
    /// the `none` FTL (`host::external`; for the paper's setting use a 32 GiB preset such as
    /// `txflash`).
    pub external: String,
    /// Record payload bytes written after PCMLogging's 32 B record header (the paper's
    /// 117 B average record less the header).
    pub record_bytes: u64,
    /// Destaging policy: "adaptive" (§5.2's cost model, the paper's setting for every
    /// PCMLogging result but Fig. 12's baseline) or "watermark" (§5.1's high-low watermark).
    pub destage: String,
    /// Adaptive destaging: the segment of the birth-death model (§6.4: 640 KB).
    pub segment_bytes: u64,
    /// Interval of the destage I/O series (Fig. 12b) reported in the counters, ns.
    pub destage_interval_ns: u64,
    /// High-low watermark destaging (§5.1): start at this PCM occupancy…
    pub high_watermark: f64,
    /// …and stop below this one.
    pub low_watermark: f64,
    /// Wear leveling's swapping threshold δ in XIDs (§4.2, Algorithm 4); 0 = off.
    pub wear_delta: u64,
    /// pcmlogging: give every attempt of a transaction its own XID (the engine's `TxnId`),
    /// so wait-die restarts advance the XID clock of Algorithm 4. Off (the paper's rule): a
    /// transaction keeps its XID across restarts, and X_c − X_t counts transactions.
    pub xid_per_attempt: bool,
    /// pcmlogging: relocate the ActiveTxList and FreeSlotBitmap (§4.1) after this many
    /// metadata word writes; 0 = never.
    pub relocate_every: u64,
    /// pcmlogging: metadata regions the relocation rotates through.
    pub meta_regions: u64,
    /// DRAM bytes reserved per PCM unit for the Mapping Table / Dirty Page Table entry
    /// that maps it.
    pub table_entry_bytes: u64,
    /// DRAM bytes reserved per client for its Transaction Table entry.
    pub tx_entry_bytes: u64,
    /// A planted bug for testing the crash checker: commit removes the transaction from the
    /// ActiveTxList before its flushes complete. Never set this outside tests.
    #[serde(skip)]
    pub fault_early_atl_removal: bool,
    /// A planted bug: the paper's pseudo-XID rule (docs/HOST.md, "PCM strategies"). Never set outside tests.
    #[serde(skip)]
    pub fault_paper_pseudo_xid: bool,
    /// A planted bug: the pseudo XID is the largest finished XID, aborts included, which a
    /// restart reuses. Never set outside tests.
    #[serde(skip)]
    pub fault_pseudo_xid_of_aborts: bool,
    /// A planted bug: destages free their units before the disk write completed. Never set
    /// this outside tests.
    #[serde(skip)]
    pub fault_early_destage_free: bool,
    /// wal-pcm, scmlogging: a fuzzy checkpoint every this many ms of simulated time
    /// (§6.2.4: PostgreSQL's default, 5 minutes).
    pub checkpoint_interval_ms: u64,
    /// wal-pcm: PCM log-buffer pages (of `host.page_bytes`), each archived to the disk when
    /// full; 2 = the page being filled and the page being archived (§6.1's "additional
    /// page"); Fig. 14 used 1 MB with a 512 KB transfer size.
    pub log_buffer_pages: u64,
    /// A planted bug (wal-pcm, scmlogging): a page goes to stable storage without waiting
    /// for its log records (no WAL rule). Never set this outside tests.
    #[serde(skip)]
    pub fault_skip_wal_rule: bool,
    /// A planted bug (pcmlogging-page): commit frees the versions it replaced before its
    /// commit point. Never set this outside tests.
    #[serde(skip)]
    pub fault_page_free_before_commit_point: bool,
    /// A planted bug (pcmlogging): relocation switches the active metadata region before
    /// the copy completed. Never set this outside tests.
    #[serde(skip)]
    pub fault_early_relocation_switch: bool,
    /// A planted bug (the emulated external store): a flash page write is acked when it is
    /// submitted, not when its program completed, so destages free PCM before the page is
    /// durable. Never set this outside tests.
    #[serde(skip)]
    pub fault_flash_ack_at_issue: bool,
}

impl Default for PcmSettings {
    fn default() -> Self {
        PcmSettings {
            dram_bytes: 0,
            pcm_bytes: 0,
            unit_bytes: 128,
            chips: 4,
            external: "hdd".into(),
            record_bytes: 85,
            destage: "adaptive".into(),
            segment_bytes: 640 << 10,
            destage_interval_ns: 100_000_000,
            high_watermark: 0.99,
            low_watermark: 0.975,
            wear_delta: 0,
            xid_per_attempt: false,
            relocate_every: 0,
            meta_regions: 4,
            table_entry_bytes: 16,
            tx_entry_bytes: 64,
            fault_early_atl_removal: false,
            fault_paper_pseudo_xid: false,
            fault_pseudo_xid_of_aborts: false,
            fault_early_destage_free: false,
            checkpoint_interval_ms: 300_000,
            log_buffer_pages: 2,
            fault_skip_wal_rule: false,
            fault_page_free_before_commit_point: false,
            fault_early_relocation_switch: false,
            fault_flash_ack_at_issue: false,
        }
    }
}

/// The sizes a PCM strategy runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub db_bytes: u64,
    pub dram_bytes: u64,
    pub pcm_bytes: u64,
    /// DRAM bytes reserved for the PCM strategy's tables.
    pub table_reserve_bytes: u64,
    pub frames: u32,
}

fn bad(key: &str, reason: String) -> HostError {
    HostError::Config {
        key: format!("host.pcm.{key}"),
        reason,
    }
}

impl PcmSettings {
    /// The adaptive destager's segment size, or None for the watermark policy.
    pub fn adaptive_segment_bytes(&self) -> Option<u64> {
        (self.destage == "adaptive").then_some(self.segment_bytes)
    }

    /// Checks the settings alone; errors name the key.
    pub fn validate(&self) -> Result<()> {
        DiskKind::parse(&self.external).map_err(|e| bad("external", e))?;
        if !matches!(self.destage.as_str(), "adaptive" | "watermark") {
            return Err(bad(
                "destage",
                format!(
                    "unknown destaging policy '{}' (known: adaptive, watermark)",
                    self.destage
                ),
            ));
        }
        if self.relocate_every > 0 && !(2..=64).contains(&self.meta_regions) {
            return Err(bad(
                "meta_regions",
                format!("{}: relocation needs 2 to 64 regions", self.meta_regions),
            ));
        }
        if self.segment_bytes == 0 {
            return Err(bad("segment_bytes", "must be positive".into()));
        }
        if self.destage_interval_ns == 0 {
            return Err(bad("destage_interval_ns", "must be positive".into()));
        }
        if !(0.0..=1.0).contains(&self.low_watermark)
            || !(0.0..=1.0).contains(&self.high_watermark)
            || self.low_watermark > self.high_watermark
        {
            return Err(bad(
                "high_watermark",
                format!(
                    "need 0 <= low_watermark ({}) <= high_watermark ({}) <= 1",
                    self.low_watermark, self.high_watermark
                ),
            ));
        }
        PcmConfig {
            bytes: u64::from(self.unit_bytes.max(1)) * 64,
            unit_bytes: self.unit_bytes,
            chips: self.chips,
            ..PcmConfig::default()
        }
        .validate()
        .map_err(|e| bad("unit_bytes", e))?;
        if self.unit_bytes < 64 {
            return Err(bad(
                "unit_bytes",
                format!(
                    "{} B cannot hold a 32 B record header and a line",
                    self.unit_bytes
                ),
            ));
        }
        Ok(())
    }

    /// DRAM and PCM sizes and buffer frames for a database of `layout` (module docs), with
    /// the tables reserved per PCM unit (record-level PCMLogging, one record per unit).
    pub fn sizes(&self, cfg: &HostConfig, layout: &Layout) -> Result<Sizes> {
        // At least 16 units of records besides the metadata.
        self.sizes_per(cfg, layout, u64::from(self.unit_bytes), 4096)
    }

    /// `sizes` with one Mapping Table / Dirty Page Table entry reserved per `entry_bytes` of
    /// PCM (a unit, or pcmlogging-page's page slot) and a scaled PCM of at least
    /// `min_pcm_bytes`.
    pub fn sizes_per(
        &self,
        cfg: &HostConfig,
        layout: &Layout,
        entry_bytes: u64,
        min_pcm_bytes: u64,
    ) -> Result<Sizes> {
        let db_bytes = layout.pages * u64::from(cfg.page_bytes);
        let scaled = (u128::from(db_bytes) * u128::from(PAPER_MEM_BYTES)
            / u128::from(PAPER_DB_BYTES)) as u64;
        let ub = u64::from(self.unit_bytes);
        let pcm_bytes = if self.pcm_bytes == 0 {
            (scaled.max(min_pcm_bytes) / ub) * ub
        } else {
            self.pcm_bytes
        };
        if pcm_bytes == 0 || pcm_bytes % ub != 0 {
            return Err(bad(
                "pcm_bytes",
                format!("{pcm_bytes} is not a positive multiple of unit_bytes ({ub})"),
            ));
        }
        let entries = pcm_bytes / entry_bytes;
        let table_reserve_bytes =
            entries * self.table_entry_bytes + u64::from(cfg.clients) * self.tx_entry_bytes;
        let dram_bytes = if self.dram_bytes == 0 {
            // Room for at least 8 pages beside the tables.
            scaled.max(table_reserve_bytes + 8 * u64::from(cfg.page_bytes))
        } else {
            self.dram_bytes
        };
        let frames = dram_bytes.saturating_sub(table_reserve_bytes) / u64::from(cfg.page_bytes);
        if frames < 2 {
            return Err(bad(
                "dram_bytes",
                format!(
                    "{dram_bytes} B leaves {frames} buffer frames after {table_reserve_bytes} B of PCM tables (need at least 2)"
                ),
            ));
        }
        Ok(Sizes {
            db_bytes,
            dram_bytes,
            pcm_bytes,
            table_reserve_bytes,
            frames: u32::try_from(frames).unwrap_or(u32::MAX),
        })
    }
}

/// What a run of a PCM strategy leaves for the crash checker (defined with the hook that
/// returns it, `hooks::TierLog`).
pub use crate::hooks::TierLog;

/// What a run-on restart of a PCMLogging strategy leaves for the engine
/// (`strategy::Resume::Pcm`): the PCM after the restart (its write log holds the restart's
/// writes when the run is recorded), the crash image it started from, the disk, the largest
/// XID the PCM names and when the restart's writes end.
pub struct PcmResume {
    pub pcm: Pcm,
    pub pcm_base: Vec<u8>,
    pub disk: BTreeMap<u64, Vec<u64>>,
    pub xid_max: u64,
    pub end: SimTime,
}

impl std::fmt::Debug for PcmResume {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcmResume")
            .field("disk_pages", &self.disk.len())
            .field("xid_max", &self.xid_max)
            .field("end", &self.end)
            .finish()
    }
}

/// The PCM of a PCM strategy: `bytes`, with `[host.pcm]`'s line unit and chips; a size it
/// cannot take is a configuration error naming `host.pcm.pcm_bytes`.
pub fn new_pcm(s: &PcmSettings, bytes: u64) -> Result<Pcm> {
    Pcm::new(PcmConfig {
        bytes,
        unit_bytes: s.unit_bytes,
        chips: s.chips,
        ..PcmConfig::default()
    })
    .map_err(|e| HostError::Config {
        key: "host.pcm.pcm_bytes".into(),
        reason: e,
    })
}

/// The engine's DRAM under a PCM strategy: a buffer pool of `frames` (what DRAM holds after
/// the strategy's tables, §6.1) and wait-die, which §6.1 runs every scheme under.
pub fn size_dram(core: &mut crate::engine::Core, frames: u32) {
    core.pool = crate::buffer::Pool::new(frames);
    core.cfg.buffer_frames = frames;
    core.cfg.deadlock = crate::DeadlockPolicy::WaitDie;
}

/// The PCM and disk a run-on restart left, when the engine resumes on them
/// (`engine::Core::resume` holds `Resume::Pcm`; anything else is left there): refused over
/// the emulated SSD (its flash would have to be recovered too) and when the restarted PCM
/// is not the one `pcm` (as configured) describes.
pub fn take_resume(
    core: &mut crate::engine::Core,
    strategy: &str,
    disk: &media::disk::Disk,
    pcm: &Pcm,
) -> Result<Option<PcmResume>> {
    let Some(r) = crate::strategy::Resume::take_from::<PcmResume>(&mut core.resume) else {
        return Ok(None);
    };
    if matches!(disk.kind, DiskKind::Emulated { .. }) {
        return Err(HostError::Config {
            key: "host.pcm.external".into(),
            reason: format!("{strategy} resumes on a restarted PCM over hdd, ssd or sd-card only; the emulated SSD's flash would have to be recovered too"),
        });
    }
    if r.pcm.config() != pcm.config() {
        return Err(HostError::Config {
            key: "host.pcm".into(),
            reason: "the restarted PCM is not the one the configuration describes".into(),
        });
    }
    Ok(Some(r))
}

/// The engine's hooks only the PCM strategies have, composed into a strategy through
/// `Strategy::tier` instead of widening the shared trait: record-level reads (§3.3), the
/// write logs for the crash checker, and a restart from the tier's own media. Defined with
/// the trait, below the strategies (`hooks`), so that the engine calls them without naming
/// the tier.
pub use crate::hooks::TierHooks;

/// What a PCM strategy keeps of its run for the crash checker: the PCM image before the
/// run and the disk's pages before it (a run on a restarted tier: the crash image's). Off
/// (`TierRecording::off`) unless the tag table keeps history (`Core::tags.keep`).
#[derive(Debug, Default)]
pub struct TierRecording {
    pcm_base: Option<Vec<u8>>,
    disk_base: BTreeMap<u64, Vec<u64>>,
}

impl TierRecording {
    pub fn off() -> TierRecording {
        TierRecording::default()
    }

    pub fn new(pcm_base: Vec<u8>, disk_base: BTreeMap<u64, Vec<u64>>) -> TierRecording {
        TierRecording {
            pcm_base: Some(pcm_base),
            disk_base,
        }
    }

    /// The run's `TierLog` (once; None when off): the bases and the write logs of `pcm`
    /// and `disk`.
    pub fn take(&mut self, pcm: &mut Pcm, disk: &mut media::disk::Disk) -> Option<TierLog> {
        Some(TierLog {
            pcm_cfg: pcm.config().clone(),
            pcm_base: self.pcm_base.take()?,
            pcm_ops: pcm.take_log(),
            disk_ops: disk.take_log(),
            disk_base: std::mem::take(&mut self.disk_base),
        })
    }
}

/// A PCM strategy's restart from its media as `TierHooks::measure_recovery` reports it:
/// `restart` gives the simulated time and the disk pages it read; no device work.
pub fn measure_restart(
    what: &str,
    restart: impl FnOnce() -> std::result::Result<(u64, u64), String>,
) -> Result<crate::metrics::HostRecoveryMetrics> {
    let wall = std::time::Instant::now();
    restart()
        .map_err(|e| HostError::Corrupt(format!("{what} restart: {e}")))
        .map(
            |(time_ns, pages_read)| crate::metrics::HostRecoveryMetrics {
                device_time_ns: 0,
                device_pages_read: 0,
                time_ns,
                pages_read,
                wall_time_s: wall.elapsed().as_secs_f64(),
            },
        )
}

/// Attaches a file-backed run's tier image (`Core::tier_sink`, taken) to the strategy's PCM
/// and disk, after formatting: the PCM's formatted contents become the image's base.
/// A disk on the emulated SSD keeps its pages on flash, not in a tier image: refused,
/// naming `host.pcm.external`.
pub fn attach_tier_sink(
    core: &mut crate::engine::Core,
    pcm: &mut Pcm,
    disk: &mut media::disk::Disk,
) -> Result<()> {
    let Some(s) = core.tier_sink.take() else {
        return Ok(());
    };
    disk.set_sink(s.clone()).map_err(|e| HostError::Config {
        key: "host.pcm.external".into(),
        reason: format!("{e}; a file-backed run of a PCM strategy needs hdd, ssd or sd-card"),
    })?;
    pcm.set_sink(s)
        .map_err(|e| HostError::Output(format!("tier image: {e}")))
}

/// PCMLogging's restart (Algorithm 3) from a PCM image and a disk image alone: the disk
/// overlaid with the records recovery keeps. Pages not listed are as loaded.
pub fn recover_db(
    layout: &Layout,
    pcm: &Pcm,
    disk: &BTreeMap<u64, Vec<u64>>,
) -> std::result::Result<RecoveredDb, String> {
    if crate::strategy::pcmlogging_page::formatted(pcm) {
        return crate::strategy::pcmlogging_page::recover_db(layout, pcm, disk);
    }
    let r = crate::strategy::pcmlogging::recover(pcm)?;
    let mut pages: BTreeMap<PageNo, Vec<u64>> = BTreeMap::new();
    for (p, v) in disk {
        pages.insert(PageNo(*p), v.clone());
    }
    for (&(p, s), &v) in &r.records {
        if p >= layout.pages {
            return Err(format!("pcm record ({p}, {s}) is beyond the database"));
        }
        let page = pages
            .entry(PageNo(p))
            .or_insert_with(|| layout.initial_page(PageNo(p)));
        let Some(x) = page.get_mut(s as usize) else {
            return Err(format!("pcm record ({p}, {s}) is beyond its page's slots"));
        };
        *x = v;
    }
    Ok(RecoveredDb {
        pages,
        pages_read: 0,
        time_ns: r.scan_ns,
    })
}

/// The restart of the recorded run's strategy from a PCM image and a disk image alone (the
/// crash checker's, and `recover --host` of a tier image's).
pub fn recover_for(
    rec: &HostRecording,
    pcm: &Pcm,
    disk: &BTreeMap<u64, Vec<u64>>,
) -> std::result::Result<RecoveredDb, String> {
    match rec.cfg.strategy.as_str() {
        "wal-pcm" | "scmlogging" => crate::strategy::wal_pcm::recover(
            &rec.layout,
            pcm,
            disk,
            match DiskKind::parse(&rec.cfg.pcm.external)? {
                DiskKind::Emulated { .. } => {
                    crate::external::emulated_kind(&rec.dcfg, rec.layout.parts)
                }
                k => k,
            },
        ),
        _ => recover_db(&rec.layout, pcm, disk),
    }
}

/// The fates of a write of `words` words (`crashstates::word_fates`, in its order) that
/// leave distinct images when only the words in `changed` differ from what the medium
/// holds: two fates whose persisted words agree on `changed` write the same bytes, so the
/// first of them stands for both. (The
/// sweep enumerated every fate before: of the tiny pcmlogging-page run's 414,752 exhaustive
/// states, 31,848 were distinct, and with run-on each first state's second crash repeated
/// its images 5 to 77 times over; the run-on check took CPU-hours.)
fn distinct_fates(words: u32, changed: u64) -> Vec<Fate> {
    let all = crashstates::word_mask(words);
    let mut seen: Vec<u64> = Vec::new();
    let mut v = Vec::new();
    for f in crashstates::word_fates(words) {
        let m = match f {
            Fate::Lost => 0,
            Fate::Done => all,
            Fate::Torn(m) => m,
        } & changed;
        if !seen.contains(&m) {
            seen.push(m);
            v.push(f);
        }
    }
    v
}

/// The words of `o` (bit i: its i-th word) whose bytes differ from `img`'s.
fn changed_words(o: &media::pcm::PcmWrite, img: &[u8]) -> u64 {
    let first = o.addr / 8;
    let mut m = 0u64;
    for (i, b) in o.data.iter().enumerate() {
        let a = o.addr + i as u64;
        let w = a / 8 - first;
        if img.get(a as usize) != Some(b) {
            m |= if w >= 64 { u64::MAX } else { 1 << w };
        }
    }
    m
}

/// Whether two PCM writes touch a common word (their fates then do not commute: the
/// sweep keeps every fate of both).
fn overlaps(a: &media::pcm::PcmWrite, b: &media::pcm::PcmWrite) -> bool {
    let (a0, a1) = (a.addr / 8, (a.addr + a.data.len() as u64 - 1) / 8);
    let (b0, b1) = (b.addr / 8, (b.addr + b.data.len() as u64 - 1) / 8);
    a0 <= b1 && b0 <= a1
}

/// The fate of the flash operations in flight at a crash: those that persisted and at most
/// one torn (DESIGN.md, crash model; `crashstates::Fate`).
type FlashFate = crashstates::Fate;

/// The crash sweep over a recorded PCM-strategy run (module docs). On the emulated SSD
/// (`external`) the disk's crash points are the flash operations under its page writes.
pub fn check(
    rec: &HostRecording,
    tier: &TierLog,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
) -> std::result::Result<CheckReport, String> {
    sweep(rec, tier, mode, seed, only, None, &mut |_, t, img, dimg| {
        Ok((restart_and_judge(rec, tier, t, img, &dimg), None))
    })
}

/// The findings of one crash state: recover from the PCM image `img` and the disk image
/// `dimg` with the recorded run's strategy and judge the database at `t`.
fn restart_and_judge(
    rec: &HostRecording,
    tier: &TierLog,
    t: SimTime,
    img: Vec<u8>,
    dimg: &BTreeMap<u64, Vec<u64>>,
) -> Vec<String> {
    match Pcm::from_image(tier.pcm_cfg.clone(), img).and_then(|pcm| recover_for(rec, &pcm, dimg)) {
        Ok(db) => crate::check::judge(rec, t, &db.pages),
        Err(e) => vec![format!("recovery failed on a legitimate crash image: {e}")],
    }
}

/// What a crash state's judgement gives `sweep`: its findings and, in run-on mode, the
/// report of the second crashes after recovering from it and running on.
type Judged = (Vec<String>, Option<CheckReport>);

/// A state's judgement: (state index, instant, PCM image, disk image).
type JudgeFn<'a> = dyn FnMut(u64, SimTime, Vec<u8>, BTreeMap<u64, Vec<u64>>) -> std::result::Result<Judged, String>
    + 'a;

/// The crash sweep (module docs) with each state judged by `judge`; `window` (exhaustive
/// mode only): try the instants before the first at or after `.0` and `.1` more.
fn sweep(
    rec: &HostRecording,
    tier: &TierLog,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
    window: Option<(SimTime, usize)>,
    judge: &mut JudgeFn<'_>,
) -> std::result::Result<CheckReport, String> {
    let np = tier.pcm_ops.len();
    let flash = tier.disk_ops.flash.as_ref();
    // The latency-constant disk's page writes are crash units; on flash its NAND operations.
    let disk_ops: &[DiskWrite] = if flash.is_some() {
        &[]
    } else {
        &tier.disk_ops.writes
    };
    let fops: &[LoggedOp] = flash.map(|f| f.ops.as_slice()).unwrap_or(&[]);
    let nd = disk_ops.len();
    let mut b = crashstates::instants(
        tier.pcm_ops
            .iter()
            .flat_map(|o| [o.start, o.end])
            .chain(disk_ops.iter().flat_map(|o| [o.start, o.end]))
            .chain(crashstates::op_times(fops))
            .chain(rec.commits.iter().flat_map(|c| [c.issue, c.ack])),
    );
    if let (Some((from, n)), Mode::Exhaustive { .. }) = (window, mode) {
        let cut = b.iter().position(|x| *x >= from).unwrap_or(b.len());
        b.truncate(cut.saturating_add(n).min(b.len()));
    }
    let mut rep = CheckReport {
        ops: np + nd + fops.len(),
        commits: rec.commits.len(),
        ..Default::default()
    };
    let root = Rng::new(seed).fork("host-pcm-crash");
    let plan: Vec<(SimTime, Option<u64>)> = match mode {
        Mode::Exhaustive { .. } => b.iter().map(|&t| (t, None)).collect(),
        Mode::Random { schedules } => {
            let range = match only {
                Some(o) if o < schedules => o..o + 1,
                Some(_) => 0..0,
                None => 0..schedules,
            };
            crashstates::random_plan(&root, range, &b)
                .into_iter()
                .map(|(t, k)| (t, Some(k)))
                .collect()
        }
    };
    // Writes in completion order: PCM writes to one line share a chip and disk writes share
    // the disk, so completion order is issue order wherever two writes overlap in place.
    // (Flash operations on one page or block share its plane, likewise.)
    let mut pcm_by_end: Vec<usize> = (0..np).collect();
    pcm_by_end.sort_by_key(|&i| (tier.pcm_ops[i].end, i));
    let mut disk_by_end: Vec<usize> = (0..nd).collect();
    disk_by_end.sort_by_key(|&i| (disk_ops[i].end, i));
    let mut flash_by_end: Vec<usize> = (0..fops.len()).collect();
    flash_by_end.sort_by_key(|&i| (fops[i].end, i));
    let (mut pp, mut dp, mut fp) = (0, 0, 0);
    let mut pcm_img = tier.pcm_base.clone();
    let mut disk: BTreeMap<u64, Vec<u64>> = tier.disk_base.clone();
    let mut nand: Option<NandImage> = flash.map(|f| f.base.clone());
    let mut index = 0u64;
    for (t, rand) in plan {
        while pp < np && tier.pcm_ops[pcm_by_end[pp]].end <= t {
            tier.pcm_ops[pcm_by_end[pp]].apply(&mut pcm_img);
            pp += 1;
        }
        while dp < nd && disk_ops[disk_by_end[dp]].end <= t {
            let o = &disk_ops[disk_by_end[dp]];
            disk.insert(o.page, o.data.clone());
            dp += 1;
        }
        while fp < fops.len() && fops[flash_by_end[fp]].end <= t {
            let i = flash_by_end[fp];
            if let Some(img) = nand.as_mut() {
                img.apply(&fops[i].kind)
                    .map_err(|e| format!("internal: replaying flash op {i}: {e}"))?;
            }
            fp += 1;
        }
        let pin = crashstates::in_flight_at(tier.pcm_ops.iter().map(|o| (o.start, o.end)), t);
        let din = crashstates::in_flight_at(disk_ops.iter().map(|o| (o.start, o.end)), t);
        let fin = crashstates::in_flight_at(fops.iter().map(|o| (o.start, o.end)), t);
        let words: Vec<u32> = pin
            .iter()
            .map(|&i| tier.pcm_ops[i].words())
            .chain(din.iter().map(|&i| disk_ops[i].data.len() as u32))
            .collect();
        rep.max_in_flight_seen = rep.max_in_flight_seen.max(words.len() + fin.len());
        // (index, PCM and disk fates, flash fate) of every state tried at `t`.
        let states: Vec<(u64, Vec<Fate>, FlashFate)> = match rand {
            Some(k) => {
                let mut r = root.fork(&k.to_string());
                r.next_u64();
                let c = words
                    .iter()
                    .map(|&w| crashstates::draw_word_fate(&mut r, w))
                    .collect();
                // Drawn after the PCM fates, so a run without flash keeps its schedules.
                let ff = crashstates::draw_fates(fops, &fin, &mut r);
                vec![(k, c, ff)]
            }
            None => {
                // Of each in-flight write's fates, those that leave distinct images
                // (`distinct_fates`): a word it writes with the value already there is the
                // same whatever the fate, so fates that differ only there are one state.
                let per_write: Vec<Vec<Fate>> = pin
                    .iter()
                    .map(|&i| {
                        let o = &tier.pcm_ops[i];
                        let alone = pin
                            .iter()
                            .all(|&j| j == i || !overlaps(o, &tier.pcm_ops[j]));
                        let changed = if alone {
                            changed_words(o, &pcm_img)
                        } else {
                            crashstates::word_mask(o.words())
                        };
                        distinct_fates(o.words(), changed)
                    })
                    .chain(din.iter().map(|&i| {
                        let o = &disk_ops[i];
                        let alone = din.iter().all(|&j| j == i || disk_ops[j].page != o.page);
                        let fs = crashstates::word_fates(o.data.len() as u32);
                        if !alone {
                            return fs;
                        }
                        // A torn page write keeps a subset of its first 64 slots; the slots
                        // after them persist only with the whole write.
                        let before = disk.get(&o.page);
                        let initial;
                        let before: &[u64] = match before {
                            Some(v) => v,
                            None if o.page < rec.layout.pages => {
                                initial = rec.layout.initial_page(PageNo(o.page));
                                &initial
                            }
                            None => &[],
                        };
                        let (mut lo, mut hi) = (0u64, false);
                        for (s, v) in o.data.iter().enumerate() {
                            if before.get(s).copied().unwrap_or(0) != *v {
                                if s < 64 {
                                    lo |= 1 << s;
                                } else {
                                    hi = true;
                                }
                            }
                        }
                        let mut seen: Vec<(u64, bool)> = Vec::new();
                        fs.into_iter()
                            .filter(|f| {
                                let k = match f {
                                    Fate::Lost => (0, false),
                                    Fate::Done => (lo, hi),
                                    Fate::Torn(m) => (m & lo, false),
                                };
                                let new = !seen.contains(&k);
                                seen.push(k);
                                new
                            })
                            .collect()
                    }))
                    .collect();
                let all = crashstates::product_of(&per_write, 1 << 14).map_err(|_| {
                    format!(
                        "{} writes are in progress at {t}: too many to enumerate",
                        words.len()
                    )
                })?;
                let max = match mode {
                    Mode::Exhaustive { max_in_flight } => max_in_flight,
                    Mode::Random { .. } => usize::MAX,
                };
                if fin.len() > max.min(12) {
                    return Err(format!(
                        "{} flash operations are in progress at {t}; exhaustive checking allows {}",
                        fin.len(),
                        max.min(12)
                    ));
                }
                let ff: Vec<FlashFate> = crashstates::fates_at(fops, &fin);
                let mut v = Vec::with_capacity(ff.len() * all.len());
                for f in &ff {
                    for c in &all {
                        index += 1;
                        v.push((index - 1, c.clone(), f.clone()));
                    }
                }
                v
            }
        };
        // The disk image of the previous flash fate, reused while it repeats.
        let mut cached: Option<(
            FlashFate,
            std::result::Result<BTreeMap<u64, Vec<u64>>, String>,
        )> = None;
        for (k, combo, ffate) in states {
            if only.is_some_and(|o| o != k) {
                continue;
            }
            let base_disk: std::result::Result<BTreeMap<u64, Vec<u64>>, String> =
                match (flash, nand.as_ref()) {
                    (Some(f), Some(durable)) => {
                        if cached.as_ref().is_none_or(|(c, _)| *c != ffate) {
                            let img = flash_fate_image(durable, fops, &ffate)?;
                            let d = crate::external::flash_image(&rec.dcfg, &rec.layout, f, img)
                                .map(|(d, _)| d);
                            cached = Some((ffate.clone(), d));
                        }
                        cached
                            .as_ref()
                            .map(|(_, d)| d.clone())
                            .unwrap_or_else(|| Err("internal: no flash image".into()))
                    }
                    _ => Ok(disk.clone()),
                };
            let mut img = pcm_img.clone();
            let mut persisted = Vec::new();
            for (j, &i) in pin.iter().enumerate() {
                let o = &tier.pcm_ops[i];
                match combo[j] {
                    Fate::Lost => {}
                    Fate::Done => {
                        o.apply(&mut img);
                        persisted.push(i);
                    }
                    Fate::Torn(m) => o.apply_torn(&mut img, m),
                }
            }
            let (findings, second) = match base_disk {
                Err(e) => (vec![format!("flash store: {e}")], None),
                Ok(mut dimg) => {
                    for (j, &i) in din.iter().enumerate() {
                        let o = &disk_ops[i];
                        let f = combo[pin.len() + j];
                        let mut page = dimg.get(&o.page).cloned().unwrap_or_else(|| {
                            if o.page < rec.layout.pages {
                                rec.layout.initial_page(PageNo(o.page))
                            } else {
                                Vec::new() // a log page beyond the database (wal-pcm)
                            }
                        });
                        // A write longer than what it tears onto (a page LSN word after the
                        // slots).
                        if page.len() < o.data.len() {
                            page.resize(o.data.len(), 0);
                        }
                        match f {
                            Fate::Lost => {}
                            Fate::Done => {
                                page = o.data.clone();
                                persisted.push(np + i);
                            }
                            Fate::Torn(m) => {
                                for (s, v) in o.data.iter().enumerate() {
                                    if s < 64 && m >> s & 1 == 1 {
                                        page[s] = *v;
                                    }
                                }
                            }
                        }
                        dimg.insert(o.page, page);
                    }
                    judge(k, t, img, dimg)?
                }
            };
            persisted.extend(ffate.0.iter().map(|i| np + nd + i));
            rep.states += 1;
            if !findings.is_empty() {
                rep.violations += 1;
            }
            let state = CrashState {
                index: k,
                t,
                persisted,
                torn: ffate.1.map(|(i, v)| (np + nd + i, v)),
                torn_log: None,
                in_flight: pin
                    .iter()
                    .copied()
                    .chain(din.iter().map(|i| np + i))
                    .chain(fin.iter().map(|i| np + nd + i))
                    .collect(),
            };
            if (!findings.is_empty() && rep.first.len() < 5) || only.is_some() {
                let mut findings = findings;
                if !findings.is_empty() {
                    findings.insert(
                        0,
                        format!(
                        "(in flight: pcm line writes {pin:?}, disk writes {din:?}, flash ops {fin:?}; fates {combo:?}, flash persisted {:?} torn {:?})", ffate.0, ffate.1
                    ),
                    );
                }
                rep.first.push(Violation {
                    inside: Vec::new(),
                    run_on: None,
                    state: state.clone(),
                    findings,
                });
            }
            if let Some(n) = second {
                // Run-on mode: the second crashes after recovering from this state.
                rep.states += n.states;
                rep.states_after_run_on += n.states;
                rep.violations += n.violations;
                rep.run_on_ops_max = rep.run_on_ops_max.max(n.ops);
                for v in n.first {
                    if rep.first.len() >= 5 && only.is_none() {
                        break;
                    }
                    rep.first.push(Violation {
                        inside: Vec::new(),
                        run_on: Some(v.state),
                        state: state.clone(),
                        findings: v
                            .findings
                            .into_iter()
                            .map(|x| format!("after recover and run on: {x}"))
                            .collect(),
                    });
                }
            }
        }
    }
    Ok(rep)
}

/// The flash image of a crash: the durable image plus the in-flight operations that
/// persisted, and the torn one.
fn flash_fate_image(
    durable: &NandImage,
    fops: &[LoggedOp],
    f: &FlashFate,
) -> std::result::Result<NandImage, String> {
    let mut img = durable.clone();
    for &i in &f.0 {
        img.apply(&fops[i].kind)
            .map_err(|e| format!("internal: applying in-flight flash op {i}: {e}"))?;
    }
    if let Some((i, k)) = f.1 {
        img.apply_torn(&fops[i].kind, k)
            .map_err(|e| format!("internal: tearing flash op {i}: {e}"))?;
    }
    Ok(img)
}

/// Run-on mode for the PCM tier (`check::check_run_on`; docs/CRASH-MODEL.md, "Host
/// checker: recover, run on, crash again"): every first crash state as `check` draws or
/// enumerates it; for each one whose restart is right, restart again with the restart that
/// writes back (`strategy::pcmlogging::restart`), judge its database, start the engine on
/// the restarted PCM and the crashed disk with a fresh batch of transactions, and crash
/// again — exhaustively every state of the restart's writes and of the first `window`
/// instants of the run after them, or randomly one state anywhere. A second state is
/// judged against the second run's commits from the recovered database.
pub fn check_run_on(
    rec: &HostRecording,
    tier: &TierLog,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
    window: usize,
) -> std::result::Result<CheckReport, String> {
    if tier.disk_ops.flash.is_some() {
        return Err(
            "host.pcm.external: run-on over the emulated SSD is not done (its flash would have to be recovered under the restarted PCM)"
                .into(),
        );
    }
    let root = Rng::new(seed).fork("host-pcm-crash-run-on");
    sweep(rec, tier, mode, seed, only, None, &mut |k, t, img, dimg| {
        let f = restart_and_judge(rec, tier, t, img.clone(), &dimg);
        if !f.is_empty() {
            return Ok((f, None));
        }
        let mut r = root.fork(&k.to_string());
        let seed2 = r.next_u64();
        let rec2 = match run_on(rec, tier, img, dimg, t, seed2) {
            Ok(x) => x,
            Err(f) => return Ok((f, None)),
        };
        let Some(tier2) = rec2.tier.as_ref() else {
            return Ok((
                vec!["internal: the run on the restarted tier left no log".into()],
                None,
            ));
        };
        let (mode2, window2) = match mode {
            // The restart's writes end when the run starts (`WriteBack::start`): every
            // instant before its first commit's issue, and `window` after.
            Mode::Exhaustive { .. } => (
                mode,
                Some((
                    rec2.commits
                        .iter()
                        .map(|c| c.issue)
                        .min()
                        .unwrap_or(SimTime::ZERO),
                    window,
                )),
            ),
            Mode::Random { .. } => (Mode::Random { schedules: 1 }, None),
        };
        let n = sweep(
            &rec2,
            tier2,
            mode2,
            seed2,
            None,
            window2,
            &mut |_, t2, i2, d2| Ok((restart_and_judge(&rec2, tier2, t2, i2, &d2), None)),
        )?;
        Ok((Vec::new(), Some(n)))
    })
}

/// Restarts `rec`'s strategy on its crash images (`img`, `disk`, crashed at `t`) with the
/// restart that writes back, judges the database it leaves, and runs the engine on it with a
/// fresh batch of `host.transactions` transactions drawn with `seed` (ids above every
/// recovered one). Returns the second run as a recording — its PCM tape the restart's writes
/// then the run's, its disk base the crash image, its oracle starting from the recovered
/// database — or the findings.
pub fn run_on(
    rec: &HostRecording,
    tier: &TierLog,
    img: Vec<u8>,
    disk: BTreeMap<u64, Vec<u64>>,
    t: SimTime,
    seed: u64,
) -> std::result::Result<HostRecording, Vec<String>> {
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || -> std::result::Result<HostRecording, Vec<String>> {
            let one = |e: String| vec![e];
            let fault = match rec.cfg.fault_restart.as_str() {
                "pcm-keep-replaced" => crate::strategy::pcmlogging::RestartFault::KeepReplaced,
                "pcm-atl-first" => crate::strategy::pcmlogging::RestartFault::AtlFirst,
                _ => crate::strategy::pcmlogging::RestartFault::None,
            };
            let mut pcm = Pcm::from_image(tier.pcm_cfg.clone(), img.clone()).map_err(one)?;
            pcm.set_logging(true);
            let (xid_max, end) = match rec.cfg.strategy.as_str() {
                "pcmlogging" => {
                    let r = crate::strategy::pcmlogging::restart(&mut pcm, SimTime::ZERO, fault)
                        .map_err(|e| one(format!("run-on restart: {e}")))?;
                    (r.xid_max, r.end)
                }
                "pcmlogging-page" => {
                    let r =
                        crate::strategy::pcmlogging_page::restart(&mut pcm, SimTime::ZERO, fault)
                            .map_err(|e| one(format!("run-on restart: {e}")))?;
                    (r.xid_max, r.end)
                }
                s => return Err(one(format!("run-on is not done for {s}"))),
            };
            // The database the restart leaves: what recovery finds on its PCM now.
            let db = recover_for(rec, &pcm, &disk).map_err(|e| {
                one(format!(
                    "recovery after the run-on restart's writes failed: {e}"
                ))
            })?;
            let findings = crate::check::judge(rec, t, &db.pages);
            if !findings.is_empty() {
                return Err(findings);
            }
            let dev = ssd::Device::in_memory(&rec.dcfg).map_err(|e| one(e.to_string()))?;
            let wb = crate::strategy::WriteBack {
                tags: rec.tags.clone(),
                resume: Some(crate::strategy::Resume::new(PcmResume {
                    pcm,
                    pcm_base: img,
                    disk,
                    xid_max,
                    end,
                })),
                start: end,
                ..Default::default()
            };
            let mut cfg = rec.cfg.clone();
            cfg.measure_recovery = false;
            // The same database as the first run's: TPC-C's and TATP's loaded contents
            // follow the source's seed (the recovered database lists only the pages that
            // differ from them); the fresh batch of transactions is drawn by the engine
            // from `seed`. (Found by `crash --host pcmlogging --protocol none --run-on
            // --schedules 200 --seed 2 --set host.workload="tatp"`: 5 of 400 states, a
            // destage in the run on wrote the second seed's loaded records.)
            let source = crate::source::build(&cfg, rec.seed).map_err(|e| one(e.to_string()))?;
            let mut eng = crate::engine::Engine::resume(
                &cfg,
                dev,
                source,
                seed,
                true,
                wb,
                crate::check::next_txn_after(rec),
            )
            .map_err(|e| {
                one(format!(
                    "the engine cannot start on the restarted tier: {e}"
                ))
            })?;
            eng.run()
                .map_err(|e| one(format!("the run on the restarted tier failed: {e}")))?;
            let m = eng.metrics(&rec.dcfg.protocol.name, 0.0);
            let run = eng.into_run(m);
            Ok(HostRecording {
                cfg,
                dcfg: rec.dcfg.clone(),
                seed,
                layout: run.core.layout.clone(),
                base: rec.base.clone(),
                ops: Vec::new(),
                commits: run.commits,
                tags: run.core.tags,
                metrics: run.metrics,
                tier: run.tier,
                log: None,
                start: Some(db.pages),
                journal: None,
            })
        },
    ));
    match out {
        Err(p) => {
            let msg = crate::check::panic_text(&*p);
            Err(vec![format!("run-on panicked: {msg}")])
        }
        Ok(x) => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use media::pcm::PcmWrite;

    fn line(addr: u64, data: Vec<u8>) -> PcmWrite {
        PcmWrite {
            addr,
            data,
            start: SimTime::ZERO,
            end: SimTime::ZERO,
        }
    }

    /// A write of what the line already holds is one state, not four; a write that changes
    /// one word is two (that word persisted or not); one that changes words the two torn
    /// masks split differently keeps all four.
    #[test]
    fn fates_that_leave_the_same_image_are_one_state() {
        let img = vec![7u8; 128];
        let same = line(64, vec![7; 64]);
        assert_eq!(changed_words(&same, &img), 0);
        assert_eq!(distinct_fates(8, 0).len(), 1);
        let mut one = vec![7u8; 64];
        one[3 * 8 + 1] = 9;
        let w = line(64, one);
        assert_eq!(changed_words(&w, &img), 1 << 3);
        assert_eq!(distinct_fates(8, 1 << 3).len(), 2);
        assert_eq!(distinct_fates(8, 0xff).len(), 4);
        // Words 1 and 4: the half mask (words 0-3) keeps the first, the alternate one
        // (0, 2, 4, 6) the second; words 0 and 7: both torn masks keep word 0 only.
        assert_eq!(distinct_fates(8, 0x12).len(), 4);
        assert_eq!(distinct_fates(8, 0x81).len(), 3);
        // A single word write has no torn fates.
        assert_eq!(distinct_fates(1, 1).len(), 2);
    }

    /// Writes that share a word are not reduced (their order decides the image).
    #[test]
    fn overlapping_writes_are_found() {
        assert!(overlaps(&line(0, vec![0; 64]), &line(56, vec![0; 8])));
        assert!(!overlaps(&line(0, vec![0; 64]), &line(64, vec![0; 64])));
        assert!(overlaps(&line(60, vec![0; 8]), &line(64, vec![0; 8])));
    }

    /// The exhaustive sweep judges no crash image twice at one instant: over the tiny
    /// pcmlogging-page run (seed 1), every state's (instant, PCM image, disk image) is new,
    /// and the sweep tries the distinct images all fates gave (31,848 of the 414,752 it
    /// enumerated before).
    #[test]
    fn the_exhaustive_sweep_judges_each_image_once() {
        let (h, d) = crate::check::tiny_config("pcmlogging-page", "none");
        let rec = crate::check::record(&h, &d, 1).unwrap();
        let tier = rec.tier.as_ref().unwrap();
        let mut seen = std::collections::HashSet::new();
        let mut dup = 0u64;
        let rep = sweep(
            &rec,
            tier,
            Mode::Exhaustive { max_in_flight: 10 },
            1,
            None,
            None,
            &mut |_, t, img, dimg| {
                if !seen.insert((t, img, dimg)) {
                    dup += 1;
                }
                Ok((Vec::new(), None))
            },
        )
        .unwrap();
        assert_eq!(dup, 0);
        assert_eq!(rep.states, seen.len() as u64);
        assert!(rep.states < 40_000, "{}", rep.states);
    }
}
