//! Hand-planted mutants for the mutation campaign (`scripts/mutants.sh`, docs/MUTATION.md).
//!
//! Compiled in only with the `mutants` feature; then `on(name)` is true in a process whose
//! `COMMITLAB_MUTANT` environment variable is `name`, and the one line guarded by that name
//! breaks its protocol's commit path in one way a real bug could. Without the feature every
//! guard is `cfg`'d out and the protocols are untouched.
//!
//! The mutants (name: where, what it breaks):
//! - `core-erase-early`: `FtlCore::erase_block` ignores `erase_not_before` (GC may erase a
//!   page's old copy while the new copy is still being programmed);
//! - `core-release-now`: a replaced page's block is not held until the replacement is
//!   durable (`FtlCore::map`/`unmap` bookkeeping);
//! - `tc-commit-early`: TC programs its commit record without waiting for the data pages;
//! - `cyclic-commit-early`: SCC/BPCC treat a transaction's intentions as durable at COMMIT;
//! - `flag-commit-early`: CFC/AFC set commit flags without waiting for the shadow pages;
//! - `lighttx-ack-early`: LightTx and MHL-D (which runs LightTx's engine, `ZoneTx`) ack
//!   COMMIT before the transaction's pages are durable;
//! - `aw-commit-early`: AW and MHL-M (AW's engine) write the commit without waiting for the
//!   pages;
//! - `none-ack-early`: the plain FTL acks a write when its data crossed the host interface;
//! - `aw-carrier-not-awaited`: AW/MHL-M without move records erase a GC victim as soon as
//!   its pages are copied, not after the record carrying its moves is durable;
//! - `afc-no-first-hold`: AFC programs pages 2..n without waiting for the FALSE first page
//!   to be durable (the hold this mutant justifies);
//! - `scc-abort-erase-unawaited`: SCC's background erase of an aborted transaction's
//!   intentions (`protocol.scc_erase_at_abort`) does not raise the pages' floors, so the next
//!   version of such a page may be programmed before the erase that removes the uncommitted
//!   intention has completed (TxFlash §3.2's SCC Invariant, "Handling Uncommitted Intention
//!   Records").
//! - `core-no-reserve`: the free-block reserve a protocol declares
//!   (`FtlCore::set_reserve_blocks`, AW and MHL-M) is never restored (`gc::restore_reserve`
//!   returns at once), so a crash can leave recovery, or the first writes after it, without
//!   the blocks they take.
//! - `bpcc-straddler-unpinned`: BPCC unpins a committed straddler at its commit even when its
//!   SRS is not empty, so GC may erase the only proof that an uncommitted intention is
//!   uncommitted (TxFlash §3.3, "BPCC Garbage Collection"; in both `protocol.bpcc_srs`
//!   forms).
//! - `scc-write-erase-unawaited`: SCC's erase of an uncommitted intention on the path of the
//!   next write of its page (`clear_for`, reached with `protocol.scc_erase_at_abort=false`)
//!   does not raise the page's floor, so the new version may be programmed before that erase
//!   completes (TxFlash §3.2, the SCC Invariant).
//! - `none-root-trusted`: the plain FTL's recovery takes a checkpoint root's entry even when
//!   it names a page in a block the recovery scan read (a block erased and rewritten after
//!   the checkpoint), instead of letting the scan decide.
//! - `gc-erase-before-copies`: GC treats a relocated page as durable when its read ends, not
//!   when its copy's program ends, so the victim's erase and the old page's release wait for
//!   the reads only.
//!
//! Host-level mutants (crate `host`, feature `mutants`, which switches this one on):
//! - `wal-wrap-over-active`: WAL's log space check (`Wal::needed_seq`) ignores the first
//!   record of every active transaction, so a small log wraps over records undo needs
//!   (ARIES §4.3 / the log-space rule in `strategy/wal.rs`);
//! - `aries-abort-closes`: ARIES analysis removes a transaction from the transaction table
//!   at its ABORT record instead of at its END record, so a rollback cut short by the crash
//!   is not finished by undo (ARIES §6.1 and §6.4);
//! - `ipa-appends-unordered`: In-Place Appends issues a page's delta record without waiting
//!   for the previous append to (or write of) the same page, so the device may complete
//!   them out of order;
//! - `ipl-sector-before-merge`: IPL's first log sector after a merge is not ordered after
//!   the merge's page writes, so it may overwrite the unit's old log page before the merged
//!   images are on flash.

/// Whether mutant `name` is switched on in this process.
#[cfg(feature = "mutants")]
pub fn on(name: &str) -> bool {
    std::env::var("COMMITLAB_MUTANT").is_ok_and(|v| v == name)
}
