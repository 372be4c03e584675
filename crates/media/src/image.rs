//! `NandImage`: the persistent state of a NAND device and the physics rules that govern it.
//!
//! This is what survives a power cut. It holds, per page, the program state, the number of
//! programs since the last erase, the data area and the OOB area; per block, the erase count,
//! the cell mode and the bad / unstable flags. Timing lives in `Nand`, not here, so the crash
//! checker can clone an image and replay any subset of logged operations onto it.
//!
//! Data modes:
//! - `Full`: every data byte is stored. A page written with a content tag holds the tag's
//!   deterministic byte pattern, so it can be checked byte for byte when read back.
//! - `Tag`: the data area is represented by a 64-bit content tag; pages written with raw
//!   bytes (summary pages, mapping pages, commit records) keep those bytes in a side map, as
//!   do bytes appended in place to a tagged page. Bytes beyond what is stored read as 0xFF.
//!
//! The OOB area is always stored, but compactly: only the `oob_used` bytes a protocol's layout
//! defines, not the device's full spare area.
//!
//! Invariants (checked by `check_invariants`): an erased page has no programs, an all-zero
//! page record (its OOB reads as all 0xFF through `oob`, from `erased_oob`) and no payload; `last_prog` is the highest programmed page of each block; a bad block is
//! never programmed again.

use crate::payloads::Payloads;
use crate::{BlockId, Geometry, NandError, Ppa};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Slc,
    Mlc,
}

/// Per-block cell mode. Only meaningful for MLC.
///
/// Pages are numbered from 0; even pages are the LSB pages (the paper's "odd-numbered"
/// pages, counting from 1) and odd pages the MSB pages (in-place-appends.md, "Flash types").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockMode {
    /// MLC: every page allows one program. SLC: every page allows NOP programs.
    Normal,
    /// Pseudo-SLC: only LSB pages are used, each allowing NOP programs; half the capacity.
    PSlc,
    /// Odd-MLC: all pages used; LSB pages allow NOP programs, MSB pages one.
    OddMlc,
}

impl BlockMode {
    pub fn name(self) -> &'static str {
        match self {
            BlockMode::Normal => "normal",
            BlockMode::PSlc => "pSLC",
            BlockMode::OddMlc => "odd-MLC",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    Full,
    Tag,
}

/// What a program writes into a page's data area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// A content tag standing for a whole page of host data.
    Tag(u64),
    /// Raw bytes (at most one page; the rest of the page stays 0xFF).
    Bytes(Box<[u8]>),
    /// A content tag for the page body plus the append area's bytes (from its start, at
    /// most `append_bytes`), programmed together in one program: a whole page image that
    /// carries in-place-appended bytes (an FTL moving such a page, a block-interface write
    /// of body + delta area). One program, so it also fits an MLC MSB page (NOP 1).
    TagTail(u64, Box<[u8]>),
}

/// A page's data area as read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataRef<'a> {
    /// A tagged page, with any bytes appended in place in its append area.
    Tag { tag: u64, tail: &'a [u8] },
    /// Raw bytes; bytes beyond the slice read as 0xFF.
    Bytes(&'a [u8]),
}

/// A page as read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageView<'a> {
    Erased,
    /// ECC could not correct the page (a torn program or an interrupted erase).
    Uncorrectable,
    Programmed {
        data: DataRef<'a>,
        oob: &'a [u8],
    },
}

/// How an interrupted operation leaves the medium.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TornKind {
    /// A program cut short: the page is neither erased nor readable.
    Program,
    /// A partial program cut short: each bit it would clear is cleared or not, chosen by
    /// a stream seeded with `seed`. The page stays readable (see DESIGN assumptions).
    Partial { seed: u64 },
    /// An erase cut short that happens to leave every page reading as erased, but the block
    /// is unstable: programming it fails until it is erased again.
    EraseUnstable,
    /// An erase cut short that leaves every programmed page uncorrectable.
    EraseGarbled,
}

const ST_MASK: u8 = 0b11;
pub(crate) const ST_MASK_PUB: u8 = ST_MASK;
pub(crate) const KIND_MASK_PUB: u8 = KIND_BYTES;
const ST_ERASED: u8 = 0;
const ST_PROGRAMMED: u8 = 1;
const ST_UNCORRECTABLE: u8 = 2;
pub(crate) const ST_UNCORRECTABLE_PUB: u8 = ST_UNCORRECTABLE;
const KIND_BYTES: u8 = 0b100;
/// Tag mode: the page has an entry in `payloads`. A read looks the map up only then (a tree
/// search on every read of a tagged page was ~2 % of a host TPC-C run). Never set in full
/// mode, so file-backed images (full mode only) never store it.
const HAS_PAYLOAD: u8 = 0b1000;

