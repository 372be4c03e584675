//! On-device format of `cfc-ex` / `afc-ex` as the tag model stores it: the device tags
//! (`FcTag`: a version part, a log page, the master), redo records, a version's contents
//! (`VersionTag`, its nodes and records), how a commit flag byte reads, where a node's flag
//! lives, and the LPN of every area. The byte-by-byte layout these stand for is in the header
//! of `mod.rs` ("On-device layout"); the normal path (`normal.rs`, `log.rs`, `versions.rs`)
//! writes them and recovery (`recovery.rs`, Algorithm 3) reads them, so both sides share
//! exactly these definitions.

use super::Variant;
use crate::data::PageNo;
use crate::engine::data_lpns;
use sim::{Lpn, TxnId};
use std::sync::Arc;

/// What a `flagcommit-ex` device tag stands for.
#[derive(Clone, Debug)]
pub enum FcTag {
    /// Part `part` of a page version.
    Data {
        part: u32,
        v: Arc<VersionTag>,
    },
    Log {
        seq: u64,
        sealed: bool,
        entries: Vec<Redo>,
    },
    Master {
        ckpt_seq: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redo {
    Update {
        xid: TxnId,
        page: PageNo,
        slot: u16,
        usn: u64,
        after: u64,
    },
    Commit {
        xid: TxnId,
    },
}

impl Redo {
    pub fn xid(&self) -> TxnId {
        match self {
            Redo::Update { xid, .. } | Redo::Commit { xid } => *xid,
        }
    }
}

/// What a version holds (the tag model of its data area, `mod.rs` byte layout).
#[derive(Clone, Debug)]
pub struct VersionTag {
    pub page: PageNo,
    pub slot: u8,
    pub vno: u64,
    /// The previous version (slot, version number): §4.3's Back link.
    pub back: Option<(u8, u64)>,
    pub nodes: Vec<NodeTag>,
    /// One entry per DB slot of the page.
    pub records: Vec<RecTag>,
}

/// A transaction's metadata in a version: ⟨XID, Link⟩ and its initial flag (AFC).
#[derive(Clone, Debug)]
pub struct NodeTag {
    pub xid: TxnId,
    /// The transaction's previous node: (page, version slot, version number).
    pub link: Option<(PageNo, u8, u64)>,
    /// AFC: written TRUE (`10`) rather than FALSE (`11`). CFC: always false.
    pub init_true: bool,
}

/// One record of a version: its committed value (None: invalid, see Back) and a pending
/// record ⟨node index, value, usn⟩.
#[derive(Clone, Copy, Debug)]
pub struct RecTag {
    pub committed: Option<(u64, u64)>,
    pub pending: Option<(u8, u64, u64)>,
}

/// A node's flag as read: the record-area byte (0xFF if never programmed).
pub fn flag_true(variant: Variant, init_true: bool, byte: u8) -> bool {
    match variant {
        Variant::Cfc => byte != 0xFF,
        Variant::Afc => {
            let init = if init_true { 0b10 } else { 0b11 };
            init & byte & 0b11 == 0b10
        }
    }
}

/// Where node `i`'s flag lives: (part, byte offset in the part's record area).
pub fn flag_place(parts: u32, i: usize) -> (u32, u32) {
    let parts = parts.max(1) as usize;
    ((i % parts) as u32, (i / parts) as u32)
}

/// Device pages before the version slots 1.. (data slot 0, master, log).
pub(super) fn slots_base(layout: &crate::data::Layout, log_pages: u32) -> u32 {
    data_lpns(layout) as u32 + 1 + log_pages
}

pub(crate) fn log_lpn(base: u32, pages: u64, seq: u64) -> Lpn {
    Lpn(base + (seq % pages) as u32)
}

/// The device page of part `k` of version slot `v` of `page`.
pub(crate) fn version_lpn(
    layout: &crate::data::Layout,
    slots_base: u32,
    versions: u8,
    page: PageNo,
    v: u8,
    k: u32,
) -> Lpn {
    if v == 0 {
        return crate::engine::data_lpn(layout, page, k);
    }
    let idx = (page.0 * u64::from(versions - 1) + u64::from(v - 1)) * u64::from(layout.parts)
        + u64::from(k);
    Lpn(slots_base + idx as u32)
}
