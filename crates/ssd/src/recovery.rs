//! Recovery support: scanning blocks for their OOB (through summary pages where they exist)
//! and the context a protocol's `recover` works in.
//!
//! The FTL does the generic part: find the newest root and translation pages (with
//! checkpoints on), scan the scan set (or every block), and hand the protocol what it found.
//! The protocol decides what is committed, maps and pins pages through `RecoveryCtx`, and
//! may read more pages (commit records, link chains) through it; every read is timed, so
//! recovery reports simulated time as well as pages read.

use crate::config::FtlConfig;
use crate::core::FtlCore;
use crate::error::{Result, SsdError};
use crate::meta::RootView;
use crate::oob::kind;
use media::{BlockId, PageView, Ppa};
use sim::{Lpn, SimTime};

/// OOB contents found by a scan, flat: entry `i` is page `ppas[i]`.
#[derive(Clone, Debug, Default)]
pub struct ScanResult {
    pub ppas: Vec<Ppa>,
    /// Blocks the scan found partly written: (block, first erased page after the last
    /// programmed or torn one). Recovery may resume writing them there.
    pub tails: Vec<(BlockId, u32)>,
    oobs: Vec<u8>,
    readable: Vec<bool>,
    stride: usize,
}

impl ScanResult {
    fn push(&mut self, ppa: Ppa, oob: Option<&[u8]>) {
        self.ppas.push(ppa);
        match oob {
            Some(o) => {
                self.oobs.extend_from_slice(&o[..self.stride]);
                self.readable.push(true);
            }
            None => {
                self.oobs.extend(std::iter::repeat_n(0xFF, self.stride));
                self.readable.push(false);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.ppas.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ppas.is_empty()
    }

    /// Entry `i`: its page and its OOB (`None` if the page was uncorrectable).
    pub fn get(&self, i: usize) -> (Ppa, Option<&[u8]>) {
        let o = &self.oobs[i * self.stride..(i + 1) * self.stride];
        (self.ppas[i], self.readable[i].then_some(o))
    }

    /// Every readable page whose OOB kind byte is `k`.
    pub fn of_kind(&self, k: u8) -> impl Iterator<Item = (Ppa, &[u8])> + '_ {
        (0..self.len()).filter_map(move |i| match self.get(i) {
            (ppa, Some(o)) if o[0] == k => Some((ppa, o)),
            _ => None,
        })
    }
}

/// Reads the OOB of the given blocks (each from a first page on). A full block with a summary
/// page costs one read; otherwise each page's OOB is read, stopping at the first erased page
/// when programming is in order (a later page cannot have persisted without it).
pub fn scan_blocks(
    core: &mut FtlCore,
    blocks: &[(BlockId, u32)],
    ready: SimTime,
) -> Result<(ScanResult, SimTime)> {
    let g = core.geo.clone();
    let stride = core.nand.image().oob_used();
    let in_order = core.nand.image().params().in_order_program;
    let summaries = core.cfg.summary_pages;
    let data_pages = core.data_pages_per_block();
    let stride_pages = core.page_stride();
    let mut out = ScanResult {
        stride,
        ..Default::default()
    };
    let mut end = ready;
    for &(block, from) in blocks {
        if summaries {
            let sp = core.summary_ppa(block);
            let at = core.recovery_read_at(ready, end);
            let (t, view) = core.nand.read(sp, at)?;
            end = end.max(t.end);
            if let PageView::Programmed {
                data: media::image::DataRef::Bytes(b),
                oob,
            } = view
            {
                if oob[0] == kind::SUMMARY {
                    let mut r = crate::oob::Reader::new(b);
                    for page in 0..data_pages {
                        let o = r.bytes(stride);
                        if page >= from {
                            out.push(g.ppa(block, page * stride_pages), Some(&o));
                        }
                    }
                    continue;
                }
            }
        }
        // Where writing could resume: after the highest page found programmed (or torn).
        // The FTL programs a block's pages in order whether or not the medium enforces it.
        let mut next_free = from;
        // `page` counts slots (pSLC: LSB pages only, `modes`).
        for page in from..g.pages_per_block / stride_pages {
            let ppa = g.ppa(block, page * stride_pages);
            let at = core.recovery_read_at(ready, end);
            let (t, view) = core.nand.read_oob(ppa, at)?;
            end = end.max(t.end);
            match view {
                PageView::Erased => {
                    if in_order {
                        break;
                    }
                }
                PageView::Uncorrectable => {
                    out.push(ppa, None);
                    next_free = page + 1;
                }
                PageView::Programmed { oob, .. } => {
                    out.push(ppa, Some(oob));
                    next_free = page + 1;
                }
            }
        }
        if next_free > 0 && next_free < data_pages {
            out.tails.push((block, next_free));
        }
    }
    Ok((out, end))
}

/// What a protocol's recovery works with.
pub struct RecoveryCtx<'a> {
    pub core: &'a mut FtlCore,
    /// The newest complete root and the mapping it records (checkpoints on).
    pub root: Option<RootView>,
    /// OOB of every page in the scanned blocks.
    pub scan: ScanResult,
    /// The blocks that were scanned, each from a first page on.
    pub scanned_blocks: Vec<(BlockId, u32)>,
    /// Reads issued during recovery chain from here.
    pub ready: SimTime,
    /// The protocol's configuration.
    pub params: &'a crate::config::ProtocolConfig,
}