/// Offsets within a page record.
const REC_ST: usize = 0;
const REC_NP: usize = 1;
const REC_TAG: usize = 2;
pub(crate) const REC_OOB: usize = 10;

const BLK_BAD: u8 = 1;
const BLK_UNSTABLE: u8 = 2;
pub(crate) const BLK_UNSTABLE_PUB: u8 = BLK_UNSTABLE;
const NO_PAGE: u16 = u16::MAX;

/// Everything that shapes an image; stored in a file image's header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageParams {
    pub geometry: Geometry,
    pub cell: CellType,
    /// Programs allowed per page between erases for SLC pages (and LSB pages in pSLC and
    /// odd-MLC modes).
    pub nop: u8,
    pub in_order_program: bool,
    /// P/E cycles after which a block is bad.
    pub endurance: u32,
    pub data_mode: DataMode,
    /// OOB bytes actually stored per page (the protocol's layout).
    pub oob_used: u32,
    /// Bytes at the end of a tagged page's data area that stay erased for in-place appends.
    pub append_bytes: u32,
}

impl ImageParams {
    pub fn validate(&self) -> Result<(), NandError> {
        self.geometry.validate()?;
        if self.nop == 0 {
            return Err(NandError::Config {
                key: "nand.nop",
                reason: "must be at least 1".into(),
            });
        }
        if self.endurance == 0 {
            return Err(NandError::Config {
                key: "nand.endurance",
                reason: "must be at least 1".into(),
            });
        }
        if self.oob_used > self.geometry.oob_bytes {
            return Err(NandError::Config {
                key: "nand.oob_bytes",
                reason: format!(
                    "the protocol's OOB layout needs {} bytes but the device has {}",
                    self.oob_used, self.geometry.oob_bytes
                ),
            });
        }
        if self.append_bytes >= self.geometry.page_bytes / 2 {
            return Err(NandError::Config {
                key: "nand.append_bytes",
                reason: format!(
                    "must be less than half a page ({}), got {}",
                    self.geometry.page_bytes / 2,
                    self.append_bytes
                ),
            });
        }
        if self.data_mode == DataMode::Full {
            let bytes = u64::from(self.geometry.pages()) * u64::from(self.geometry.page_bytes);
            if bytes > 4 << 30 {
                return Err(NandError::Config {
                    key: "nand.data_mode",
                    reason: format!(
                        "full data mode stores every byte; {} GiB is too large (limit 4 GiB), use data_mode = \"tag\"",
                        bytes >> 30
                    ),
                });
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NandImage {
    pub(crate) params: ImageParams,
    /// One record per page, `stride` bytes: state, program count, content tag (u64 LE) and
    /// the stored OOB bytes. Interleaved so a program or a GC read of a page touches one
    /// place in memory, not four arrays (this is the simulator's hottest data).
    ///
    /// An erased page's record is all zero bytes, OOB included (its OOB reads as 0xFF
    /// through `oob`): so a new device's records are untouched zeroed memory, which costs
    /// nothing until a page is programmed, instead of 0xFF written into hundreds of MiB.
    pub(crate) rec: sim::mem::HugeTable<u8>,
    /// The OOB bytes of an erased page: `oob_used` bytes of 0xFF.
    erased_oob: Box<[u8]>,
    pub(crate) stride: usize,
    /// Full mode only: pages × page_bytes.
    pub(crate) data: Vec<u8>,
    /// Tag mode only: raw bytes of `Bytes` pages and appended tails of tagged pages.
    pub(crate) payloads: Payloads,
    pub(crate) erase_count: Vec<u32>,
    pub(crate) mode: Vec<BlockMode>,
    pub(crate) flags: Vec<u8>,
    pub(crate) last_prog: Vec<u16>,
}

/// The byte pattern of a tagged page in full mode: the tag, then a tag-derived sequence.
pub(crate) fn fill_tag_pattern(tag: u64, out: &mut [u8]) {
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let word = if i == 0 {
            tag
        } else {
            tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)
        };
        let bytes = word.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

pub(crate) fn tag_pattern_matches(tag: u64, data: &[u8]) -> bool {
    let mut buf = [0u8; 8];
    for (i, chunk) in data.chunks(8).enumerate() {
        let word = if i == 0 {
            tag
        } else {
            tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)
        };
        buf.copy_from_slice(&word.to_le_bytes());
        if chunk != &buf[..chunk.len()] {
            return false;
        }
    }
    true
}

/// `old` may become `new` by programming only if no bit goes from 0 to 1.
fn first_set_violation(old: &[u8], new: &[u8]) -> Option<usize> {
    old.iter().zip(new).position(|(o, n)| o & n != *n)
}

impl NandImage {
    /// A freshly manufactured device: every page erased, every erase count zero.
    pub fn new(params: ImageParams) -> Result<NandImage, NandError> {
        params.validate()?;
        let g = &params.geometry;
        let pages = g.pages() as usize;
        let blocks = g.blocks() as usize;
        let data = match params.data_mode {
            DataMode::Full => sim::mem::huge_vec(pages * g.page_bytes as usize, 0xFF),
            DataMode::Tag => Vec::new(),
        };
        let stride = REC_OOB + params.oob_used as usize;
        Ok(NandImage {
            rec: sim::mem::HugeTable::zeroed(pages * stride),
            erased_oob: vec![0xFF; params.oob_used as usize].into(),
            stride,
            data,
            payloads: Payloads::new(blocks, g.pages_per_block),
            erase_count: vec![0; blocks],
            mode: vec![BlockMode::Normal; blocks],
            flags: vec![0; blocks],
            last_prog: vec![NO_PAGE; blocks],
            params,
        })
    }

    /// An image with this one's parameters and no pages at all: what a NAND keeps after it
    /// handed its medium over (`Nand::take_for_restart`). Every access to a page of it is
    /// out of range.
    pub(crate) fn hollow(&self) -> NandImage {
        NandImage {
            params: self.params.clone(),
            rec: sim::mem::HugeTable::default(),
            erased_oob: self.erased_oob.clone(),
            stride: self.stride,
            data: Vec::new(),
            payloads: Payloads::default(),
            erase_count: Vec::new(),
            mode: Vec::new(),
            flags: Vec::new(),
            last_prog: Vec::new(),
        }
    }

    pub fn params(&self) -> &ImageParams {
        &self.params
    }
    pub fn geometry(&self) -> &Geometry {
        &self.params.geometry
    }
    pub fn oob_used(&self) -> usize {
        self.params.oob_used as usize
    }

    #[inline]
    pub(crate) fn st(&self, i: usize) -> u8 {
        self.rec[i * self.stride + REC_ST]
    }
    #[inline]
    pub(crate) fn set_st(&mut self, i: usize, v: u8) {
        self.rec[i * self.stride + REC_ST] = v;
    }
    #[inline]
    pub(crate) fn np(&self, i: usize) -> u8 {
        self.rec[i * self.stride + REC_NP]
    }
    #[inline]
    pub(crate) fn set_np(&mut self, i: usize, v: u8) {
        self.rec[i * self.stride + REC_NP] = v;
    }
    #[inline]
    pub(crate) fn tag_of(&self, i: usize) -> u64 {
        let s = i * self.stride + REC_TAG;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.rec[s..s + 8]);
        u64::from_le_bytes(b)
    }
    #[inline]
    pub(crate) fn set_tag(&mut self, i: usize, v: u64) {
        let s = i * self.stride + REC_TAG;
        self.rec[s..s + 8].copy_from_slice(&v.to_le_bytes());
    }
    #[inline]
    pub(crate) fn oob_at(&self, i: usize) -> &[u8] {
        let s = i * self.stride;
        &self.rec[s + REC_OOB..s + self.stride]
    }
    #[inline]
    pub(crate) fn oob_at_mut(&mut self, i: usize) -> &mut [u8] {
        let s = i * self.stride;
        &mut self.rec[s + REC_OOB..s + self.stride]
    }
    pub(crate) fn record_mut(&mut self, i: usize) -> &mut [u8] {
        let s = self.stride;
        &mut self.rec[i * s..(i + 1) * s]
    }

    pub(crate) fn check_ppa(&self, ppa: Ppa) -> Result<(), NandError> {
        let limit = self.params.geometry.pages();
        if ppa.0 < limit {
            Ok(())
        } else {
            Err(NandError::OutOfRange {
                what: "page",
                index: ppa.0.into(),
                limit: limit.into(),
            })
        }
    }

    pub(crate) fn check_block(&self, block: BlockId) -> Result<(), NandError> {
        let limit = self.params.geometry.blocks();
        if block.0 < limit {
            Ok(())
        } else {
            Err(NandError::OutOfRange {
                what: "block",
                index: block.0.into(),
                limit: limit.into(),
            })
        }
    }

    /// Programs allowed on this page between erases (0: the page cannot be programmed).
    pub fn nop_of(&self, ppa: Ppa) -> u8 {
        let g = &self.params.geometry;
        let block = g.block_of(ppa);
        let lsb = g.page_in_block(ppa).is_multiple_of(2);
        match (self.params.cell, self.mode[block.0 as usize]) {
            (CellType::Slc, _) => self.params.nop,
            (CellType::Mlc, BlockMode::Normal) => 1,
            (CellType::Mlc, BlockMode::PSlc) => {
                if lsb {
                    self.params.nop
                } else {
                    0
                }
            }
            (CellType::Mlc, BlockMode::OddMlc) => {
                if lsb {
                    self.params.nop
                } else {
                    1
                }
            }
        }
    }

    /// Whether a page can be programmed at all in its block's current mode.
    pub fn programmable(&self, ppa: Ppa) -> bool {
        self.nop_of(ppa) > 0
    }

    pub fn is_bad(&self, block: BlockId) -> bool {
        self.flags[block.0 as usize] & BLK_BAD != 0
    }
    pub fn is_unstable(&self, block: BlockId) -> bool {
        self.flags[block.0 as usize] & BLK_UNSTABLE != 0
    }
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_count[block.0 as usize]
    }
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    pub fn block_mode(&self, block: BlockId) -> BlockMode {
        self.mode[block.0 as usize]
    }
    pub fn program_count(&self, ppa: Ppa) -> u8 {
        self.np(ppa.0 as usize)
    }
    pub fn is_erased(&self, ppa: Ppa) -> bool {
        self.st(ppa.0 as usize) & ST_MASK == ST_ERASED
    }
    /// The highest programmed page of a block, if any.
    pub fn last_programmed(&self, block: BlockId) -> Option<u32> {
        let lp = self.last_prog[block.0 as usize];
        (lp != NO_PAGE).then_some(u32::from(lp))
    }

    fn data_range(&self, ppa: Ppa) -> std::ops::Range<usize> {
        let n = self.params.geometry.page_bytes as usize;
        let s = ppa.0 as usize * n;
        s..s + n
    }
    fn body_bytes(&self) -> usize {
        (self.params.geometry.page_bytes - self.params.append_bytes) as usize
    }

    /// Tag mode: the stored payload bytes of page `i` (empty if none).
    #[inline]
    fn payload(&self, i: usize) -> &[u8] {
        if self.st(i) & HAS_PAYLOAD == 0 {
            return &[];
        }
        self.payloads.get(i as u32).unwrap_or(&[])
    }

    /// Hints the CPU to fetch `ppa`'s page record (a read or program of it follows soon).
    /// A record is `stride` bytes at any offset, so it may straddle two cache lines (a
    /// quarter of them do at the `none` protocol's 24 bytes): both ends are fetched, or a
    /// read's OOB check (the tombstone byte) still waited on memory. Changes speed only.
    #[inline]
    pub fn prefetch_record(&self, ppa: Ppa) {
        let s = ppa.0 as usize * self.stride;
        if let Some(b) = self.rec.get(s) {
            sim::mem::prefetch(b);
        }
        if let Some(b) = self.rec.get(s + self.stride - 1) {
            sim::mem::prefetch(b);
        }
    }

    /// Hints the CPU to fetch what a first program of `ppa` checks and updates: its page
    /// record and its block's flags, cell mode and highest programmed page. An FTL calls it
    /// for the page its next write will most likely program, long before that write (each
    /// allocation head comes round again only after a write to every other parallel unit,
    /// by when these lines have left the cache). Changes speed only.
    #[inline]
    pub fn prefetch_program(&self, ppa: Ppa) {
        self.prefetch_record(ppa);
        let b = (ppa.0 / self.params.geometry.pages_per_block.max(1)) as usize;
        if let Some(f) = self.flags.get(b) {
            sim::mem::prefetch(f);
        }
        if let Some(m) = self.mode.get(b) {
            sim::mem::prefetch(m);
        }
        if let Some(l) = self.last_prog.get(b) {
            sim::mem::prefetch(l);
        }
    }

    /// Calls `f` with the tag of every programmed, readable page that holds one (a tagged
    /// page in either data mode; pages of raw bytes and uncorrectable pages carry none), in
    /// page order: every tag a read of the medium can return now.
    pub fn for_each_tag(&self, mut f: impl FnMut(u64)) {
        if self.stride == 0 {
            return;
        }
        for i in 0..self.rec.len() / self.stride {
            let st = self.st(i);
            let m = st & ST_MASK;
            if m == ST_ERASED || m == ST_UNCORRECTABLE || st & KIND_BYTES != 0 {
                continue;
            }
            f(self.tag_of(i));
        }
    }

    /// Reads a page's current contents (no timing; see `Nand::read`).
    pub fn view(&self, ppa: Ppa) -> PageView<'_> {
        let i = ppa.0 as usize;
        match self.st(i) & ST_MASK {
            ST_ERASED => PageView::Erased,
            ST_UNCORRECTABLE => PageView::Uncorrectable,
            _ => {
                let oob = self.oob_at(ppa.0 as usize);
                let bytes_kind = self.st(i) & KIND_BYTES != 0;
                let data = match (self.params.data_mode, bytes_kind) {
                    (DataMode::Full, true) => DataRef::Bytes(&self.data[self.data_range(ppa)]),
                    (DataMode::Full, false) => {
                        let page = &self.data[self.data_range(ppa)];
                        let body = self.body_bytes();
                        debug_assert!(
                            tag_pattern_matches(self.tag_of(i), &page[..body]),
                            "tag pattern of {ppa} corrupted in memory"
                        );
                        DataRef::Tag {
                            tag: self.tag_of(i),
                            tail: &page[body..],
                        }
                    }
                    (DataMode::Tag, true) => DataRef::Bytes(self.payload(i)),
                    (DataMode::Tag, false) => DataRef::Tag {
                        tag: self.tag_of(i),
                        tail: self.payload(i),
                    },
                };
                PageView::Programmed { data, oob }
            }
        }
    }

