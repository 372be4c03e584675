//! `none`: the plain page-mapping FTL, no atomicity beyond a single page.
//!
//! A write programs a new page and remaps the logical page when the program is issued; the
//! ack comes when the program completes. Transactions are accepted (so a transactional
//! workload can run against a plain SSD, as TxFlash §5.2 does) but give no atomicity: each
//! write is a plain write, COMMIT waits for them, ABORT is refused.
//!
//! OOB layout (14 bytes):
//!
//! ```text
//! [0]      page kind: 0x01 DATA
//! [1..5]   lpn, u32 LE
//! [5..13]  write sequence, u64 LE: device-wide, strictly increasing per write
//! [13]     0x00 for a trim tombstone, 0xFF for data
//! ```
//!
//! Pages of kind 0x06 (NATIVE) belong to host-managed erase units (`device::native`);
//! recovery maps none of them and keeps their blocks owned by the host.
//!
//! TRIM writes a tombstone page for the logical page and maps it, so a trim is durable when
//! acked (a trim of a page already trimmed is acked when that tombstone's program completes) and an older version can never resurface after a crash (the tombstone outranks it
//! by sequence and stays live until the page is written again). It costs one page per
//! trimmed logical page that was mapped.
//!
//! Why a single page is durable and recovery is right, case by case:
//! - A write is acked only when its program completes; from then on the page is on the
//!   medium. Its old copy is invalidated with `durable_at` = that completion, so GC never
//!   starts erasing the old copy earlier: a crash before the ack finds the old copy (or the
//!   new one, if its program finished), never neither.
//! - Recovery keeps, per logical page, the highest sequence found. Sequences increase with
//!   issue order, so two writes to one page in flight together resolve to the later one if
//!   it persisted. GC copies keep the original sequence; duplicates are identical.
//! - A torn program reads uncorrectable and is ignored: that write was not acked.
//! - With checkpoints, pages below a block's scan start were captured by the translation
//!   pages; every page written later is in the scan set and outranks the checkpoint. A
//!   checkpoint entry pointing into the scanned region whose page now holds something else
//!   was superseded (rewritten, moved or trimmed, all of which leave a scanned page), so the
//!   scanned page decides. The sequence counter resumes above both the checkpoint's record
//!   of it and every scanned page.
//! - A root entry naming a page in the scanned region *with no scanned page claiming its
//!   lpn* is an image this FTL cannot leave, so recovery refuses it as corrupt
//!   (`fill_from_root`) instead of choosing between the entry and "unmapped". Why it cannot
//!   arise: (1) the root's scan set holds every block programmed since its translation
//!   pages were taken, from the write pointer it had then (`meta.rs`: window blocks are
//!   recorded by a durable root before their first program, open blocks from their then
//!   write pointer), and a block enters the scan set below its old write pointer only by
//!   being erased first (`refill_windows`: `add_scan(b, 0)` after `make_clean`); so a root
//!   entry p lies in the scanned region only if p's block was erased after the snapshot.
//!   (2) `none` never unmaps an lpn: every change of its mapping (write, trim tombstone, GC
//!   copy) programs a page that claims it, into a block of the scan set. (3) A block is
//!   erased only after every page superseding one of its mapped pages is durable
//!   (`erase_not_before`), and the page an lpn maps to is never erased. So when p's block
//!   was erased (or its erase began: in any crash state), the page that superseded p is on
//!   the medium in the scanned region, and by (2)–(3) applied to it in turn, so is the
//!   lpn's newest page: the scan claims the lpn. The crash checker's runs of `none` with
//!   checkpoints (`crash --variants --protocol none`, CI) check this on every state, since
//!   a refused image is a violation; the planted `none-root-trusted` (take the entry
//!   instead) is therefore equivalent under the model (docs/MUTATION.md).

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef};
use crate::core::{blank_oob, FtlCore, ReadOutcome, Stream};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::oob::{get_u32, get_u64, kind, put_u32, put_u64, Reader};
use crate::recovery::RecoveryCtx;
use media::{Content, PageView, Ppa};
use sim::{Lpn, SimTime};
use std::collections::BTreeMap;

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "none",
    summary: "plain page-mapping FTL: single-page writes only, no transaction atomicity",
    oob_bytes: 14,
    atomic: false,
    needs_checkpoints: false,
    supports_checkpoints: true,
    isolation: &Isolation::ALL,
    supports_trim: true,
    create,
    recover,
};

const OFF_LPN: usize = 1;
const OFF_SEQ: usize = 5;
const OFF_TOMB: usize = 13;

#[derive(Clone)]
pub struct NoneFtl {
    next_seq: u64,
    /// Latest completion of each open transaction's writes.
    open: BTreeMap<u32, SimTime>,
    /// Tombstones whose program may still be in flight: lpn → its completion. A second
    /// trim of the page must not be acked before the first one's tombstone is durable.
    tomb_end: BTreeMap<u32, SimTime>,
}

