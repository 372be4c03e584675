//! The `[ftl]` and `[protocol]` sections of a configuration, with validation that names the
//! offending key.

use crate::error::{Result, SsdError};
use serde::{Deserialize, Serialize};

/// Which block GC reclaims (see `gc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicyKind {
    Greedy,
    CostBenefit,
    WearAware,
}

/// How host writes are spread over parallel units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Striping {
    /// Round robin, consecutive pages on different channels first, then chips, dies, planes.
    ChannelFirst,
    /// Round robin over planes in address order (planes of one die first).
    PlaneFirst,
    /// The parallel unit whose array is free soonest.
    LeastBusy,
}

/// Where a mapping checkpoint's translation and journal pages are programmed (`meta`).
///
/// LightTx §3.3.3 makes the mapping table persistent at each zone sliding and says nothing
/// of where its pages go. Striping them like host pages was measured to cost more than it
/// saves (docs/FTL.md, "Mapping checkpoint placement"),
/// so one unit is the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapPlacement {
    /// Map pages fill one open map block before another is opened, in the map stream's own
    /// rotation over the units: one map block is open at a time, and a checkpoint's pages
    /// queue on one plane.
    OneUnit,
    /// Consecutive map pages go to consecutive parallel units in the host striping order,
    /// so a checkpoint of k pages occupies each plane for at most ceil(k / units) program
    /// times, but every unit keeps an open map block.
    Striped,
}

/// How recovery issues its reads of the medium (summary pages, OOB areas, the root log,
/// translation and journal pages), which sets the simulated recovery time and nothing else:
/// the same pages are read and the same state is rebuilt either way.
///
/// `Overlapped` (the default) issues every read of a scan at once, so reads on different
/// planes and channels proceed in parallel as a controller's would. `Serial` issues each
/// read when the one before it has completed: the recovery time then is the sum of the
/// reads' latencies, the count that TxFlash §5.1 ("only the summary pages are read") and
/// LightTx §4.5 ("the page scanning time dominates") give as what sets recovery time,
/// without saying whether their simulators overlapped the reads. A run option
/// (`run.recovery_reads`), not part of the device's configuration: it is chosen when the
/// image is recovered, so runs that differ only in it share one prefilled device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryReads {
    #[default]
    Overlapped,
    Serial,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Fraction of the usable physical pages not exported as logical space.
    pub over_provisioning: f64,
    /// GC runs in a parallel unit when its free blocks fall below this fraction of its blocks.
    pub gc_threshold: f64,
    /// Lower bound on the GC threshold, in blocks per parallel unit.
    pub gc_min_free_blocks: u32,
    /// The GC threshold the exported logical capacity is sized with (the capacity keeps
    /// the threshold's blocks free in every unit; see `FtlCore::new`). Negative (the
    /// default): `gc_threshold` itself. A sweep over `gc_threshold` sets it to the sweep's
    /// smallest threshold so that every point exports the same capacity and only the GC
    /// trigger moves, as in LightTx Figs. 13–16 (docs/FTL.md, "The FTL", logical capacity).
    pub capacity_gc_threshold: f64,
    pub gc_policy: GcPolicyKind,
    /// GC moves a live page inside its plane by copyback (sense into the page register,
    /// program from it; only the OOB crosses the channel). Off by default: MQSim's default,
    /// none of the papers mentions it, and real controllers avoid it because the data skips
    /// the controller's ECC, so bit errors are copied along (docs/FTL.md, "The FTL").
    pub gc_copyback: bool,
    pub striping: Striping,
    /// Allocate the free block with the lowest erase count (otherwise first-in first-out).
    pub dynamic_wear_leveling: bool,
    /// Periodically move cold data out of the least-worn block.
    pub static_wear_leveling: bool,
    /// Static wear leveling acts when max - min erase count exceeds this.
    pub static_wl_threshold: u32,
    /// Static wear leveling checks the gap every this many erases.
    pub static_wl_interval: u64,
    /// Write the OOB of a block's pages into its last page.
    pub summary_pages: bool,
    /// Persist the mapping table to flash every this many host page writes (0: never, and
    /// recovery scans the whole device).
    pub checkpoint_interval: u64,
    /// Blocks per parallel unit pre-reserved (and recorded) for writes after a checkpoint.
    pub checkpoint_window_blocks: u32,
    /// Checkpoints journal changed mapping entries instead of rewriting whole translation
    /// pages when that writes fewer pages (see `meta`).
    pub map_journal: bool,
    /// Most journal pages before the translation pages are rewritten (0: as many as there
    /// are translation pages).
    pub map_journal_pages: u32,
    /// Where checkpoints program their translation and journal pages.
    pub map_placement: MapPlacement,
    /// Largest transaction, in pages.
    pub max_tx_pages: u32,
    /// Most transactions active at once.
    pub max_active_txs: u32,
    /// Host interface bandwidth in MB/s for moving a page into the device (0: free).
    pub interface_mbps: u64,
    /// MLC block mode (`modes`): "mlc", "pslc" or "odd-mlc" (in-place-appends.md §3).
    pub mlc_mode: crate::modes::MlcMode,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            over_provisioning: 0.15,
            gc_threshold: 0.05,
            gc_min_free_blocks: 3,
            capacity_gc_threshold: -1.0,
            gc_policy: GcPolicyKind::Greedy,
            gc_copyback: false,
            striping: Striping::ChannelFirst,
            dynamic_wear_leveling: true,
            static_wear_leveling: false,
            static_wl_threshold: 32,
            static_wl_interval: 256,
            summary_pages: true,
            checkpoint_interval: 0,
            checkpoint_window_blocks: 2,
            map_journal: true,
            map_journal_pages: 0,
            map_placement: MapPlacement::OneUnit,
            max_tx_pages: 1024,
            max_active_txs: 256,
            interface_mbps: 0,
            mlc_mode: crate::modes::MlcMode::Mlc,
        }
    }
}

