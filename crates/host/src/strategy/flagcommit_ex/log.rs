//! The redo log of `cfc-ex` / `afc-ex` (§4.1: no-force, redo only): the log buffer
//! (`tail`), log page writes to the circular area with the restart-point guard, log forces,
//! and Algorithm 1 lines 8–9 (UPDATE records still only in the log buffer are dropped when
//! the page's version holding them is written; the *log floor* keeps a later COMMIT behind
//! that version). Record and page layout and the crash argument: `mod.rs`.

use super::layout::{log_lpn, FcTag, Redo};
use super::tables::{Status, Txn};
use super::{Fault, FlagCommitEx};
use crate::data::{PageNo, TagContent};
use crate::engine::Core;
use crate::{HostError, Result};
use sim::{SimTime, TxnId};
use std::sync::Arc;

impl FlagCommitEx {
    pub(super) fn write_log_page(
        &mut self,
        core: &mut Core,
        sealed: bool,
        now: SimTime,
    ) -> Result<SimTime> {
        if self.seq >= self.log_pages {
            let acked_b = self
                .masters
                .iter()
                .rev()
                .find(|m| m.0 <= now)
                .map_or(0, |m| m.1);
            if self.seq - self.log_pages >= acked_b {
                return Err(HostError::Config {
                    key: "host.log_pages".into(),
                    reason: format!(
                        "the log area ({} pages) is full: log page {} would overwrite page {}, which restart still needs (acked checkpoint at page {acked_b}); raise host.log_pages or lower host.checkpoint_log_bytes",
                        self.log_pages,
                        self.seq,
                        self.seq - self.log_pages
                    ),
                });
            }
        }
        let (seq, entries) = (self.seq, &self.tail);
        let tag = core.tags.add(|| {
            TagContent::Strategy(Arc::new(FcTag::Log {
                seq,
                sealed,
                entries: entries.clone(),
            }))
        });
        let lpn = log_lpn(self.log_base, self.log_pages, self.seq);
        let at = if self.fault == Fault::NoLogFloor {
            now
        } else {
            now.max(self.log_floor)
        };
        let t = core.write_log_page(lpn, tag, self.seq, at)?;
        self.issued_ack = self.issued_ack.max(t);
        self.forced = self.tail.len();
        Ok(t)
    }

    pub(super) fn append(&mut self, core: &mut Core, rec: Redo, now: SimTime) -> Result<()> {
        let per_page = (self.page_bytes / self.rec_bytes).max(1) as usize;
        if self.tail.len() >= per_page {
            self.write_log_page(core, true, now)?;
            self.seq += 1;
            self.tail.clear();
            self.forced = 0;
        }
        self.tail.push(rec);
        self.bytes_since_ckpt += self.rec_bytes;
        core.stats.log_bytes += self.rec_bytes;
        core.stats.log_records += 1;
        Ok(())
    }

    pub(super) fn force(&mut self, core: &mut Core, now: SimTime) -> Result<SimTime> {
        if !self.tail.is_empty() {
            self.write_log_page(core, false, now)?;
            core.stats.log_forces += 1;
        }
        Ok(self.issued_ack.max(now))
    }

    /// Algorithm 1 lines 8–9: page `page` was just written as a version (complete at `ack`);
    /// its UPDATE records still only in the log buffer are removed, since the version holds
    /// them (each is an active transaction's, whose pending record for the slot is in the
    /// version with its latest value; committed transactions' records were forced by their
    /// COMMIT). Such a transaction's COMMIT, if it needs one, is then written no earlier
    /// than `ack` (`log_floor`), so a durable COMMIT never names an update that is neither
    /// in the log nor in a complete version.
    pub(super) fn drop_cached(&mut self, page: PageNo, ack: SimTime) {
        let forced = self.forced;
        let mut dropped: Vec<TxnId> = Vec::new();
        let txns = &self.txns;
        let mut i = 0usize;
        self.tail.retain(|r| {
            let keep = i < forced
                || !matches!(r, Redo::Update { page: p, xid, .. }
                    if *p == page && matches!(txns.get(xid), Some(Txn { status: Status::Active, .. })));
            if !keep {
                dropped.push(r.xid());
            }
            i += 1;
            keep
        });
        self.n.log_records_dropped += dropped.len() as u64;
        for x in dropped {
            if let Some(t) = self.txns.get_mut(&x) {
                t.dropped_ack = t.dropped_ack.max(ack);
            }
        }
    }
}