impl<'a> RecoveryCtx<'a> {
    pub fn ftl_config(&self) -> &FtlConfig {
        &self.core.cfg
    }

    /// Maps `lpn` to `ppa` in the recovered table.
    pub fn map(&mut self, lpn: Lpn, ppa: Ppa) -> Result<()> {
        if lpn.0 >= self.core.logical_pages() {
            return Err(SsdError::CorruptImage {
                detail: format!(
                    "{ppa} claims {lpn}, beyond {} logical pages",
                    self.core.logical_pages()
                ),
            });
        }
        if ppa.0 >= self.core.geo.pages() {
            return Err(SsdError::CorruptImage {
                detail: format!("{lpn} maps outside the device ({})", ppa.0),
            });
        }
        self.core.mark_written(ppa);
        self.core.map(lpn, ppa, SimTime::ZERO);
        Ok(())
    }

    /// Keeps a page live for the protocol.
    pub fn pin(&mut self, ppa: Ppa) {
        self.core.mark_written(ppa);
        self.core.pin(ppa);
    }

    /// Keeps a block the protocol owned before the crash (AW's mapping log) out of the free
    /// pools after recovery; it goes back with `FtlCore::release_block`.
    pub fn claim_block(&mut self, block: BlockId) {
        self.core.take_owned(block);
    }

    /// How many blocks of `pu` hold nothing the recovered state needs so far (see
    /// `take_unused_block`).
    pub fn unused_blocks(&self, pu: media::PuId) -> u32 {
        let g = &self.core.geo;
        let tran: Vec<BlockId> = self
            .core
            .ckpt
            .dir
            .iter()
            .chain(self.core.ckpt.journal.iter())
            .filter(|p| **p != Ppa::NONE)
            .map(|p| g.block_of(*p))
            .collect();
        let meta = self.core.ckpt.meta_blocks();
        g.blocks_of_pu(pu)
            .filter(|&b| {
                self.core.live(b) == 0
                    && !tran.contains(&b)
                    && !meta.contains(&b)
                    && !self.core.is_owned(b)
                    && !self.core.nand.image().is_bad(b)
            })
            .count() as u32
    }

