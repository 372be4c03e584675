//! `scmlogging`: the SCMLogging baseline of PCMLogging §6.1 (Fang et al. [10], storage-class
//! memory as the log): "In SCMLogging, we implemented the classic WAL and allocated the
//! entire PCM space to the log. […] the log records were created and maintained in PCM
//! directly." No data caching in PCM: a dirty page leaving DRAM (steal) or written by a
//! checkpoint goes to the external disk (`host.pcm.external`), after the log up to its page
//! LSN is durable in PCM (the WAL rule); the log is truncated at checkpoints.
//!
//! The implementation is the ARIES core of `strategy::wal_pcm` with `Kind::ScmLogging`;
//! its header has the byte layout, the normal processing, the recovery and the case-by-case
//! crash argument of both variants. What differs here:
//!
//! - PCM layout: superblock, two master slots, then the whole log, circular: record n at
//!   byte `256 + (n mod A·R) · 64` (A = `pcm_bytes / page_bytes` log pages of R = P/64
//!   records). Record n may overwrite record n − A·R only if restart no longer needs it
//!   (older than the newest acked master's redo LSN and every active transaction's first
//!   record); a full log is a configuration error naming `host.pcm.pcm_bytes`.
//! - Commit: the COMMIT record (and every earlier one) durable in PCM is the ack.
//! - Stable pages are the disk's only; a disk write may tear at slot granularity, which
//!   the unconditional redo from the checkpoint repairs (wal_pcm header, "torn disk page").
//! - Checkpoints every `host.pcm.checkpoint_interval_ms` or when half the PCM log has been
//!   written since the last one; each writes every DRAM-dirty page to the disk.
//!
//! Recovery reads the log from PCM only (no log I/O on the disk); redo and undo read the
//! disk pages they touch. Not done: as wal_pcm.

use super::wal_pcm;
use super::StrategyInfo;
use crate::LockLevel;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "scmlogging",
    summary: "PCMLogging's SCMLogging baseline (§6.1): classic ARIES WAL whose whole log lives in PCM, no data caching in PCM, pages stolen to a Table 2 disk",
    lock_level: LockLevel::Record,
    check: wal_pcm::check,
    create: wal_pcm::create_scm,
    recover: wal_pcm::recover_from_device,
};
