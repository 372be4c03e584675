//! File-backed images: the device state written through to a file after every operation, so
//! that a process killed mid-run leaves an image another process can open and recover.
//!
//! Layout (little-endian):
//!
//! ```text
//! offset 0      magic "CMLBNAND" (8 bytes)
//!        8      format version u32 (= 4)
//!        12     header JSON length u32 (n)
//!        16     header JSON: {"params": ImageParams, "label": string}   (n bytes)
//!        16+n   CRC-32 of bytes [0, 16+n) u32
//!        ...    zero padding up to the next 4 KiB multiple
//! block table:  blocks × 16 bytes: erase_count u32, mode u8, flags u8, last_prog u16,
//!               CRC-32 u32 of (block number u32 ++ those 8 bytes), 4 zero bytes;
//!               zero padding up to the next 4 KiB multiple
//! page table:   pages × (8 tag + oob_used + page_bytes + 1 nprog + 4 CRC + 1 state); the
//!               CRC-32 is of (page number u32 ++ tag ++ OOB ++ data ++ nprog ++ state)
//! journal:      page number u32, its block's erase count u32, a page record (as above),
//!               CRC-32 u32 of those: the last page record written (double write)
//! end of file:  exactly here; anything after it, or a file shorter, is refused
//! ```
//!
//! Only `Full` data mode can be file-backed (the tag mode's side map has no fixed place).
//! Writes are not fsynced: the image survives a process kill, not an operating-system crash.
//!
//! A kill is a power cut for the file, so the format is built to be cut anywhere. Linux may
//! stop a write at any 4 KiB page of the file; the bytes before the cut are written, the rest
//! are not. Each page record therefore ends with its state byte: a record cut short still
//! reads as erased (a lost program), never as programmed with half its data. An erase first
//! writes its block record with the unstable flag, then the erased pages, then the final
//! block record; a cut anywhere in between (even inside a page record, whose tag is then new
//! and its data old) leaves a block marked unstable, which opening turns into the crash
//! model's garbled torn erase: every page not fully erased reads as uncorrectable and the
//! block must be erased again before use. The stored `last_prog` is advisory: opening
//! recomputes it from the pages.
//! Page records carry a CRC-32 (the ECC model of the file: a flipped bit in a page's tag,
//! OOB, data, program count or state is caught when the image is opened). A partial program
//! rewrites a programmed page's record in place, and a kill may cut that write short, which
//! the crash model allows (a torn partial program leaves a readable page, each of its bits
//! old or new) but which no in-place checksum can tell from a flipped bit. So every page
//! record is first written to the journal, with its own CRC and its block's erase count, and
//! only then in place: opening replays a valid journal whose erase count matches its block
//! (the write completes, as an in-flight program may) and writes it back in place, so a
//! record that still fails its CRC after that was not cut by a kill: the image is refused
//! (exit 2), naming the page. A journal cut short fails its own CRC and is ignored (its
//! in-place write had not begun). An erase increments the erase count before it writes
//! anything, so a journal entry from before it is never replayed over the erased block.
//! Records of erased pages (state 0) hold no checked bytes: a first program cut before its
//! state byte leaves a mix there, which reads as erased.
//! Opening validates the header CRC and every record, so a corrupt image is an error. Block
//! records carry their own CRC (with the block number, so a record copied to another slot is
//! caught too): erase counts and flags have no other check, and a flipped bit there would
//! silently change wear leveling or mark a block bad. A block record is 16 bytes
//! at a 16-byte-aligned offset, so it never straddles a 4 KiB page of the file and a kill
//! writes it whole or not at all.

use crate::image::{
    tag_pattern_matches, ImageParams, BLK_UNSTABLE_PUB, KIND_MASK_PUB, ST_MASK_PUB,
    ST_UNCORRECTABLE_PUB,
};
use crate::{BlockId, BlockMode, DataMode, NandError, NandImage, Ppa};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

const MAGIC: &[u8; 8] = b"CMLBNAND";
const VERSION: u32 = 4;
/// Bytes of a block record.
const BLOCK_REC: u64 = 16;

