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
//! - `lighttx-ack-early`: LightTx acks COMMIT before the transaction's pages are durable;
//! - `aw-commit-early`: AW/MHL-D/MHL-M write the commit without waiting for the pages;
//! - `none-ack-early`: the plain FTL acks a write when its data crossed the host interface;
//! - `aw-carrier-not-awaited`: AW/MHL-M without move records erase a GC victim as soon as
//!   its pages are copied, not after the record carrying its moves is durable;
//! - `afc-no-first-hold`: AFC programs pages 2..n without waiting for the FALSE first page
//!   to be durable (the hold issue 9 item 6 asked to justify);
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

/// Whether mutant `name` is switched on in this process.
#[cfg(feature = "mutants")]
pub fn on(name: &str) -> bool {
    std::env::var("COMMITLAB_MUTANT").is_ok_and(|v| v == name)
}