fn bad(key: &str, reason: impl Into<String>) -> SsdError {
    SsdError::Config {
        key: key.into(),
        reason: reason.into(),
    }
}

impl FtlConfig {
    pub fn validate(&self, blocks_per_pu: u32) -> Result<()> {
        if !(0.0..0.95).contains(&self.over_provisioning) || self.over_provisioning.is_nan() {
            return Err(bad(
                "ftl.over_provisioning",
                format!("must be in [0, 0.95), got {}", self.over_provisioning),
            ));
        }
        if !(0.0..0.9).contains(&self.gc_threshold) || self.gc_threshold.is_nan() {
            return Err(bad(
                "ftl.gc_threshold",
                format!("must be in [0, 0.9), got {}", self.gc_threshold),
            ));
        }
        if self.capacity_gc_threshold >= 0.9 || self.capacity_gc_threshold.is_nan() {
            return Err(bad(
                "ftl.capacity_gc_threshold",
                format!(
                    "must be below 0.9 (negative: the same as ftl.gc_threshold), got {}",
                    self.capacity_gc_threshold
                ),
            ));
        }
        if self.gc_min_free_blocks < 2 {
            return Err(bad(
                "ftl.gc_min_free_blocks",
                "must be at least 2 (one for GC to write into, one spare)",
            ));
        }
        let need = self.gc_threshold_blocks(blocks_per_pu) + 2 + self.checkpoint_window_blocks;
        if need >= blocks_per_pu {
            return Err(bad(
                "ftl.gc_threshold",
                format!(
                    "a parallel unit has {blocks_per_pu} blocks, too few for a GC threshold of {} blocks plus open blocks",
                    self.gc_threshold_blocks(blocks_per_pu)
                ),
            ));
        }
        if self.static_wl_interval == 0 {
            return Err(bad("ftl.static_wl_interval", "must be at least 1"));
        }
        if self.checkpoint_interval > 0 && self.checkpoint_window_blocks == 0 {
            return Err(bad(
                "ftl.checkpoint_window_blocks",
                "must be at least 1 when checkpoints are on",
            ));
        }
        if self.max_tx_pages == 0 {
            return Err(bad("ftl.max_tx_pages", "must be at least 1"));
        }
        if self.max_active_txs == 0 {
            return Err(bad("ftl.max_active_txs", "must be at least 1"));
        }
        Ok(())
    }