fn create(_: &ProtocolConfig, _: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    Ok(Box::new(NoneFtl {
        next_seq: 1,
        open: BTreeMap::new(),
        tomb_end: BTreeMap::new(),
    }))
}

impl NoneFtl {
    fn program(
        &mut self,
        core: &mut FtlCore,
        lpn: Lpn,
        content: Content,
        tomb: bool,
        now: SimTime,
    ) -> Result<SimTime> {
        core.prefetch_remap(lpn);
        let mut oob = blank_oob(core, kind::DATA);
        put_u32(&mut oob, OFF_LPN, lpn.0);
        put_u64(&mut oob, OFF_SEQ, self.next_seq);
        if tomb {
            oob[OFF_TOMB] = 0;
        }
        self.next_seq += 1;
        let ready = core.host_transfer_done(now);
        let (ppa, t) = core.program(Stream::HOST, None, content, &oob, ready)?;
        core.map(lpn, ppa, t.end);
        Ok(t.end)
    }
}

fn is_tombstone(oob: &[u8]) -> bool {
    oob[OFF_TOMB] == 0
}

impl FtlHooks for NoneFtl {
    fn checkpoint_blob(&mut self, _core: &FtlCore) -> Vec<u8> {
        self.next_seq.to_le_bytes().to_vec()
    }
}

impl CommitProtocol for NoneFtl {
    fn name(&self) -> &'static str {
        "none"
    }

    fn begin(&mut self, _core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.open.insert(tx.seq, now);
        Ok(now)
    }

    fn write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        let end = self.program(core, lpn, Content::Tag(tag), false, now)?;
        let e = self.open.entry(tx.seq).or_insert(now);
        *e = (*e).max(end);
        Ok(core.host_transfer_done(now))
    }

    fn commit(&mut self, _core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        Ok(self.open.remove(&tx.seq).unwrap_or(now).max(now))
    }

    fn abort(&mut self, _core: &mut FtlCore, _tx: TxRef, _now: SimTime) -> Result<SimTime> {
        Err(SsdError::Unsupported {
            protocol: "none",
            what: "abort a transaction (it has no atomicity)".into(),
        })
    }

    fn write_plain(
        &mut self,
        core: &mut FtlCore,
        _tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        #[cfg(feature = "mutants")]
        if crate::mutant::on("none-ack-early") {
            self.program(core, lpn, Content::Tag(tag), false, now)?;
            return Ok(core.host_transfer_done(now));
        }
        self.program(core, lpn, Content::Tag(tag), false, now)
    }

    fn write_plain_content(
        &mut self,
        core: &mut FtlCore,
        _tx: TxRef,
        lpn: Lpn,
        content: Content,
        now: SimTime,
    ) -> Result<SimTime> {
        self.program(core, lpn, content, false, now)
    }

    fn read(
        &mut self,
        core: &mut FtlCore,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(ReadOutcome, SimTime)> {
        core.check_lpn(lpn)?;
        let Some(ppa) = core.lookup(lpn) else {
            return Ok((ReadOutcome::Unmapped, now));
        };
        let (t, view) = core.read_page(ppa, now)?;
        let out = match view {
            PageView::Programmed { oob, .. } if is_tombstone(oob) => ReadOutcome::Unmapped,
            v => crate::core::outcome_of(v),
        };
        Ok((out, t.end))
    }

    fn trim(&mut self, core: &mut FtlCore, lpn: Lpn, now: SimTime) -> Result<SimTime> {
        core.check_lpn(lpn)?;
        let Some(ppa) = core.lookup(lpn) else {
            return Ok(now);
        };
        // Tombstones already durable need no record; the map holds only those in flight.
        self.tomb_end.retain(|_, end| *end > now);
        if core.nand.image().oob(ppa).is_some_and(is_tombstone) {
            // Already trimmed: acked when that tombstone is durable, not at once (found by
            // an adversarial test campaign: `crash --protocol none --seed 1000
            // --schedules 2000 --set workload.synthetic.trim_ratio=0.3 --state 115`).
            return Ok(self.tomb_end.get(&lpn.0).map_or(now, |end| now.max(*end)));
        }
        let end = self.program(core, lpn, Content::Bytes(Box::new([])), true, now)?;
        self.tomb_end.insert(lpn.0, end);
        Ok(end)
    }

    fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("open transactions", self.open.len() as u64 * 16),
            ("tombstones in flight", self.tomb_end.len() as u64 * 12),
        ]
    }
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let lp = ctx.core.logical_pages() as usize;
    let mut best_seq = vec![0u64; lp];
    let mut best_ppa = vec![Ppa::NONE; lp];
    let mut max_seq = 0u64;
    for (ppa, oob) in ctx.scan.of_kind(kind::DATA) {
        let lpn = get_u32(oob, OFF_LPN) as usize;
        let seq = get_u64(oob, OFF_SEQ);
        if lpn >= lp {
            return Err(SsdError::CorruptImage {
                detail: format!("{ppa} claims lpn {lpn}, beyond {lp} logical pages"),
            });
        }
        max_seq = max_seq.max(seq);
        if seq > best_seq[lpn]
            || (seq == best_seq[lpn]
                && best_ppa[lpn] != Ppa::NONE
                && crate::core::tail_ones(ctx.core, ppa)
                    < crate::core::tail_ones(ctx.core, best_ppa[lpn]))
        {
            best_seq[lpn] = seq;
            best_ppa[lpn] = ppa;
        }
    }
    // Host-managed erase units (`device::native`): kept owned, so nothing after recovery
    // programs or erases a block the host's own recovery still reads.
    let native: std::collections::BTreeSet<media::BlockId> = ctx
        .scan
        .of_kind(kind::NATIVE)
        .map(|(ppa, _)| ctx.core.geo.block_of(ppa))
        .collect();
    for b in native {
        ctx.claim_block(b);
    }
    let mut next_seq = max_seq + 1;
    if let Some(root) = ctx.root.take() {
        if let Some(s) = Reader::new(&root.blob).u64() {
            if s != u64::MAX {
                next_seq = next_seq.max(s);
            }
        }
        let filled = fill_from_root(&mut best_ppa, &root.l2p, |p| ctx.was_scanned(p));
        ctx.root = Some(root);
        filled?;
    }
    for (lpn, ppa) in best_ppa.iter().enumerate() {
        if *ppa != Ppa::NONE {
            ctx.map(Lpn(lpn as u32), *ppa)?;
        }
    }
    Ok(Box::new(NoneFtl {
        next_seq,
        open: BTreeMap::new(),
        tomb_end: BTreeMap::new(),
    }))
}

