//! `mhl-m`: multi-head logging with metadata (mapping) clustering, the baseline of LightTx
//! §4.1: "MHL-M is an extension to Atomic-Write with multi-head logging. In MHL-M, multiple
//! transactions are allowed to be executed concurrently, and their mappings are appended to
//! different logs."
//!
//! The engine is Atomic-Write's (`aw.rs`, shared code): data pages go anywhere (striped over
//! the parallel units), the last page of each transaction is flagged, the transaction's
//! LPN → PPN entries wait in the Active TxTable until COMMIT, and COMMIT appends one mapping
//! record (after the data pages are durable) and is acked when the record is: mapping
//! persistence at every commit, as AW (Table 3: poor mapping-persistence overhead, fast
//! recovery). Differences from AW:
//!
//! - `protocol.log_heads` log heads (default 8, as in §4.1). BEGIN takes the lowest free
//!   head; **a BEGIN that finds every head taken is refused** with `SsdError::Unsupported`
//!   (concurrency "bounded by the number of log heads", Table 3). Isolation: all three levels
//!   (§4.2), including serializable: concurrent transactions may write the same logical page,
//!   and the record issued last (commit order) wins at replay.
//! - Head k appends to mapping log k mod C, where C = min(heads, parallel units) physical
//!   logs (owned-block chains, one per unit), so records of different heads are programmed in
//!   parallel; heads beyond the unit count share a chain. Plain writes take no head: their
//!   one-entry records go round-robin over the chains.
//! - GC move records (or, by default, the records carrying GC moves) wait for every record
//!   issued before them on any chain (with one chain that is implied by the chain order).
//!   `protocol.aw_gc_move_records` applies to MHL-M as to AW (`aw.rs`, "GC").
//!
//! Data-page OOB layout (14 bytes, little-endian; AW's):
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..5]    lpn, u32
//! [5..9]    TxID, u32 (device-internal; 0xFFFF_FFFF on a plain write)
//! [9]       flag: 0x01 on a transaction's last page (and a plain write), else 0x00
//! [10..14]  index of the page within its transaction, u32
//! ```
//!
//! Mapping-log pages (kind RECORD) and the root blob are laid out as in `aw.rs`; every chain
//! is named in the blob, and each page names its chain.
//!
//! Why it is atomic and durable: the AW argument (`aw.rs`) per chain, plus, across chains:
//! records carry one device-wide sequence assigned at issue, so replay in sequence order is
//! commit order even when a later commit's record (on another chain) became durable first;
//! an in-flight transaction is all or nothing because its entries are in one record (its
//! parts on one chain, durable as a prefix); a move record is never durable before the
//! record that made the moved page current, since it waits for every earlier record.

use super::aw::{MapLog, Opts, DATA_OOB_BYTES};
use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo};
use crate::core::FtlCore;
use crate::error::Result;
use crate::recovery::RecoveryCtx;

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "mhl-m",
    summary:
        "MHL-M: Atomic-Write with multi-head logging of mappings; concurrency bounded by log heads",
    oob_bytes: DATA_OOB_BYTES,
    atomic: true,
    needs_checkpoints: true,
    supports_checkpoints: true,
    isolation: &Isolation::ALL,
    supports_trim: false,
    create,
    recover,
};

fn create(cfg: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    Ok(Box::new(MapLog::create(
        "mhl-m",
        cfg.log_heads,
        opts(cfg),
        false,
        core,
    )?))
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let heads = ctx.params.log_heads;
    let o = opts(ctx.params);
    Ok(Box::new(MapLog::recover("mhl-m", heads, o, false, ctx)?))
}

/// One chain per log head (capped at the parallel units); GC moves as AW's option says.
fn opts(cfg: &ProtocolConfig) -> Opts {
    Opts {
        chains: cfg.log_heads.max(1),
        move_records: cfg.aw_gc_move_records,
    }
}