    /// The free-block count below which GC runs in a parallel unit.
    pub fn gc_threshold_blocks(&self, blocks_per_pu: u32) -> u32 {
        let frac = (self.gc_threshold * f64::from(blocks_per_pu)).ceil() as u32;
        frac.max(self.gc_min_free_blocks)
    }

    /// The free blocks per parallel unit the exported capacity keeps out of the logical
    /// space: `gc_threshold_blocks` at `capacity_gc_threshold` (at `gc_threshold` when that
    /// is negative).
    pub fn capacity_threshold_blocks(&self, blocks_per_pu: u32) -> u32 {
        if self.capacity_gc_threshold < 0.0 {
            return self.gc_threshold_blocks(blocks_per_pu);
        }
        let frac = (self.capacity_gc_threshold * f64::from(blocks_per_pu)).ceil() as u32;
        frac.max(self.gc_min_free_blocks)
    }
}

/// The `[protocol]` section of a configuration. Options apply only to the protocols that
/// name them; the others ignore them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProtocolConfig {
    /// A name from the registry.
    pub name: String,
    /// CFC / AFC: the block-based flag technique of Flag Commit §3.4. On by default: §5.1
    /// evaluated "the basic CFC and AFC protocols with block-based flag technique".
    pub block_flags: bool,
    /// CFC: set the commit flag by a separate partial program after the last shadow page
    /// even when that page arrives with COMMIT (`Device::commit_write`). Off by default:
    /// Flag Commit §3.3 writes a buffered last page with its flag already TRUE ("a
    /// page-reprogramming operation is saved"); on is the rule used before, kept as an
    /// ablation of that saving.
    pub cfc_flag_reprogram: bool,
    /// MHL-D / MHL-M: number of log heads (LightTx §4.1 uses 8).
    pub log_heads: u32,
    /// SCC: start erasing an aborted transaction's intentions at ABORT, in the background
    /// (true), instead of when a page they concern is next written, on that write's path
    /// (false). TxFlash §3.2 requires only that the erase precede the newer version.
    pub scc_erase_at_abort: bool,
    /// AW: mapping-log chains its records are spread over (each chain programs its pages in
    /// order; records carry one device-wide sequence, so the chains together are one
    /// logical log). Default 8, one per package of LightTx's Table 2 device (the count
    /// §4.1 gives MHL's log heads), capped at the number of parallel units: the paper's AW
    /// baseline writes its mapping pages wherever its log-structured FTL allocates, not
    /// into one serial chain. 1 is the single serial chain.
    pub aw_log_chains: u32,
    /// AW and MHL-M (which runs on AW's engine): before GC erases a victim, write a *move
    /// record* with the victim's moved entries that the erase waits for (true), or carry
    /// the moved entries on the next commit or plain-write record and keep the victim
    /// un-erased until that record (or a checkpoint) is durable (false, the default:
    /// LightTx's AW baseline writes mapping pages at commits only, Fig. 19's 3.70 %).
    pub aw_gc_move_records: bool,
    /// BPCC: how long an uncommitted intention keeps its straddlers on flash (see
    /// `protocols::bpcc`).
    pub bpcc_srs: BpccSrs,
}

/// BPCC's straddle responsibility sets (TxFlash §3.3, "BPCC Garbage Collection").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BpccSrs {
    /// TxFlash §3.3 with its three pruning rules: an uncommitted intention leaves every SRS
    /// once a higher version of its page is committed, only the highest straddler of its
    /// next-link holds it, and aborted intentions hold nothing.
    Pruned,
    /// The BPCC LightTx §4.3 compares against: "a page whose SRS is not null, even if it is
    /// invalid, cannot be erased and has to be moved". Every committed straddler of an
    /// uncommitted intention's next-link holds it, and it leaves those SRS only when every
    /// copy of it is erased (§3.3's definition without the first two pruning rules).
    UntilErased,
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            name: "none".into(),
            block_flags: true,
            cfc_flag_reprogram: false,
            log_heads: 8,
            scc_erase_at_abort: true,
            aw_log_chains: 8,
            aw_gc_move_records: false,
            bpcc_srs: BpccSrs::Pruned,
        }
    }
}