/// Fills the lpns the scan found no page for from the checkpoint root's entries (`best`:
/// per lpn the scanned page recovery keeps, `Ppa::NONE` for none). An entry naming a page
/// in the scanned region (`scanned`) whose lpn no scanned page claims cannot come from
/// this FTL (the case-by-case argument in the header): refused as a corrupt image.
fn fill_from_root(best: &mut [Ppa], root: &[Ppa], scanned: impl Fn(Ppa) -> bool) -> Result<()> {
    for (lpn, p) in root.iter().enumerate() {
        let Some(b) = best.get_mut(lpn) else {
            break;
        };
        if *b != Ppa::NONE || *p == Ppa::NONE {
            continue;
        }
        if !scanned(*p) {
            *b = *p;
            continue;
        }
        #[cfg(feature = "mutants")]
        if crate::mutant::on("none-root-trusted") {
            *b = *p;
            continue;
        }
        return Err(SsdError::CorruptImage {
            detail: format!(
                "the checkpoint root maps lpn {lpn} to {p}, in a block written since the checkpoint, and no page found there claims lpn {lpn}"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ppa(i: u32) -> Ppa {
        Ppa(i)
    }

    #[test]
    fn root_entries_fill_only_what_the_scan_did_not_find() {
        // lpn 0: found by the scan (kept); lpn 1: root entry outside the scanned region
        // (taken); lpn 2: unmapped in the root (stays unmapped).
        let mut best = vec![ppa(7), Ppa::NONE, Ppa::NONE];
        let root = vec![ppa(3), ppa(4), Ppa::NONE];
        fill_from_root(&mut best, &root, |p| p.0 >= 100).unwrap();
        assert_eq!(best, vec![ppa(7), ppa(4), Ppa::NONE]);
    }

    /// A root entry in a block rewritten since the checkpoint, with no scanned page for its
    /// lpn, was silently dropped (the lpn read as unmapped); the FTL cannot leave such an
    /// image (header), so it is refused as corrupt.
    #[test]
    fn a_root_entry_in_a_rewritten_block_without_a_claimant_is_refused() {
        let mut best = vec![ppa(7), Ppa::NONE];
        let root = vec![ppa(3), ppa(104)];
        let e = fill_from_root(&mut best, &root, |p| p.0 >= 100).unwrap_err();
        assert!(
            matches!(&e, SsdError::CorruptImage { detail } if detail.contains("lpn 1")),
            "{e}"
        );
        // A scanned page claiming the lpn decides; the stale entry is not looked at.
        let mut best = vec![ppa(7), ppa(150)];
        fill_from_root(&mut best, &root, |p| p.0 >= 100).unwrap();
        assert_eq!(best, vec![ppa(7), ppa(150)]);
    }
}
