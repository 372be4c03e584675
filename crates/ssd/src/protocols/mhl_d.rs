//! `mhl-d`: multi-head logging with data clustering, the baseline of LightTx §4.1.
//!
//! "Flash space is divided into multiple logs. Pages in the same transaction are written to
//! consecutive physical addresses in one log" (§4.1). A log head here is a (parallel unit,
//! stream) pair; head k starts as stream PROTO0 + k / units of unit k mod units, so there are
//! at most units × 5 heads (`protocol.log_heads`, default 8, is clamped to that). BEGIN takes
//! a free head (one whose log block still has space first, so each head leaves at most one
//! partly written block; then the unit that holds the fewest mapped pages, since a whole
//! transaction lands in one unit and GC keeps data in its unit; then round robin). Heads are
//! not pinned to units: before it is handed out, a head whose block is full, or whose unit
//! holds more than one block's worth of mapped pages more than the emptiest unit no other
//! head of its stream uses, moves to that unit (the paper does not say where its logs live;
//! with 8 heads pinned to 8 of 64 units the other 56 units' space served only GC and plain
//! writes, and MHL-D ran at write amplification 4.7 instead of 1.4). The
//! transaction keeps its head until COMMIT or ABORT; all its pages are
//! programmed one after another into that head's open block(s), i.e. into one plane, which is
//! why MHL-D exploits no internal parallelism for a single transaction (§4.2, Fig. 9).
//! Concurrency is bounded by the number of heads: **a BEGIN that finds every head taken is
//! refused** with `SsdError::Unsupported` (the device cannot make the host wait, and a
//! transaction without a head has nowhere consecutive to go). Plain writes are one-page
//! transactions that need no head: they are striped over the units like LightTx's. When a
//! head's unit has no free block left, a page spills over to the striped host stream
//! (counted in `log_spills`); recovery does not depend on where a page is.
//!
//! The commit state is determined from the log: the last page of a transaction carries the
//! flag, here LightTx's TxCnt (non-zero page count) and TxVer, and the transaction is
//! committed when all its pages are found (Table 3 gives MHL-D LightTx's recovery cost and
//! mapping-persistence overhead, so it uses the same zone-based tracking). The engine is
//! LightTx's (`lighttx.rs`, shared code): same Active TxTable, deferred mapping updates,
//! held last page, zones, zone sliding, GC restrictions and recovery. Only `Placement`
//! differs.
//!
//! OOB layout of data pages (29 bytes, little-endian; identical to LightTx's):
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..5]    lpn, u32
//! [5..9]    TxID, u32 (device-internal; 0xFFFF_FFFF on a plain write)
//! [9..13]   TxCnt, u32: page count on a transaction's last page (the commit flag), else 0;
//!           1 on a plain write
//! [13..17]  TxVer, u32: commit version on the last page, else 0
//! [17..21]  index of the page within its transaction, u32
//! [21..25]  copy stamp, u32 (0xFFFF_FFFF unless a GC copy: commit version at the copy)
//! [25..29]  copy epoch, u32 (0xFFFF_FFFF unless a GC copy: commit version of the checkpoint
//!           that released the source block; 0 if that checkpoint was already durable)
//! ```
//!
//! Why it is atomic and durable, case by case (the LightTx argument in `lighttx.rs` holds
//! unchanged; placement never enters it):
//! - a transaction is committed iff its flagged last page exists with TxVer above the root's
//!   commit version and every index 0..TxCnt is readable; the flagged page is programmed only
//!   at COMMIT, so a crash before COMMIT leaves none, and a crash during COMMIT leaves all
//!   pages or not all (a torn page reads uncorrectable and is not counted);
//! - an acked transaction's pages are all durable and all in the scan set: its log blocks are
//!   protected from GC while it is active and until the checkpoint after its commit is
//!   durable, and blocks holding its pages are in that checkpoint's unavailable zone;
//! - the newest committed version wins because redo follows TxVer, the commit order, and a
//!   superseded page is not erased before the superseding commit is durable;
//! - the log head a transaction held is only bookkeeping in DRAM: after a crash every head
//!   is free and no page's meaning depends on which head wrote it.
//! - a crash inside recovery: every page of every transaction recovery redid (superseded
//!   ones, its flagged last page above all, included) stays pinned until the checkpoint
//!   ending recovery is durable, so a second recovery from the same root finds it whole
//!   (`lighttx.rs`, "Crash during recovery"; found by the double-crash check, seed 11).

use super::lighttx::{Placement, ZoneTx, OOB_BYTES};
use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo};
use crate::core::FtlCore;
use crate::error::Result;
use crate::recovery::RecoveryCtx;

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "mhl-d",
    summary: "MHL-D: multi-head logging, each transaction's pages consecutive in one log; LightTx-style zones",
    oob_bytes: OOB_BYTES,
    atomic: true,
    needs_checkpoints: true,
    supports_checkpoints: true,
    isolation: &Isolation::ALL,
    supports_trim: false,
    create,
    recover,
};

fn create(cfg: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    let p = Placement::heads(core, cfg.log_heads);
    Ok(Box::new(ZoneTx::new("mhl-d", p, core)))
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let p = Placement::heads(ctx.core, ctx.params.log_heads);
    Ok(Box::new(ZoneTx::recover("mhl-d", p, ctx)?))
}