fn io(e: std::io::Error) -> NandError {
    NandError::Io {
        reason: e.to_string(),
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    params: ImageParams,
    label: String,
}

pub(crate) struct ImageFile {
    file: File,
    block_off: u64,
    page_off: u64,
    page_rec: u64,
    journal_off: u64,
}

fn mode_byte(m: BlockMode) -> u8 {
    match m {
        BlockMode::Normal => 0,
        BlockMode::PSlc => 1,
        BlockMode::OddMlc => 2,
    }
}

/// Bytes of a page record besides its OOB and data: tag 8, nprog 1, CRC 4, state 1.
const PAGE_REC_EXTRA: u64 = 14;
/// Bytes of the journal besides its page record: page number, erase count, CRC.
const JOURNAL_EXTRA: u64 = 12;

/// (block table offset, page table offset, page record bytes, journal offset, file bytes).
fn layout(params: &ImageParams, json_len: usize) -> (u64, u64, u64, u64, u64) {
    let header = (16 + json_len + 4).next_multiple_of(4096) as u64;
    let blocks = u64::from(params.geometry.blocks());
    let page_off = header + (blocks * BLOCK_REC).next_multiple_of(4096);
    let page_rec =
        PAGE_REC_EXTRA + u64::from(params.oob_used) + u64::from(params.geometry.page_bytes);
    let journal_off = page_off + u64::from(params.geometry.pages()) * page_rec;
    let end = journal_off + JOURNAL_EXTRA + page_rec;
    (header, page_off, page_rec, journal_off, end)
}

/// The CRC of page `ppa`'s record `r` (its CRC field, 5 bytes from the end, skipped).
fn page_crc(ppa: u32, r: &[u8]) -> u32 {
    let n = r.len();
    let c = sim::crc::crc32_update(0, &ppa.to_le_bytes());
    let c = sim::crc::crc32_update(c, &r[..n - 5]);
    sim::crc::crc32_update(c, &r[n - 1..])
}

/// The CRC of a block record: its block number, then its first 8 bytes.
fn block_crc(block: BlockId, rec: &[u8]) -> u32 {
    let mut buf = [0u8; 12];
    buf[0..4].copy_from_slice(&block.0.to_le_bytes());
    buf[4..12].copy_from_slice(&rec[0..8]);
    sim::crc::crc32(&buf)
}

impl ImageFile {
    /// Creates (or truncates) `path` and writes the whole image into it.
    pub(crate) fn create(
        path: &Path,
        image: &NandImage,
        label: &str,
    ) -> Result<ImageFile, NandError> {
        if image.params.data_mode != DataMode::Full {
            return Err(NandError::Config {
                key: "nand.data_mode",
                reason: "a file-backed image needs data_mode = \"full\"".into(),
            });
        }
        let json = serde_json::to_vec(&Header {
            params: image.params.clone(),
            label: label.into(),
        })
        .map_err(|e| NandError::Io {
            reason: e.to_string(),
        })?;
        let (block_off, page_off, page_rec, journal_off, end) = layout(&image.params, json.len());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io)?;
        let mut head = Vec::with_capacity(block_off as usize);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(json.len() as u32).to_le_bytes());
        head.extend_from_slice(&json);
        let crc = sim::crc::crc32(&head);
        head.extend_from_slice(&crc.to_le_bytes());
        head.resize(block_off as usize, 0);
        file.write_all_at(&head, 0).map_err(io)?;
        let f = ImageFile {
            file,
            block_off,
            page_off,
            page_rec,
            journal_off,
        };
        let g = &image.params.geometry;
        let mut blocks = Vec::with_capacity(g.blocks() as usize * BLOCK_REC as usize);
        for b in 0..g.blocks() {
            blocks.extend_from_slice(&Self::block_record(image, BlockId(b), 0));
        }
        f.file.write_all_at(&blocks, block_off).map_err(io)?;
        let mut pages = Vec::with_capacity((page_rec * 256) as usize);
        let mut first = 0u32;
        for p in 0..g.pages() {
            pages.extend_from_slice(&Self::page_record(image, Ppa(p)));
            if pages.len() as u64 >= page_rec * 256 || p + 1 == g.pages() {
                f.file
                    .write_all_at(&pages, page_off + u64::from(first) * page_rec)
                    .map_err(io)?;
                pages.clear();
                first = p + 1;
            }
        }
        // An empty journal: zeros, which fail its CRC.
        f.file
            .write_all_at(&vec![0u8; (end - journal_off) as usize], journal_off)
            .map_err(io)?;
        Ok(f)
    }

    /// A block's record, with `extra_flags` or-ed into its flags byte.
    fn block_record(image: &NandImage, block: BlockId, extra_flags: u8) -> [u8; 16] {
        let b = block.0 as usize;
        let mut r = [0u8; 16];
        r[0..4].copy_from_slice(&image.erase_count[b].to_le_bytes());
        r[4] = mode_byte(image.mode[b]);
        r[5] = image.flags[b] | extra_flags;
        r[6..8].copy_from_slice(&image.last_prog[b].to_le_bytes());
        let crc = block_crc(block, &r[0..8]);
        r[8..12].copy_from_slice(&crc.to_le_bytes());
        r
    }

    fn page_record(image: &NandImage, ppa: Ppa) -> Vec<u8> {
        let i = ppa.0 as usize;
        let n = image.params.oob_used as usize;
        let pb = image.params.geometry.page_bytes as usize;
        let mut r = Vec::with_capacity(PAGE_REC_EXTRA as usize + n + pb);
        r.extend_from_slice(&image.tag_of(i).to_le_bytes());
        // An erased page's record holds zeros; its OOB is all 0xFF on the medium.
        match image.oob(ppa) {
            Some(oob) => r.extend_from_slice(oob),
            None => r.extend_from_slice(image.oob_at(i)),
        }
        r.extend_from_slice(&image.data[i * pb..(i + 1) * pb]);
        r.push(image.np(i));
        r.extend_from_slice(&[0; 4]);
        r.push(image.st(i));
        let crc = page_crc(ppa.0, &r);
        let at = r.len() - 5;
        r[at..at + 4].copy_from_slice(&crc.to_le_bytes());
        r
    }

    /// Writes page `ppa`'s record: to the journal first, then in place (see the module
    /// docs: a kill that cuts the second write is completed from the first when the image
    /// is opened).
    pub(crate) fn write_page(&self, image: &NandImage, ppa: Ppa) -> Result<(), NandError> {
        let rec = Self::page_record(image, ppa);
        let block = image.geometry().block_of(ppa);
        let mut j = Vec::with_capacity(rec.len() + JOURNAL_EXTRA as usize);
        j.extend_from_slice(&ppa.0.to_le_bytes());
        j.extend_from_slice(&image.erase_count[block.0 as usize].to_le_bytes());
        j.extend_from_slice(&rec);
        let crc = sim::crc::crc32(&j);
        j.extend_from_slice(&crc.to_le_bytes());
        self.file.write_all_at(&j, self.journal_off).map_err(io)?;
        self.file
            .write_all_at(&rec, self.page_off + u64::from(ppa.0) * self.page_rec)
            .map_err(io)
    }

    pub(crate) fn write_block(
        &self,
        image: &NandImage,
        block: BlockId,
        pages_too: bool,
    ) -> Result<(), NandError> {
        // An erase: until its last byte is written the block is a torn erase.
        let extra = if pages_too { BLK_UNSTABLE_PUB } else { 0 };
        let first_record = Self::block_record(image, block, extra);
        self.file
            .write_all_at(
                &first_record,
                self.block_off + u64::from(block.0) * BLOCK_REC,
            )
            .map_err(io)?;
        if pages_too {
            let g = &image.params.geometry;
            let first = g.first_page(block).0;
            let mut buf =
                Vec::with_capacity((self.page_rec * u64::from(g.pages_per_block)) as usize);
            for p in first..first + g.pages_per_block {
                buf.extend_from_slice(&Self::page_record(image, Ppa(p)));
            }
            self.file
                .write_all_at(&buf, self.page_off + u64::from(first) * self.page_rec)
                .map_err(io)?;
        }
        self.file
            .write_all_at(
                &Self::block_record(image, block, 0),
                self.block_off + u64::from(block.0) * BLOCK_REC,
            )
            .map_err(io)
    }

    /// Opens an image file, validating everything; returns the file, the image and its label.
    pub(crate) fn open(path: &Path) -> Result<(ImageFile, NandImage, String), NandError> {
        let corrupt = |reason: String| NandError::CorruptImage { reason };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let mut all = Vec::new();
        file.read_to_end(&mut all).map_err(io)?;
        if all.len() < 20 || &all[0..8] != MAGIC {
            return Err(corrupt(
                "missing magic \"CMLBNAND\": not a commitlab NAND image".into(),
            ));
        }
        let version = u32::from_le_bytes(all[8..12].try_into().unwrap_or([0; 4]));
        if version != VERSION {
            return Err(corrupt(format!(
                "format version {version}, expected {VERSION}"
            )));
        }
        let json_len = u32::from_le_bytes(all[12..16].try_into().unwrap_or([0; 4])) as usize;
        if json_len > 1 << 20 || all.len() < 16 + json_len + 4 {
            return Err(corrupt(format!(
                "header length {json_len} runs past the end of the file"
            )));
        }
        let crc_stored = u32::from_le_bytes(
            all[16 + json_len..20 + json_len]
                .try_into()
                .unwrap_or([0; 4]),
        );
        let crc = sim::crc::crc32(&all[..16 + json_len]);
        if crc != crc_stored {
            return Err(corrupt(format!(
                "header CRC {crc_stored:#010x} does not match {crc:#010x}"
            )));
        }
        let header: Header = serde_json::from_slice(&all[16..16 + json_len])
            .map_err(|e| corrupt(format!("header JSON: {e}")))?;
        header
            .params
            .validate()
            .map_err(|e| corrupt(format!("header parameters: {e}")))?;
        if header.params.data_mode != DataMode::Full {
            return Err(corrupt(
                "header says tag data mode, which files cannot hold".into(),
            ));
        }
        let params = header.params;
        let (block_off, page_off, page_rec, journal_off, need) = layout(&params, json_len);
        let g = params.geometry.clone();
        if all.len() as u64 != need {
            return Err(corrupt(format!(
                "file is {} bytes, the geometry in its header makes exactly {need}{}",
                all.len(),
                if (all.len() as u64) > need {
                    " (bytes appended after the image)"
                } else {
                    " (truncated)"
                }
            )));
        }
        // The journal: the last page record written. Replayed (and written back in place)
        // when valid and not from before its block's last erase.
        let replayed = {
            let j = &all[journal_off as usize..need as usize];
            let n = j.len();
            let crc_stored = u32::from_le_bytes([j[n - 4], j[n - 3], j[n - 2], j[n - 1]]);
            let ppa = u32::from_le_bytes([j[0], j[1], j[2], j[3]]);
            let erases = u32::from_le_bytes([j[4], j[5], j[6], j[7]]);
            if crc_stored == sim::crc::crc32(&j[..n - 4]) && ppa < g.pages() {
                let b = (ppa / g.pages_per_block) as usize;
                let at = block_off as usize + b * BLOCK_REC as usize;
                let block_erases =
                    u32::from_le_bytes([all[at], all[at + 1], all[at + 2], all[at + 3]]);
                (block_erases == erases).then(|| (ppa, j[8..n - 4].to_vec()))
            } else {
                None
            }
        };
        if let Some((ppa, rec)) = &replayed {
            let at = page_off as usize + *ppa as usize * page_rec as usize;
            all[at..at + page_rec as usize].copy_from_slice(rec);
        }
        let mut image = NandImage::new(params.clone())?;
        for b in 0..g.blocks() as usize {
            let at = block_off as usize + b * BLOCK_REC as usize;
            let r = &all[at..at + BLOCK_REC as usize];
            let crc_stored = u32::from_le_bytes([r[8], r[9], r[10], r[11]]);
            let crc = block_crc(BlockId(b as u32), &r[0..8]);
            if crc != crc_stored || r[12..16] != [0; 4] {
                return Err(corrupt(format!(
                    "block {b}: block record checksum {crc_stored:#010x} does not match {crc:#010x} (erase count, mode or flags corrupt)"
                )));
            }
            image.erase_count[b] = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
            image.mode[b] = match r[4] {
                0 => BlockMode::Normal,
                1 => BlockMode::PSlc,
                2 => BlockMode::OddMlc,
                m => return Err(corrupt(format!("block {b}: mode byte {m}"))),
            };
            if r[5] & !3 != 0 {
                return Err(corrupt(format!("block {b}: flags byte {:#x}", r[5])));
            }
            image.flags[b] = r[5];
            image.last_prog[b] = u16::from_le_bytes([r[6], r[7]]);
        }
        let n = params.oob_used as usize;
        let pb = g.page_bytes as usize;
        let body = (g.page_bytes - params.append_bytes) as usize;
        for p in 0..g.pages() as usize {
            let r = &all[page_off as usize + p * page_rec as usize..][..page_rec as usize];
            let np = r[8 + n + pb];
            let st = r[page_rec as usize - 1];
            if st & !(ST_MASK_PUB | KIND_MASK_PUB) != 0 || st & ST_MASK_PUB > 2 {
                return Err(corrupt(format!("page {p}: state byte {st:#x}")));
            }
            if st == 0 {
                // Erased, or a program cut short before its state byte: nothing was written.
                continue;
            }
            if image.flags[p / g.pages_per_block as usize] & BLK_UNSTABLE_PUB != 0 {
                // A page of a torn erase (perhaps cut inside this very record): its bytes
                // are a mix of old and erased, so it reads as uncorrectable.
                let rec = image.record_mut(p);
                rec[0] = ST_UNCORRECTABLE_PUB;
                rec[1] = np.max(1);
                rec[10..].fill(0xFF);
                continue;
            }
            let crc_at = page_rec as usize - 5;
            let crc_stored =
                u32::from_le_bytes([r[crc_at], r[crc_at + 1], r[crc_at + 2], r[crc_at + 3]]);
            let crc = page_crc(p as u32, r);
            if crc != crc_stored {
                // Not a kill's torn write (the journal completed that one): the medium's
                // ECC would report the page uncorrectable; the file is corrupt.
                return Err(corrupt(format!(
                    "page {p}: record checksum {crc_stored:#010x} does not match {crc:#010x} (an uncorrectable ECC error: tag, OOB, data or program count corrupt)"
                )));
            }
            let rec = image.record_mut(p);
            rec[0] = st;
            rec[1] = np;
            rec[2..10].copy_from_slice(&r[0..8]);
            rec[10..10 + n].copy_from_slice(&r[8..8 + n]);
            image.data[p * pb..(p + 1) * pb].copy_from_slice(&r[8 + n..8 + n + pb]);
            if st == 1 && !tag_pattern_matches(image.tag_of(p), &image.data[p * pb..p * pb + body])
            {
                return Err(corrupt(format!(
                    "page {p}: data does not match its content tag"
                )));
            }
        }
        image.recompute_last_programmed();
        image
            .check_invariants()
            .map_err(|e| corrupt(format!("inconsistent records: {e}")))?;
        if let Some((ppa, rec)) = &replayed {
            // Completed in place now: the next page written overwrites the journal.
            file.write_all_at(rec, page_off + u64::from(*ppa) * page_rec)
                .map_err(io)?;
        }
        Ok((
            ImageFile {
                file,
                block_off,
                page_off,
                page_rec,
                journal_off,
            },
            image,
            header.label,
        ))
    }
}
