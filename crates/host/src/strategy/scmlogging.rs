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
//! - Validation (`check`): a log that cannot hold one transaction of the workload from its
//!   BEGIN to its END when it rolls back (BEGIN, an UPDATE and a CLR per write, ABORT, END)
//!   plus one checkpoint (CKPT-BEGIN, a CKPT-TXN per client, CKPT-END) can never work: it
//!   is refused before the run, naming `host.pcm.pcm_bytes` (exit 2). The largest
//!   transaction is found by drawing `SAMPLE_TXNS` transactions from the configured source
//!   (fixed seed). A log that passes can still fill at run time when transactions in flight
//!   together pin more than it holds; that remains the run-time error above (a stall until
//!   the pinning transactions end is not modelled: see docs/HOST.md, "PCM strategies").
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
use crate::{HostConfig, HostError, LockLevel, Result};

/// Transactions drawn from the configured source to find the largest one.
pub const SAMPLE_TXNS: u32 = 2000;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "scmlogging",
    summary: "PCMLogging's SCMLogging baseline (§6.1): classic ARIES WAL whose whole log lives in PCM, no data caching in PCM, pages stolen to a Table 2 disk",
    lock_level: LockLevel::Record,
    check,
    create: wal_pcm::create_scm,
    recover: wal_pcm::recover_from_device,
};

/// The PCM log's capacity in records for an explicit `host.pcm.pcm_bytes` (`None` when it
/// scales with the database: `create` checks that one, it needs the layout).
fn log_records(cfg: &HostConfig) -> Option<u64> {
    let p = u64::from(cfg.page_bytes);
    (cfg.pcm.pcm_bytes > 0).then(|| cfg.pcm.pcm_bytes / p * (p / 64))
}

/// Records a rolled-back transaction writes from BEGIN to END, for the largest of
/// `SAMPLE_TXNS` transactions drawn from the configured source (seed 1).
pub fn largest_txn_records(cfg: &HostConfig) -> Result<u64> {
    let mut src = crate::source::build(cfg, 1)?;
    let mut rng = sim::Rng::new(1).fork("scmlogging-check");
    let mut writes_max = 0u64;
    for i in 0..SAMPLE_TXNS {
        let t = workload::db::next_serial(src.as_mut(), i % cfg.clients.max(1), &mut rng);
        writes_max = writes_max.max(t.ops.iter().filter(|o| o.writes()).count() as u64);
    }
    Ok(2 * writes_max + 3)
}

fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    wal_pcm::check(cfg, p)?;
    let Some(cap) = log_records(cfg) else {
        return Ok(());
    };
    let txn = largest_txn_records(cfg)?;
    let ckpt = u64::from(cfg.clients) + 2;
    if cap < txn + ckpt {
        return Err(HostError::Config {
            key: "host.pcm.pcm_bytes".into(),
            reason: format!(
                "scmlogging keeps its whole log in PCM: {} B hold {cap} log records of 64 B, fewer than one rolled-back transaction of this workload ({txn} records: BEGIN, an UPDATE and a CLR per write, ABORT, END) plus one checkpoint ({ckpt} records for {} clients) need; at least {} B",
                cfg.pcm.pcm_bytes,
                cfg.clients,
                (txn + ckpt).div_ceil(u64::from(cfg.page_bytes) / 64) * u64::from(cfg.page_bytes)
            ),
        });
    }
    Ok(())
}