    /// The OOB bytes of a page (all 0xFF if erased, `None` if uncorrectable).
    pub fn oob(&self, ppa: Ppa) -> Option<&[u8]> {
        match self.st(ppa.0 as usize) & ST_MASK {
            ST_UNCORRECTABLE => None,
            ST_ERASED => Some(&self.erased_oob),
            _ => Some(self.oob_at(ppa.0 as usize)),
        }
    }

    /// Checks a first program without applying it.
    pub(crate) fn check_program(
        &self,
        ppa: Ppa,
        content: &Content,
        oob: &[u8],
        enforce_order: bool,
    ) -> Result<(), NandError> {
        self.check_ppa(ppa)?;
        let g = &self.params.geometry;
        let block = g.block_of(ppa);
        let b = block.0 as usize;
        if self.flags[b] & BLK_BAD != 0 {
            return Err(NandError::BadBlock { block });
        }
        if self.flags[b] & BLK_UNSTABLE != 0 {
            return Err(NandError::UnstableBlock { block });
        }
        if oob.len() != self.params.oob_used as usize {
            return Err(NandError::SizeMismatch {
                what: "oob",
                got: oob.len(),
                expected: self.params.oob_used as usize,
            });
        }
        if let Content::TagTail(_, tail) = content {
            if tail.len() > self.params.append_bytes as usize {
                return Err(NandError::SizeMismatch {
                    what: "append-area bytes",
                    got: tail.len(),
                    expected: self.params.append_bytes as usize,
                });
            }
        }
        if let Content::Bytes(bytes) = content {
            if bytes.len() > g.page_bytes as usize {
                return Err(NandError::SizeMismatch {
                    what: "page data",
                    got: bytes.len(),
                    expected: g.page_bytes as usize,
                });
            }
        }
        let i = ppa.0 as usize;
        if self.st(i) & ST_MASK != ST_ERASED || self.np(i) != 0 {
            return Err(NandError::NotErased { ppa });
        }
        if self.nop_of(ppa) == 0 {
            return Err(NandError::PageNotProgrammable {
                ppa,
                mode: self.mode[b].name(),
            });
        }
        if enforce_order && self.params.in_order_program {
            let lp = self.last_prog[b];
            let page = g.page_in_block(ppa);
            if lp != NO_PAGE && page <= u32::from(lp) {
                return Err(NandError::OutOfOrder {
                    ppa,
                    last_programmed: u32::from(lp),
                });
            }
        }
        Ok(())
    }

