//! `afc`: abort-based flag commit (Flag Commit, On et al., §3.2), a device-level commit
//! protocol. The machinery it shares with `cfc` (page format, chains, tables, GC hooks,
//! recovery) is in `flagchain/`; this file holds its registry entry and its argument. The
//! decisions common to both (Version #, Ord, mapping at write time, reads, plain writes,
//! isolation) are written down in `cfc.rs`.
//!
//! A transaction is committed iff none of its shadow pages holds a FALSE flag (Definition
//! 3.3). Every page but the first is programmed TRUE; the first is programmed FALSE, so a
//! crash right after it cannot look committed, and COMMIT changes it to TRUE. Committed
//! transactions need nothing from GC; aborted ones must keep a FALSE flag on some page of
//! theirs as long as any page of theirs is on flash.
//!
//! # OOB layout (26 bytes, as `cfc.rs` documents byte by byte)
//!
//! Bytes 0..25 as in `cfc.rs` (kind, LBA, Version #, XID, Link, Ord). Byte 25 is the commit
//! flag; AFC uses bits 1..0 (§3.2), bits 7..2 stay 1:
//!
//! ```text
//! "11" (0xFF)  initial FALSE  (first page of a multi-page transaction)
//! "10" (0xFE)  TRUE           (initial for every other page; set on the first page by COMMIT;
//!                              a plain write's page is programmed with it)
//! "00" (0xFC)  FALSE          (set on a page of an aborted transaction by GC)
//! ```
//!
//! "11"→"10" clears bit 0, "10"→"00" clears bit 1; a torn partial program leaves the old or
//! the new value. "01" never occurs; it would read as FALSE.
//!
//! # Normal processing (§3.2)
//!
//! WRITE programs the shadow page (Link = LastPage). Pages after the first are programmed
//! only once the first page is durable (`ready` = its program's end): with several planes a
//! later page could otherwise be durable while the first is not, and a crash then leaves only
//! TRUE pages of an uncommitted transaction (this ordering is not in the paper, whose
//! exposition writes pages one at a time). COMMIT partially programs the first page (its
//! current location, GC may have moved it) to TRUE after every page, every GC copy and every
//! erase of a stale copy is durable; the ack is when it is durable. ABORT writes nothing: the
//! first page is FALSE already. A plain write is programmed "10". A last page sent with the
//! COMMIT (`Device::commit_write`) is a WRITE and then the COMMIT: §3.3, "in AFC ... a
//! page-reprogramming operation is mandatory to record the commit status".
//!
//! # Garbage collection (§3.2, Fig. 7)
//!
//! Committed transactions: nothing (their copies keep their flags). Aborted transactions: the
//! table keeps each one's pages on flash and the pages known to hold FALSE (*holders*:
//! initially the first page, Fig. 6a). Before a block is erased, for each aborted transaction
//! losing pages there: if a holder stays outside the block, the erase waits until that
//! holder's FALSE is durable; otherwise a FALSE is put on a page that stays ("10"→"00", Fig.
//! 7a: the FALSE moves; Fig. 7b: one is added), durable before the erase. The paper keeps only
//! LastPage for this (§3.2); we keep the list of the transaction's remaining pages, because
//! with Definition 3.3 any page will do and a chain broken by earlier erases cannot be walked
//! from LastPage. If no remaining page can take the reprogram (NOP, see below), a page of the
//! victim is copied with "00" into the GC stream and pinned (a *carrier*); carriers are
//! released when every other page of the transaction is gone and those erases are durable.
//! If nothing of the transaction stays, nothing is needed (but the erases that removed its
//! other pages must be durable first). Recovery tracks only aborted transactions that matter
//! ("Relevance" in `cfc.rs`: some page of it newer than its logical page's current version);
//! for the others no FALSE needs to survive. With `protocol.block_flags` (§3.4) Links are laid out
//! in per-block clusters and copies' Links are rewritten as in CFC; AFC's GC never relocates
//! an aborted page and needs no Links to place a FALSE, so the technique saves nothing here:
//! its only effect is the chain layout, and recovery works on clusters.
//!
//! **NOP.** A page is reprogrammed at most once at run time ("11"→"10" on a first page at
//! COMMIT, "10"→"00" on an aborted page in GC; never both), so NOP 2 suffices. Pages
//! programmed before the last recovery are never reprogrammed (a torn partial program may
//! have used the budget invisibly); that is when carriers are needed.
//!
//! # Recovery (§3.2)
//!
//! S, R and the heads as in CFC. Following each chain from its head, every flag is examined:
//! a transaction is committed iff none of its pages holds FALSE. A page's flag is read from
//! the page itself unless the scan read it directly or it cannot change any more ("00", or
//! "10" on a first page). This reads far more pages than CFC (which reads heads only): the
//! paper's higher recovery overhead (Table 1). The newest committed version of each logical
//! page is mapped; uncommitted transactions that matter are rebuilt as aborted with their
//! pages and the FALSE pages found as holders; their pages are pinned until `after_recovery`
//! (see `cfc.rs`).
//!
//! # Why it is atomic and durable, case by case
//!
//! Recovery decides per transaction (Definition 3.3 over all its pages on flash), so every
//! transaction is all or nothing.
//!
//! 1. *Crash before COMMIT.* The first page is "11" or, if it was not yet durable, absent —
//!    and then so is every later page (programmed only after it). GC copies of the first
//!    page are "11" and a copy's original is erased only after the copy is durable. Every
//!    surviving set of T's pages that is not empty contains a FALSE: not committed.
//! 2. *Crash during COMMIT.* One partial program decides: "11" (aborted) or "10" (committed,
//!    and every page of T was durable before it started). A stale "11" copy of the first page
//!    cannot survive it: its erase was durable before the flag was issued.
//! 3. *Crash after the ack.* T has no FALSE page: flags of committed pages are never set
//!    FALSE (GC marks only transactions in the table as aborted), copies keep "10". Previous
//!    versions were unpinned with `durable_at` = the ack.
//! 4. *Aborted T.* At every instant some page of T on flash (or none at all) holds a durable
//!    FALSE: initially the first page; before an erase removes every holder while other pages
//!    stay, a new holder is made durable; holders moved by GC (carriers) are copied with
//!    their FALSE, the original erased only after the copy is durable; the last holder goes
//!    only with (or after) the erases of all other pages, once those are durable.
//! 5. *Torn operations.* A torn program is unreadable (not acked); a torn partial program is
//!    case 2, or a GC FALSE that has not let any erase start; a torn erase happens only after
//!    everything it depended on was durable.
//! 6. *Reused XIDs and addresses.* As in `cfc.rs`: recovery's decision depends on XIDs only,
//!    which never repeat while a page of them is on flash; Links only shape the traversal.
//!
//! Assumptions about the medium: as in `cfc.rs`.

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo};
use crate::core::FtlCore;
use crate::error::Result;
use crate::protocols::flagchain::{self, FlagCommit, Variant};
use crate::recovery::RecoveryCtx;

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "afc",
    summary: "abort-based flag commit (Flag Commit §3.2): shadow pages chained by physical links, committed unless a page holds FALSE",
    oob_bytes: flagchain::OOB_BYTES,
    atomic: true,
    needs_checkpoints: false,
    supports_checkpoints: true,
    isolation: &[Isolation::Strict, Isolation::NoPageConflict],
    supports_trim: false,
    create,
    recover,
};

fn create(cfg: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    FlagCommit::create(Variant::Afc, cfg, core)
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    flagchain::recover(Variant::Afc, ctx)
}