    /// A block that holds nothing the recovered state needs (no page mapped or pinned so
    /// far, no translation page of the root, not the root log, not owned), erased now and
    /// owned by the protocol: where a protocol restarts its own log after a crash. In `pu`,
    /// or with `None` in the unit with the most such blocks (least likely to leave GC short).
    /// Call it after mapping and pinning. Returns the block and when the erase completes.
    pub fn take_unused_block(
        &mut self,
        pu: Option<media::PuId>,
    ) -> Result<Option<(BlockId, SimTime)>> {
        let g = self.core.geo.clone();
        // The root's translation and journal pages (not pinned yet while the protocol
        // recovers): erasing one would leave a root that a second recovery cannot read.
        let tran: Vec<BlockId> = self
            .core
            .ckpt
            .dir
            .iter()
            .chain(self.core.ckpt.journal.iter())
            .filter(|p| **p != Ppa::NONE)
            .map(|p| g.block_of(*p))
            .collect();
        let meta = self.core.ckpt.meta_blocks().to_vec();
        let unused = |core: &FtlCore, b: BlockId| {
            core.live(b) == 0
                && !tran.contains(&b)
                && !meta.contains(&b)
                && !core.is_owned(b)
                && !core.nand.image().is_bad(b)
        };
        let pu = match pu {
            Some(p) => p,
            None => {
                let mut best = (0usize, media::PuId(0));
                for p in 0..g.pus() {
                    let n = g
                        .blocks_of_pu(media::PuId(p))
                        .filter(|b| unused(self.core, *b))
                        .count();
                    if n > best.0 {
                        best = (n, media::PuId(p));
                    }
                }
                best.1
            }
        };
        let mut cands: Vec<(u32, BlockId)> = g
            .blocks_of_pu(pu)
            .filter(|b| unused(self.core, *b))
            .map(|b| (self.core.nand.image().erase_count(b), b))
            .collect();
        cands.sort_unstable();
        for (_, b) in cands {
            let (t, worn) = self.core.nand.erase(b, self.ready)?;
            if worn {
                continue;
            }
            self.core.take_owned(b);
            return Ok(Some((b, t.end)));
        }
        Ok(None)
    }

    /// Whether `ppa` lies in the scanned region (its block scanned from at most its page).
    pub fn was_scanned(&self, ppa: Ppa) -> bool {
        let b = self.core.geo.block_of(ppa);
        let p = self.core.geo.page_in_block(ppa) / self.core.page_stride();
        self.scanned_blocks
            .iter()
            .any(|(sb, from)| *sb == b && p >= *from)
    }

    /// Reads a whole page; the view is copied out so the context stays usable.
    pub fn read_page(&mut self, ppa: Ppa) -> Result<OwnedPage> {
        let (t, view) = self.core.nand.read(ppa, self.ready)?;
        let end = t.end;
        let page = OwnedPage::from(view);
        self.ready = self.ready.max(end);
        Ok(page)
    }

    /// Reads a page's OOB only.
    pub fn read_oob(&mut self, ppa: Ppa) -> Result<Option<Vec<u8>>> {
        let (t, view) = self.core.nand.read_oob(ppa, self.ready)?;
        let end = t.end;
        let oob = match view {
            PageView::Programmed { oob, .. } => Some(oob.to_vec()),
            PageView::Erased => Some(vec![0xFF; self.core.nand.image().oob_used()]),
            PageView::Uncorrectable => None,
        };
        self.ready = self.ready.max(end);
        Ok(oob)
    }
}

/// A page read back, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedPage {
    Erased,
    Uncorrectable,
    Tag { tag: u64, oob: Vec<u8> },
    Bytes { bytes: Vec<u8>, oob: Vec<u8> },
}

impl From<PageView<'_>> for OwnedPage {
    fn from(v: PageView<'_>) -> Self {
        match v {
            PageView::Erased => OwnedPage::Erased,
            PageView::Uncorrectable => OwnedPage::Uncorrectable,
            PageView::Programmed { data, oob } => match data {
                media::image::DataRef::Tag { tag, .. } => OwnedPage::Tag {
                    tag,
                    oob: oob.to_vec(),
                },
                media::image::DataRef::Bytes(b) => OwnedPage::Bytes {
                    bytes: b.to_vec(),
                    oob: oob.to_vec(),
                },
            },
        }
    }
}