    /// First program of an erased page. `enforce_order` is off only when the crash checker
    /// replays a subset of concurrent programs.
    pub fn program(
        &mut self,
        ppa: Ppa,
        content: &Content,
        oob: &[u8],
        enforce_order: bool,
    ) -> Result<(), NandError> {
        self.check_program(ppa, content, oob, enforce_order)?;
        self.apply_program(ppa, content, oob);
        Ok(())
    }

    fn note_programmed(&mut self, ppa: Ppa) {
        let g = &self.params.geometry;
        let b = g.block_of(ppa).0 as usize;
        let page = g.page_in_block(ppa) as u16;
        if self.last_prog[b] == NO_PAGE || page > self.last_prog[b] {
            self.last_prog[b] = page;
        }
    }

    pub(crate) fn apply_program(&mut self, ppa: Ppa, content: &Content, oob: &[u8]) {
        let i = ppa.0 as usize;
        self.set_np(i, 1);
        self.oob_at_mut(ppa.0 as usize).copy_from_slice(oob);
        match content {
            Content::Tag(t) => {
                self.set_st(i, ST_PROGRAMMED);
                self.set_tag(i, *t);
                if self.params.data_mode == DataMode::Full {
                    let body = self.body_bytes();
                    let r = self.data_range(ppa);
                    fill_tag_pattern(*t, &mut self.data[r.start..r.start + body]);
                }
            }
            Content::TagTail(t, tail) => {
                self.set_st(i, ST_PROGRAMMED);
                self.set_tag(i, *t);
                let body = self.body_bytes();
                match self.params.data_mode {
                    DataMode::Full => {
                        let r = self.data_range(ppa);
                        fill_tag_pattern(*t, &mut self.data[r.start..r.start + body]);
                        self.data[r.start + body..r.start + body + tail.len()]
                            .copy_from_slice(tail);
                    }
                    DataMode::Tag => {
                        let trimmed =
                            tail.len() - tail.iter().rev().take_while(|x| **x == 0xFF).count();
                        if trimmed > 0 {
                            self.payloads.insert(ppa.0, tail[..trimmed].into());
                            // The page-state bit that lets reads skip the payload map (a
                            // speed-up); missing it lost GC-copied delta areas (found by
                            // host/tests/ipa.rs on odd-MLC once appends met that speed-up).
                            self.set_st(i, ST_PROGRAMMED | HAS_PAYLOAD);
                        }
                    }
                }
            }
            Content::Bytes(b) => {
                self.set_st(i, ST_PROGRAMMED | KIND_BYTES);
                self.set_tag(i, 0);
                match self.params.data_mode {
                    DataMode::Full => {
                        let r = self.data_range(ppa);
                        self.data[r.start..r.start + b.len()].copy_from_slice(b);
                    }
                    DataMode::Tag => {
                        let trimmed = b.len() - b.iter().rev().take_while(|x| **x == 0xFF).count();
                        if trimmed > 0 {
                            self.payloads.insert(ppa.0, b[..trimmed].into());
                            self.set_st(i, ST_PROGRAMMED | KIND_BYTES | HAS_PAYLOAD);
                        }
                    }
                }
            }
        }
        self.note_programmed(ppa);
    }

