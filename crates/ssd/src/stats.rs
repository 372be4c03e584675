//! Counters the FTL and the commit protocols keep. Media-level counts (programs, erases)
//! live in `media::NandCounters`; these are the ones only the firmware can attribute.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtlStats {
    /// Host page reads and writes accepted (transactional writes included).
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    /// Pages GC copied out of victim blocks, and the erases of those victims.
    pub gc_page_migrations: u64,
    pub gc_erases: u64,
    /// Array time spent on GC reads, programs, flag updates and erases, in ns.
    pub gc_busy_ns: u64,
    /// Erases a protocol forced outside normal GC (SCC erasing uncommitted intentions).
    pub forced_erases: u64,
    pub forced_migrations: u64,
    /// Static wear leveling moves and erases.
    pub wl_migrations: u64,
    pub wl_erases: u64,
    /// Erases of blocks found dirty after recovery, done before reusing them.
    pub lazy_erases: u64,
    pub summary_writes: u64,
    /// Pages written only to make commits decidable (TC commit records).
    pub commit_record_writes: u64,
    /// Pages written to persist mapping (translation pages, root records, mapping logs).
    pub map_persist_writes: u64,
    /// Of which: root-record pages, mapping-journal pages, translation pages.
    pub map_root_writes: u64,
    pub map_journal_writes: u64,
    pub map_translation_writes: u64,
    /// Partial programs issued by a protocol (commit flags).
    pub flag_writes: u64,
    /// Of which (CFC, AFC): set at COMMIT, and moved or added by GC before an erase.
    #[serde(default)]
    pub commit_flag_programs: u64,
    #[serde(default)]
    pub gc_flag_programs: u64,
    /// CFC commits whose TRUE flag was programmed with their last page, written at commit
    /// (Flag Commit §3.3): no partial program for it.
    #[serde(default)]
    pub commit_flags_in_page: u64,
    pub checkpoints: u64,
    /// Blocks retired because they wore out.
    pub bad_blocks: u64,
    /// JSON keys `committed`, `aborted`: the vocabulary of every run's records.
    #[serde(rename = "committed")]
    pub txs_committed: u64,
    #[serde(rename = "aborted")]
    pub txs_aborted: u64,
    /// In-place appends (`Device::write_delta`, in-place-appends.md §3) and their bytes.
    #[serde(default)]
    pub delta_writes: u64,
    #[serde(default)]
    pub delta_bytes: u64,
    /// Whole-page host writes (`Device::write_page`, ipa-block) the FTL programmed in place:
    /// the new image only cleared erased bits of the page's delta area, within NOP. Not in
    /// `host_writes`, which counts out-of-place page writes.
    #[serde(default)]
    pub in_place_writes: u64,
    /// Host writes that replaced a mapped page (the old copy became invalid).
    #[serde(default)]
    pub page_invalidations: u64,
    /// Host writes that covered a page only in part (`Device::write_partial`), and of
    /// them the ones that had to read the old page from NAND to merge it (read-modify-
    /// write; a never-written page merges with zeroes and needs no read).
    #[serde(default)]
    pub partial_writes: u64,
    #[serde(default)]
    pub rmw_reads: u64,
    /// Host reads of a never-written (or trimmed) page: answered with zeroes from the
    /// mapping table, without a NAND read (docs/FTL.md, "The FTL").
    #[serde(default)]
    pub unmapped_reads: u64,
    /// Erases of host-managed erase units the host gave back (`Device::native_erase`,
    /// In-Page Logging's merges).
    #[serde(default)]
    pub native_erases: u64,
}
