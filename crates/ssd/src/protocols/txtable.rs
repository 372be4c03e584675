//! The Active TxTable both log-structured transaction engines keep: LightTx's `ZoneTx`
//! (`lighttx`, `mhl_d`; LightTx §3.2, "Active TxTable") and AW's mapping-log engine (`aw`,
//! `mhl_m`). Each file keeps what makes it different (where pages go, what commit writes,
//! recovery); this module holds the bookkeeping they share:
//!
//! - a transaction's row: its id, its log head (concurrent transactions only), the pages it
//!   has programmed and the one it holds in DRAM until its next command (so the last page
//!   can carry the commit mark when COMMIT arrives);
//! - transaction ids that skip `u32::MAX` (the OOB value of a page outside any
//!   transaction);
//! - log heads: one per concurrent transaction, refused when every head is taken.
//!
//! Nothing here is on flash: the OOB layouts are in `lighttx.rs` and `aw.rs`.

use crate::core::FtlCore;
use crate::error::{Result, SsdError};
use media::Ppa;
use sim::{Lpn, SimTime};
use std::collections::BTreeMap;

/// A page a transaction has programmed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Written {
    pub lpn: Lpn,
    pub ppa: Ppa,
    pub end: SimTime,
}

/// An active transaction: its row of the Active TxTable.
#[derive(Clone, Debug)]
pub(crate) struct ActiveTx {
    pub txid: u32,
    pub head: Option<usize>,
    pub pages: Vec<Written>,
    /// The latest page, held in DRAM until this transaction's next command.
    pub held: Option<(Lpn, u64)>,
}

/// Active transactions by device sequence number.
pub(crate) type Active = BTreeMap<u32, ActiveTx>;

impl ActiveTx {
    /// What the next program of this transaction needs: its id, its head, the held page
    /// and the index that page gets within the transaction.
    pub fn next(&self) -> (u32, Option<usize>, Option<(Lpn, u64)>, u32) {
        (self.txid, self.head, self.held, self.pages.len() as u32)
    }

    /// The instant every programmed page is durable (no earlier than `now`).
    pub fn durable_at(&self, now: SimTime) -> SimTime {
        self.pages.iter().map(|w| w.end).fold(now, SimTime::max)
    }

    /// The mapping the transaction installs: the last write of a page within it wins.
    pub fn last_writes(&self) -> BTreeMap<Lpn, Ppa> {
        let mut last = BTreeMap::new();
        for w in &self.pages {
            last.insert(w.lpn, w.ppa);
        }
        last
    }

    /// Unpins every programmed page as of `at` (commit or abort).
    pub fn unpin_all(&self, core: &mut FtlCore, at: SimTime) {
        for w in &self.pages {
            core.unpin(w.ppa, at);
        }
    }
}

/// Opens transaction `seq` on `head` with the next id from `next_txid`.
pub(crate) fn open(active: &mut Active, next_txid: &mut u32, seq: u32, head: Option<usize>) {
    let txid = *next_txid;
    *next_txid = next_txid.wrapping_add(1);
    if *next_txid == u32::MAX {
        *next_txid = 0;
    }
    active.insert(
        seq,
        ActiveTx {
            txid,
            head,
            pages: Vec::new(),
            held: None,
        },
    );
}

/// The held page of `seq` was programmed (and pinned) as `w`; `committing` also clears the
/// hold (COMMIT: nothing follows).
pub(crate) fn programmed(active: &mut Active, seq: u32, w: Written, committing: bool) {
    if let Some(a) = active.get_mut(&seq) {
        if committing {
            a.held = None;
        }
        a.pages.push(w);
    }
}

/// `seq` now holds `lpn` with `tag` (a transactional WRITE).
pub(crate) fn hold(active: &mut Active, seq: u32, lpn: Lpn, tag: u64) {
    if let Some(a) = active.get_mut(&seq) {
        a.held = Some((lpn, tag));
    }
}

/// Gives head `pick` (None: every head is taken) to transaction `seq`.
pub(crate) fn claim_head(
    owner: &mut [Option<u32>],
    pick: Option<usize>,
    protocol: &'static str,
    seq: u32,
) -> Result<usize> {
    let Some(k) = pick else {
        return Err(SsdError::Unsupported {
            protocol,
            what: format!(
                "run more than {} transactions at once (every log head is taken)",
                owner.len()
            ),
        });
    };
    owner[k] = Some(seq);
    Ok(k)
}

/// Frees a transaction's head, if it had one.
pub(crate) fn release_head(owner: &mut [Option<u32>], head: Option<usize>) {
    if let Some(k) = head {
        owner[k] = None;
    }
}