    /// Checks a partial program (a reprogram of OOB bytes and/or data bytes) without applying.
    pub(crate) fn check_partial(
        &self,
        ppa: Ppa,
        oob: Option<&[u8]>,
        patch: Option<(u32, &[u8])>,
    ) -> Result<(), NandError> {
        self.check_ppa(ppa)?;
        let g = &self.params.geometry;
        let block = g.block_of(ppa);
        let b = block.0 as usize;
        if self.flags[b] & BLK_BAD != 0 {
            return Err(NandError::BadBlock { block });
        }
        let i = ppa.0 as usize;
        match self.st(i) & ST_MASK {
            ST_ERASED => return Err(NandError::NotProgrammed { ppa }),
            ST_UNCORRECTABLE => return Err(NandError::Uncorrectable { ppa }),
            _ => {}
        }
        let nop = self.nop_of(ppa);
        if self.np(i) >= nop {
            return Err(NandError::NopExceeded { ppa, nop });
        }
        if let Some(new) = oob {
            if new.len() != self.params.oob_used as usize {
                return Err(NandError::SizeMismatch {
                    what: "oob",
                    got: new.len(),
                    expected: self.params.oob_used as usize,
                });
            }
            if let Some(off) = first_set_violation(self.oob_at(ppa.0 as usize), new) {
                return Err(NandError::BitsWouldSet {
                    ppa,
                    offset: off as u32,
                });
            }
        }
        if let Some((off, bytes)) = patch {
            let page_bytes = g.page_bytes as usize;
            let end = off as usize + bytes.len();
            if end > page_bytes {
                return Err(NandError::SizeMismatch {
                    what: "patch end",
                    got: end,
                    expected: page_bytes,
                });
            }
            let bytes_kind = self.st(i) & KIND_BYTES != 0;
            if !bytes_kind && (off as usize) < self.body_bytes() {
                return Err(NandError::BitsWouldSet { ppa, offset: off });
            }
            let old = self.current_bytes(ppa, off as usize, bytes.len());
            if let Some(p) = first_set_violation(&old, bytes) {
                return Err(NandError::BitsWouldSet {
                    ppa,
                    offset: off + p as u32,
                });
            }
        }
        Ok(())
    }

    /// Bytes `[off, off+len)` of a programmed page's data area as stored now.
    fn current_bytes(&self, ppa: Ppa, off: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0xFF; len];
        match self.params.data_mode {
            DataMode::Full => {
                let r = self.data_range(ppa);
                out.copy_from_slice(&self.data[r.start + off..r.start + off + len]);
            }
            DataMode::Tag => {
                let bytes_kind = self.st(ppa.0 as usize) & KIND_BYTES != 0;
                let base = if bytes_kind { 0 } else { self.body_bytes() };
                if let Some(stored) = self.payloads.get(ppa.0) {
                    for (k, o) in out.iter_mut().enumerate() {
                        if let Some(b) = (off + k).checked_sub(base).and_then(|j| stored.get(j)) {
                            *o = *b;
                        }
                    }
                }
            }
        }
        out
    }

    fn write_bytes(&mut self, ppa: Ppa, off: usize, bytes: &[u8]) {
        match self.params.data_mode {
            DataMode::Full => {
                let r = self.data_range(ppa);
                self.data[r.start + off..r.start + off + bytes.len()].copy_from_slice(bytes);
            }
            DataMode::Tag => {
                let bytes_kind = self.st(ppa.0 as usize) & KIND_BYTES != 0;
                let base = if bytes_kind { 0 } else { self.body_bytes() };
                let rel = off - base;
                let mut v: Vec<u8> = self
                    .payloads
                    .get(ppa.0)
                    .map(|b| b.to_vec())
                    .unwrap_or_default();
                if v.len() < rel + bytes.len() {
                    v.resize(rel + bytes.len(), 0xFF);
                }
                v[rel..rel + bytes.len()].copy_from_slice(bytes);
                self.payloads.insert(ppa.0, v.into_boxed_slice());
                let i = ppa.0 as usize;
                self.set_st(i, self.st(i) | HAS_PAYLOAD);
            }
        }
    }

    /// Partial programming: reprogram the OOB area (given as its full new contents) and/or a
    /// range of the data area, clearing bits only, within the page's NOP.
    pub fn partial_program(
        &mut self,
        ppa: Ppa,
        oob: Option<&[u8]>,
        patch: Option<(u32, &[u8])>,
    ) -> Result<(), NandError> {
        self.check_partial(ppa, oob, patch)?;
        self.apply_partial(ppa, oob, patch);
        Ok(())
    }

    pub(crate) fn apply_partial(
        &mut self,
        ppa: Ppa,
        oob: Option<&[u8]>,
        patch: Option<(u32, &[u8])>,
    ) {
        let i = ppa.0 as usize;
        self.set_np(i, self.np(i).saturating_add(1));
        if let Some(new) = oob {
            self.oob_at_mut(ppa.0 as usize).copy_from_slice(new);
        }
        if let Some((off, bytes)) = patch {
            self.write_bytes(ppa, off as usize, bytes);
        }
    }

    /// Erases a block: every page back to all 1s, one more P/E cycle. Returns whether the
    /// block has now reached its endurance and gone bad.
    pub fn erase(&mut self, block: BlockId) -> Result<bool, NandError> {
        self.check_block(block)?;
        let b = block.0 as usize;
        if self.flags[b] & BLK_BAD != 0 {
            return Err(NandError::BadBlock { block });
        }
        self.wipe_block(block);
        self.flags[b] &= !BLK_UNSTABLE;
        self.erase_count[b] = self.erase_count[b].saturating_add(1);
        if self.erase_count[b] >= self.params.endurance {
            self.flags[b] |= BLK_BAD;
            return Ok(true);
        }
        Ok(false)
    }

    fn wipe_block(&mut self, block: BlockId) {
        let g = &self.params.geometry;
        let first = g.first_page(block).0;
        let n = g.pages_per_block;
        let (fi, ni) = (first as usize, n as usize);
        let st = self.stride;
        self.rec[fi * st..(fi + ni) * st].fill(0);
        match self.params.data_mode {
            DataMode::Full => {
                let pb = g.page_bytes as usize;
                self.data[fi * pb..(fi + ni) * pb].fill(0xFF);
            }
            DataMode::Tag => {
                if !self.payloads.is_empty() {
                    self.payloads.clear_block(block.0 as usize);
                }
            }
        }
        self.last_prog[block.0 as usize] = NO_PAGE;
    }

    /// Sets a block's cell mode; the block must be erased (every page) and MLC.
    pub fn set_mode(&mut self, block: BlockId, mode: BlockMode) -> Result<(), NandError> {
        self.check_block(block)?;
        if self.params.cell == CellType::Slc && mode != BlockMode::Normal {
            return Err(NandError::BadMode {
                block,
                reason: "SLC blocks have no pSLC or odd-MLC mode",
            });
        }
        if self.last_prog[block.0 as usize] != NO_PAGE {
            return Err(NandError::BadMode {
                block,
                reason: "block is not erased",
            });
        }
        self.mode[block.0 as usize] = mode;
        Ok(())
    }

    /// Applies an interrupted operation (see `TornKind`). Used only by the crash checker.
    pub fn apply_torn(&mut self, op: &crate::OpKind, torn: TornKind) -> Result<(), NandError> {
        use crate::OpKind;
        match (op, torn) {
            (OpKind::Program { ppa, .. }, TornKind::Program) => {
                self.check_ppa(*ppa)?;
                let i = ppa.0 as usize;
                if self.st(i) & ST_MASK == ST_ERASED {
                    // Its OOB bytes were erased ones; an uncorrectable record keeps what it
                    // held (a file image stores them).
                    self.oob_at_mut(i).fill(0xFF);
                }
                self.set_st(i, ST_UNCORRECTABLE);
                self.set_np(i, 1);
                self.note_programmed(*ppa);
                Ok(())
            }
            (OpKind::PartialProgram { ppa, oob, patch }, TornKind::Partial { seed }) => {
                self.check_ppa(*ppa)?;
                if self.st(ppa.0 as usize) & ST_MASK != ST_PROGRAMMED {
                    return Ok(());
                }
                let mut rng = sim::Rng::new(seed);
                let mut half = |old: &[u8], new: &[u8]| -> Vec<u8> {
                    old.iter()
                        .zip(new)
                        .map(|(o, n)| {
                            let mut v = *o;
                            for bit in 0..8 {
                                let m = 1u8 << bit;
                                if o & m != 0 && n & m == 0 && rng.chance(0.5) {
                                    v &= !m;
                                }
                            }
                            v
                        })
                        .collect()
                };
                let new_oob = oob
                    .as_ref()
                    .map(|new| half(self.oob_at(ppa.0 as usize), new));
                let new_patch = patch.as_ref().map(|(off, bytes)| {
                    let old = self.current_bytes(*ppa, *off as usize, bytes.len());
                    (*off, half(&old, bytes))
                });
                self.apply_partial(
                    *ppa,
                    new_oob.as_deref(),
                    new_patch.as_ref().map(|(o, b)| (*o, &b[..])),
                );
                Ok(())
            }
            (OpKind::Erase { block }, TornKind::EraseUnstable | TornKind::EraseGarbled) => {
                self.check_block(*block)?;
                let b = block.0 as usize;
                if torn == TornKind::EraseUnstable {
                    self.wipe_block(*block);
                } else {
                    let g = self.params.geometry.clone();
                    let first = g.first_page(*block).0;
                    for p in first..first + g.pages_per_block {
                        if self.st(p as usize) & ST_MASK != ST_ERASED {
                            self.set_st(p as usize, ST_UNCORRECTABLE);
                        }
                    }
                }
                self.flags[b] |= BLK_UNSTABLE;
                self.erase_count[b] = self.erase_count[b].saturating_add(1);
                Ok(())
            }
            _ => Err(NandError::Config {
                key: "torn",
                reason: format!("{torn:?} does not apply to {}", op.name()),
            }),
        }
    }

    /// Replays a logged operation in full. Programs skip the in-order rule, because the
    /// crash checker may persist a later page of a block without an earlier one.
    pub fn apply(&mut self, op: &crate::OpKind) -> Result<(), NandError> {
        use crate::OpKind;
        match op {
            OpKind::Program { ppa, content, oob } => self.program(*ppa, content, oob, false),
            OpKind::PartialProgram { ppa, oob, patch } => self.partial_program(
                *ppa,
                oob.as_deref(),
                patch.as_ref().map(|(o, b)| (*o, &b[..])),
            ),
            OpKind::Erase { block } => self.erase(*block).map(|_| ()),
            OpKind::SetMode { block, mode } => self.set_mode(*block, *mode),
        }
    }

    /// Recomputes each block's highest programmed page from the pages themselves.
    pub(crate) fn recompute_last_programmed(&mut self) {
        let g = self.params.geometry.clone();
        for b in 0..g.blocks() {
            let first = g.first_page(BlockId(b)).0 as usize;
            let last = (0..g.pages_per_block as usize)
                .rev()
                .find(|k| self.st(first + k) & ST_MASK != ST_ERASED);
            self.last_prog[b as usize] = last.map_or(NO_PAGE, |k| k as u16);
        }
    }

    /// Verifies the image's internal consistency; returns the first problem found.
    pub fn check_invariants(&self) -> Result<(), String> {
        let g = &self.params.geometry;
        for b in 0..g.blocks() {
            let block = BlockId(b);
            let mut last = NO_PAGE;
            for pg in 0..g.pages_per_block {
                let ppa = g.ppa(block, pg);
                let i = ppa.0 as usize;
                let st = self.st(i) & ST_MASK;
                if st == ST_ERASED {
                    if self.np(i) != 0 {
                        return Err(format!("{ppa} erased with {} programs", self.np(i)));
                    }
                    let s = i * self.stride;
                    if self.rec[s..s + self.stride].iter().any(|b| *b != 0) {
                        return Err(format!("{ppa} erased but its record is not all zero"));
                    }
                    if self.payloads.contains_key(ppa.0) {
                        return Err(format!("{ppa} erased but has a payload"));
                    }
                } else {
                    if st == ST_PROGRAMMED
                        && (self.st(i) & HAS_PAYLOAD != 0) != self.payloads.contains_key(ppa.0)
                    {
                        return Err(format!(
                            "{ppa}: payload flag {} but payload {}",
                            self.st(i) & HAS_PAYLOAD != 0,
                            self.payloads.contains_key(ppa.0)
                        ));
                    }
                    last = pg as u16;
                    if self.np(i) == 0 {
                        return Err(format!("{ppa} programmed with zero program count"));
                    }
                }
            }
            if last != self.last_prog[b as usize] {
                return Err(format!(
                    "{block}: last programmed page {} recorded as {}",
                    last, self.last_prog[b as usize]
                ));
            }
        }
        Ok(())
    }
}
