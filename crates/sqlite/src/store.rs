//! `DeviceFs`: the three files SQLite keeps (database, rollback journal, WAL) laid out in
//! extents of a commitlab device's logical space, with their sizes kept on the device.
//!
//! ## Layout of the logical space (one LPN = one flash page of `P` bytes)
//!
//! ```text
//! LPN 0, 1            superblock slots A and B (written alternately, newest valid wins)
//! LPN 2 ..            database extent   (db_pages LPNs)
//!        ..           journal extent    (journal_pages LPNs)
//!        ..           WAL extent        (wal_pages LPNs)
//! ```
//!
//! A file's byte `o` lives in LPN `start + o / P` at offset `o % P`. The extents are fixed
//! when the device is formatted, so the extent map never changes; it is repeated in every
//! superblock so that a device can be opened from the medium alone.
//!
//! ## Superblock (one flash page; all integers little-endian)
//!
//! ```text
//! 0..8     magic "CLSQLFS1"
//! 8..16    seq: u64, +1 per superblock written
//! 16..20   P: the flash page size the layout was made for
//! 20..24   file count: u32 = 3
//! 24..96   3 × 24 bytes, database / journal / WAL:
//!            start LPN u32, extent pages u32, size in bytes u64, exists u8, 7 bytes 0
//! 96..100  CRC-32 of bytes 0..96
//! 100..P   zero
//! ```
//!
//! ## Data
//! The transactional protocols' WRITE carries a 64-bit content tag, not bytes (the device
//! runs in `tag` or `full` data mode, where `full` stores a tag-derived pattern). Each page
//! version the VFS writes gets a fresh tag, unique for the run, and its bytes go into a
//! version table indexed by tag (`Versions`): the tag on the medium names exactly one byte
//! image, so what the device recovers for an LPN (a tag, or nothing) determines the bytes
//! the file reads. The table is the data area's content kept beside the image; a torn
//! program leaves the page uncorrectable or unmapped on the medium, never another tag.
//!
//! ## Crash argument
//! - *Plain writes* (`write_plain`, one-page transactions on every protocol): xWrite
//!   merges into whole flash pages held in a write-back cache (a file system's page cache:
//!   writes to one flash page coalesce); xSync issues every dirty page, waits for every
//!   write issued (BARRIER) and then, if a size or existence changed, writes the superblock
//!   and waits for its ack. So a durable size never covers bytes that are not durable: the
//!   bytes were acked before the superblock naming that size was issued. Dirty pages not
//!   yet issued are lost in a crash, as a page cache's are; more than `write_back_pages`
//!   of them are issued without waiting.
//! - *Superblock*: written to the slot the last durable one is not in, with seq + 1. A
//!   crash during the program leaves that slot old, torn (CRC or uncorrectable) or new;
//!   the other slot still holds the previous durable superblock, so opening finds either.
//! - *Truncate and delete* write the superblock and wait for it before returning, so
//!   SQLite's commit points in TRUNCATE and DELETE journal modes (the journal truncated or
//!   deleted) are durable when SQLite is told they are done. Bytes of a file past its size
//!   are stale and never read: reads clip at the size and fill with zeroes, and a write
//!   that starts past the size writes zeroes over the gap first.
//! - *Batch-atomic writes* (`begin_batch` .. `commit_batch`): the pages of SQLite's batch
//!   are merged into whole flash pages in the VFS and, at COMMIT_ATOMIC_WRITE, written with
//!   the device's WRITE(tx) and committed with COMMIT(tx). If the batch changed a file's
//!   size, the new superblock is one more WRITE of the same device transaction, so data
//!   and size become durable together or not at all. ROLLBACK_ATOMIC_WRITE is ABORT(tx).
//! - *Fallback*: when the device cannot take the batch (more pages than
//!   `ftl.max_tx_pages`, a refused BEGIN or WRITE), the VFS aborts the device transaction
//!   and fails the file control with SQLITE_IOERR; SQLite (pager.c,
//!   `sqlite3PagerCommitPhaseOne`) then writes its in-memory rollback journal to the
//!   journal file and writes the database pages *without syncing the journal first*. With
//!   `fallback_journal_sync` (on by default) the VFS syncs the journal before the first
//!   database write after a fallback, so the journal is durable before any database page
//!   it protects is overwritten.
//!
//! What it does not do: more than one database per device, shared-memory WAL index (WAL
//! runs in `locking_mode = EXCLUSIVE`, so SQLite keeps the index in heap memory), host CPU
//! time (only device time is on the simulated clock).

use sim::{Lpn, SimTime, TxId};
use ssd::{Device, ReadOutcome, SsdError};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The files of one database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileId {
    Db = 0,
    Journal = 1,
    Wal = 2,
}

impl FileId {
    pub const ALL: [FileId; 3] = [FileId::Db, FileId::Journal, FileId::Wal];
    pub fn name(self) -> &'static str {
        match self {
            FileId::Db => "database",
            FileId::Journal => "journal",
            FileId::Wal => "wal",
        }
    }
}

/// One file's extent and size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileMeta {
    pub start: u32,
    pub pages: u32,
    pub size: u64,
    pub exists: bool,
}

const MAGIC: &[u8; 8] = b"CLSQLFS1";
const SB_BYTES: usize = 100;
/// LPNs of the two superblock slots.
pub const SB_SLOTS: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub seq: u64,
    pub page_bytes: u32,
    pub files: [FileMeta; 3],
}

impl Superblock {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; self.page_bytes as usize];
        b[0..8].copy_from_slice(MAGIC);
        b[8..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..20].copy_from_slice(&self.page_bytes.to_le_bytes());
        b[20..24].copy_from_slice(&3u32.to_le_bytes());
        for (k, f) in self.files.iter().enumerate() {
            let o = 24 + 24 * k;
            b[o..o + 4].copy_from_slice(&f.start.to_le_bytes());
            b[o + 4..o + 8].copy_from_slice(&f.pages.to_le_bytes());
            b[o + 8..o + 16].copy_from_slice(&f.size.to_le_bytes());
            b[o + 16] = u8::from(f.exists);
        }
        let crc = sim::crc::crc32(&b[..96]);
        b[96..100].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// `None` for anything that is not a whole, valid superblock.
    pub fn decode(b: &[u8]) -> Option<Superblock> {
        if b.len() < SB_BYTES || &b[0..8] != MAGIC {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(x)
        };
        if sim::crc::crc32(&b[..96]) != u32_at(96) || u32_at(20) != 3 {
            return None;
        }
        let mut files = [FileMeta::default(); 3];
        for (k, f) in files.iter_mut().enumerate() {
            let o = 24 + 24 * k;
            *f = FileMeta {
                start: u32_at(o),
                pages: u32_at(o + 4),
                size: u64_at(o + 8),
                exists: b[o + 16] != 0,
            };
        }
        Some(Superblock {
            seq: u64_at(8),
            page_bytes: u32_at(16),
            files,
        })
    }
}

/// Page versions by tag (tag `t` is entry `t - 1`): a shared, read-only base (a recorded
/// run's versions, for recovering its crash images) plus the versions written since.
#[derive(Clone, Default)]
pub struct Versions {
    base: Rc<Vec<Box<[u8]>>>,
    own: Vec<Box<[u8]>>,
}

impl Versions {
    pub fn over(base: Rc<Vec<Box<[u8]>>>) -> Versions {
        Versions {
            base,
            own: Vec::new(),
        }
    }
    pub fn push(&mut self, bytes: Box<[u8]>) -> u64 {
        self.own.push(bytes);
        (self.base.len() + self.own.len()) as u64
    }
    pub fn get(&self, tag: u64) -> Option<&[u8]> {
        let i = usize::try_from(tag.checked_sub(1)?).ok()?;
        if i < self.base.len() {
            Some(&self.base[i])
        } else {
            self.own.get(i - self.base.len()).map(|b| &b[..])
        }
    }
    /// Everything, as a base for the next `Versions` (a recording's table).
    pub fn into_shared(self) -> Rc<Vec<Box<[u8]>>> {
        let mut v: Vec<Box<[u8]>> = self.base.iter().cloned().collect();
        v.extend(self.own);
        Rc::new(v)
    }
    pub fn len(&self) -> usize {
        self.base.len() + self.own.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A bug planted on purpose, to show the crash checker catches it (never on by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plant {
    /// COMMIT_ATOMIC_WRITE returns to SQLite when the writes are accepted, before the
    /// device's COMMIT is acked, and xSync waits only for the plain writes the VFS issued
    /// itself (not for the device transaction), so SQLite's sync after the batch does not
    /// hide it.
    AckCommitEarly,
    /// xSync of the rollback journal does nothing.
    SkipJournalSync,
}

impl Plant {
    pub fn parse(s: &str) -> Option<Plant> {
        match s {
            "ack-commit-early" => Some(Plant::AckCommitEarly),
            "skip-journal-sync" => Some(Plant::SkipJournalSync),
            _ => None,
        }
    }
    pub const NAMES: [&'static str; 2] = ["ack-commit-early", "skip-journal-sync"];
}

#[derive(Clone, Debug)]
pub struct FsOptions {
    /// Offer SQLITE_IOCAP_BATCH_ATOMIC and map the batch onto a device transaction.
    pub batch: bool,
    /// Sync the journal before the first database write after a batch fell back.
    pub fallback_journal_sync: bool,
    pub plant: Option<Plant>,
    /// Dirty flash pages the write-back cache holds before it issues them all.
    pub write_back_pages: usize,
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions {
            batch: false,
            fallback_journal_sync: true,
            plant: None,
            write_back_pages: 1024,
        }
    }
}

/// Extent sizes in flash pages (0: the default split of the logical space).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub db_pages: u32,
    pub journal_pages: u32,
    pub wal_pages: u32,
}

/// What the VFS did, for the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FsStats {
    pub file_reads: u64,
    pub file_writes: u64,
    pub syncs: u64,
    /// Flash pages written per file (plain or transactional).
    pub db_page_writes: u64,
    pub journal_page_writes: u64,
    pub wal_page_writes: u64,
    pub superblock_writes: u64,
    /// Flash pages read to merge a write that covers them only in part.
    pub rmw_reads: u64,
    pub batch_begins: u64,
    pub batch_commits: u64,
    /// Batches the device could not take, after which SQLite used its journal.
    pub batch_fallbacks: u64,
    /// Journal syncs the VFS added before a database write after a fallback.
    pub fallback_journal_syncs: u64,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum FsError {
    #[error("the {file} file needs {need} bytes; its extent holds {cap} bytes ({pages} flash pages of the device's {logical} logical pages): the database is larger than the device")]
    Full {
        file: &'static str,
        need: u64,
        cap: u64,
        pages: u32,
        logical: u32,
    },
    #[error("device: {0}")]
    Device(#[from] SsdError),
    #[error("lpn {lpn} reads as uncorrectable")]
    Uncorrectable { lpn: u32 },
    #[error("corrupt device image: {0}")]
    Corrupt(String),
    #[error("layout: {0}")]
    Layout(String),
    #[error("batch: {0}")]
    Batch(String),
}

pub type FsResult<T> = Result<T, FsError>;

struct Batch {
    tx: TxId,
    pages: BTreeMap<u32, Box<[u8]>>,
    files_before: [FileMeta; 3],
}

pub struct DeviceFs {
    pub dev: Device,
    page_bytes: usize,
    pub now: SimTime,
    pub versions: Versions,
    durable: Superblock,
    files: [FileMeta; 3],
    batch: Option<Batch>,
    /// The write-back cache: dirty flash pages by LPN, not yet issued to the device.
    cache: BTreeMap<u32, (FileId, Box<[u8]>)>,
    /// The latest ack of a plain write issued (only the planted bug waits for this alone).
    plain_until: SimTime,
    next_tx: u64,
    fallback_pending: bool,
    pub opts: FsOptions,
    pub stats: FsStats,
}

impl DeviceFs {
    /// Formats `dev` (blank) with `layout` and writes the first superblock.
    pub fn format(
        dev: Device,
        layout: Layout,
        opts: FsOptions,
        now: SimTime,
    ) -> FsResult<DeviceFs> {
        let logical = dev.logical_pages();
        let page_bytes = dev.core.geo.page_bytes;
        if (page_bytes as usize) < SB_BYTES {
            return Err(FsError::Layout(format!(
                "nand.page_bytes = {page_bytes}: a flash page must hold the {SB_BYTES}-byte superblock"
            )));
        }
        let avail = logical.saturating_sub(SB_SLOTS);
        let mut l = layout;
        if l.db_pages == 0 && l.journal_pages == 0 && l.wal_pages == 0 {
            l.db_pages = avail * 2 / 5;
            l.journal_pages = avail * 2 / 5;
            l.wal_pages = avail - l.db_pages - l.journal_pages;
        }
        let need = u64::from(SB_SLOTS)
            + u64::from(l.db_pages)
            + u64::from(l.journal_pages)
            + u64::from(l.wal_pages);
        if need > u64::from(logical) || l.db_pages == 0 {
            return Err(FsError::Layout(format!(
                "the extents need {need} logical pages (database {}, journal {}, wal {}, superblocks {SB_SLOTS}); the device has {logical}",
                l.db_pages, l.journal_pages, l.wal_pages
            )));
        }
        let mut files = [FileMeta::default(); 3];
        let mut at = SB_SLOTS;
        for (f, n) in files
            .iter_mut()
            .zip([l.db_pages, l.journal_pages, l.wal_pages])
        {
            f.start = at;
            f.pages = n;
            at += n;
        }
        let sb = Superblock {
            seq: 0,
            page_bytes,
            files,
        };
        let mut fs = DeviceFs {
            dev,
            page_bytes: page_bytes as usize,
            now,
            versions: Versions::default(),
            durable: sb,
            files,
            batch: None,
            cache: BTreeMap::new(),
            plain_until: SimTime::ZERO,
            next_tx: 1,
            fallback_pending: false,
            opts,
            stats: FsStats::default(),
        };
        fs.write_superblock()?;
        Ok(fs)
    }

    /// Opens a formatted device from the medium (after `Device::recover`).
    pub fn open(
        mut dev: Device,
        versions: Versions,
        opts: FsOptions,
        now: SimTime,
    ) -> FsResult<DeviceFs> {
        let page_bytes = dev.core.geo.page_bytes;
        let mut best: Option<Superblock> = None;
        let mut t = now;
        for slot in 0..SB_SLOTS {
            let (o, done) = dev.read(Lpn(slot), t)?;
            t = t.max(done);
            let sb = match o {
                ReadOutcome::Tag(tag) => versions.get(tag).and_then(Superblock::decode),
                _ => None,
            };
            if let Some(sb) = sb {
                if best.is_none_or(|b| sb.seq > b.seq) {
                    best = Some(sb);
                }
            }
        }
        let sb = best.ok_or_else(|| {
            FsError::Corrupt("neither superblock slot holds a valid superblock".into())
        })?;
        if sb.page_bytes != page_bytes {
            return Err(FsError::Corrupt(format!(
                "superblock made for {}-byte flash pages, device has {page_bytes}",
                sb.page_bytes
            )));
        }
        let logical = dev.logical_pages();
        for f in &sb.files {
            if u64::from(f.start) + u64::from(f.pages) > u64::from(logical)
                || f.size > u64::from(f.pages) * u64::from(page_bytes)
            {
                return Err(FsError::Corrupt(format!(
                    "superblock names an extent or size outside the device: {f:?}"
                )));
            }
        }
        Ok(DeviceFs {
            dev,
            page_bytes: page_bytes as usize,
            now: t,
            versions,
            durable: sb,
            files: sb.files,
            batch: None,
            cache: BTreeMap::new(),
            plain_until: SimTime::ZERO,
            next_tx: 1,
            fallback_pending: false,
            opts,
            stats: FsStats::default(),
        })
    }

    pub fn page_bytes(&self) -> usize {
        self.page_bytes
    }
    pub fn meta(&self, f: FileId) -> FileMeta {
        self.files[f as usize]
    }
    pub fn durable(&self) -> Superblock {
        self.durable
    }
    pub fn in_batch(&self) -> bool {
        self.batch.is_some()
    }

    /// Writes the next superblock (files as they are now) and waits for it.
    fn write_superblock(&mut self) -> FsResult<()> {
        let sb = Superblock {
            seq: self.durable.seq + 1,
            page_bytes: self.page_bytes as u32,
            files: self.files,
        };
        let slot = (sb.seq % u64::from(SB_SLOTS)) as u32;
        let tag = self.versions.push(sb.encode().into_boxed_slice());
        let t = self.dev.write_plain(Lpn(slot), tag, self.now)?;
        self.now = self.now.max(t);
        self.durable = sb;
        self.stats.superblock_writes += 1;
        Ok(())
    }

    /// The current bytes of `lpn` (the batch's or the cache's copy if there is one).
    fn page(&mut self, lpn: u32) -> FsResult<Vec<u8>> {
        if let Some(b) = &self.batch {
            if let Some(p) = b.pages.get(&lpn) {
                return Ok(p.to_vec());
            }
        }
        if let Some((_, p)) = self.cache.get(&lpn) {
            return Ok(p.to_vec());
        }
        let (o, done) = self.dev.read(Lpn(lpn), self.now)?;
        self.now = self.now.max(done);
        match o {
            ReadOutcome::Unmapped => Ok(vec![0; self.page_bytes]),
            ReadOutcome::Tag(tag) => match self.versions.get(tag) {
                Some(b) if b.len() == self.page_bytes => Ok(b.to_vec()),
                _ => Err(FsError::Corrupt(format!(
                    "lpn {lpn} holds tag {tag}, which names no page version"
                ))),
            },
            ReadOutcome::Bytes(_) => Err(FsError::Corrupt(format!(
                "lpn {lpn} holds raw bytes; this VFS writes tagged pages only"
            ))),
            ReadOutcome::Uncorrectable => Err(FsError::Uncorrectable { lpn }),
        }
    }

    /// Reads `buf.len()` bytes at `off`; returns how many were inside the file (the rest is
    /// zero-filled, SQLite's short read).
    pub fn read(&mut self, f: FileId, off: u64, buf: &mut [u8]) -> FsResult<usize> {
        self.stats.file_reads += 1;
        let m = self.files[f as usize];
        let end = (off + buf.len() as u64).min(m.size);
        buf.fill(0);
        if !m.exists || off >= end {
            return Ok(0);
        }
        let p = self.page_bytes as u64;
        let mut o = off;
        while o < end {
            let lpn = m.start + (o / p) as u32;
            let in_page = (o % p) as usize;
            let n = ((p - o % p).min(end - o)) as usize;
            let page = self.page(lpn)?;
            let b = (o - off) as usize;
            buf[b..b + n].copy_from_slice(&page[in_page..in_page + n]);
            o += n as u64;
        }
        Ok((end - off) as usize)
    }

    fn check_room(&self, f: FileId, end: u64) -> FsResult<()> {
        let m = self.files[f as usize];
        let cap = u64::from(m.pages) * self.page_bytes as u64;
        if end > cap {
            return Err(FsError::Full {
                file: f.name(),
                need: end,
                cap,
                pages: m.pages,
                logical: self.dev.logical_pages(),
            });
        }
        Ok(())
    }

    /// Writes `data` at `off`, growing the file (a gap past the old size reads as zeroes).
    pub fn write(&mut self, f: FileId, off: u64, data: &[u8]) -> FsResult<()> {
        self.stats.file_writes += 1;
        let end = off + data.len() as u64;
        self.check_room(f, end)?;
        if f == FileId::Db && self.fallback_pending && self.batch.is_none() {
            self.fallback_pending = false;
            self.stats.fallback_journal_syncs += 1;
            self.sync(FileId::Journal)?;
        }
        let m = self.files[f as usize];
        let old_size = if m.exists { m.size } else { 0 };
        let (wstart, wdata): (u64, std::borrow::Cow<[u8]>) = if off > old_size {
            let mut v = vec![0u8; (off - old_size) as usize];
            v.extend_from_slice(data);
            (old_size, v.into())
        } else {
            (off, data.into())
        };
        let p = self.page_bytes as u64;
        let mut o = wstart;
        while o < end {
            let lpn = m.start + (o / p) as u32;
            let page_lo = o - o % p;
            let in_page = (o % p) as usize;
            let n = ((p - o % p).min(end - o)) as usize;
            let mut page = if n == self.page_bytes {
                vec![0u8; self.page_bytes]
            } else {
                let cached = self.cache.contains_key(&lpn)
                    || self
                        .batch
                        .as_ref()
                        .is_some_and(|b| b.pages.contains_key(&lpn));
                let mut cur = if page_lo >= old_size {
                    vec![0u8; self.page_bytes]
                } else {
                    if !cached {
                        self.stats.rmw_reads += 1;
                    }
                    self.page(lpn)?
                };
                // Bytes past the old size are stale: they read as zero once the file grows.
                if old_size < page_lo + p {
                    let from = old_size.saturating_sub(page_lo) as usize;
                    cur[from..].fill(0);
                }
                cur
            };
            let b = (o - wstart) as usize;
            page[in_page..in_page + n].copy_from_slice(&wdata[b..b + n]);
            self.put_page(f, lpn, page.into_boxed_slice())?;
            o += n as u64;
        }
        let mm = &mut self.files[f as usize];
        mm.exists = true;
        mm.size = mm.size.max(end);
        debug_assert_eq!(self.check_invariants(), Ok(()));
        Ok(())
    }

    fn count_page_write(&mut self, f: FileId) {
        match f {
            FileId::Db => self.stats.db_page_writes += 1,
            FileId::Journal => self.stats.journal_page_writes += 1,
            FileId::Wal => self.stats.wal_page_writes += 1,
        }
    }

    /// Issues every dirty page of the write-back cache (not waited for).
    fn flush(&mut self) -> FsResult<()> {
        for (lpn, (f, bytes)) in std::mem::take(&mut self.cache) {
            self.count_page_write(f);
            let tag = self.versions.push(bytes);
            let t = self.dev.write_plain(Lpn(lpn), tag, self.now)?;
            self.plain_until = self.plain_until.max(t);
        }
        Ok(())
    }

    fn put_page(&mut self, f: FileId, lpn: u32, bytes: Box<[u8]>) -> FsResult<()> {
        if let Some(b) = &mut self.batch {
            b.pages.insert(lpn, bytes);
            // The superblock may be one more page of the device transaction.
            let max = self.dev.core.cfg.max_tx_pages as usize;
            if b.pages.len() + 1 > max {
                return Err(FsError::Batch(format!(
                    "the batch needs more than ftl.max_tx_pages = {max} pages"
                )));
            }
            return Ok(());
        }
        self.cache.insert(lpn, (f, bytes));
        if self.cache.len() > self.opts.write_back_pages {
            self.flush()?;
        }
        Ok(())
    }

    /// Makes everything written so far durable, and the file sizes with it.
    pub fn sync(&mut self, f: FileId) -> FsResult<()> {
        self.stats.syncs += 1;
        if f == FileId::Journal && self.opts.plant == Some(Plant::SkipJournalSync) {
            return Ok(());
        }
        self.flush()?;
        self.now = if self.opts.plant == Some(Plant::AckCommitEarly) {
            self.now.max(self.plain_until)
        } else {
            self.dev.barrier(self.now)
        };
        if self.files != self.durable.files {
            self.write_superblock()?;
        }
        if f == FileId::Db {
            self.fallback_pending = false;
        }
        debug_assert_eq!(self.check_invariants(), Ok(()));
        Ok(())
    }

    /// Sets the file's size; durable when this returns.
    pub fn truncate(&mut self, f: FileId, size: u64) -> FsResult<()> {
        let m = self.files[f as usize];
        if size > m.size {
            let zeros = vec![0u8; (size - m.size) as usize];
            return self.write(f, m.size, &zeros);
        }
        self.files[f as usize].size = size;
        if self.batch.is_some() {
            return Ok(());
        }
        self.flush()?;
        self.now = self.dev.barrier(self.now);
        if self.files != self.durable.files {
            self.write_superblock()?;
        }
        Ok(())
    }

    /// Marks the file as created (durable at the next sync).
    pub fn create(&mut self, f: FileId) {
        let m = &mut self.files[f as usize];
        if !m.exists {
            m.exists = true;
            m.size = 0;
        }
    }

    /// Deletes the file; durable when this returns.
    pub fn delete(&mut self, f: FileId) -> FsResult<()> {
        let m = &mut self.files[f as usize];
        m.exists = false;
        m.size = 0;
        // The deleted file's dirty pages are dropped, never written.
        self.cache.retain(|_, (g, _)| *g != f);
        self.flush()?;
        self.now = self.dev.barrier(self.now);
        if self.files != self.durable.files {
            self.write_superblock()?;
        }
        Ok(())
    }

    /// SQLITE_FCNTL_BEGIN_ATOMIC_WRITE: BEGIN(tx) on the device.
    pub fn begin_batch(&mut self) -> FsResult<()> {
        if self.batch.is_some() {
            return Err(FsError::Batch("a batch is already open".into()));
        }
        if !self.opts.batch || !self.dev.info().atomic {
            return Err(FsError::Batch(format!(
                "protocol {} has no atomic transactions",
                self.dev.info().name
            )));
        }
        self.stats.batch_begins += 1;
        self.flush()?;
        let tx = TxId(self.next_tx);
        self.next_tx += 1;
        match self.dev.begin(tx, self.now) {
            Ok(t) => self.now = self.now.max(t),
            Err(e) => {
                self.note_fallback();
                return Err(e.into());
            }
        }
        self.batch = Some(Batch {
            tx,
            pages: BTreeMap::new(),
            files_before: self.files,
        });
        Ok(())
    }

    fn note_fallback(&mut self) {
        self.stats.batch_fallbacks += 1;
        if self.opts.fallback_journal_sync {
            self.fallback_pending = true;
        }
    }

    /// SQLITE_FCNTL_COMMIT_ATOMIC_WRITE: WRITE(tx) each page (and the superblock if a size
    /// changed), then COMMIT(tx); returns when the commit is acked.
    pub fn commit_batch(&mut self) -> FsResult<()> {
        let Some(b) = self.batch.take() else {
            return Err(FsError::Batch("no batch is open".into()));
        };
        let max = self.dev.core.cfg.max_tx_pages as usize;
        let with_sb = self.files != self.durable.files;
        let n = b.pages.len() + usize::from(with_sb);
        let r = if n > max {
            Err(FsError::Batch(format!(
                "the batch has {n} pages; ftl.max_tx_pages = {max}"
            )))
        } else {
            self.write_batch(&b, with_sb)
        };
        match r {
            Ok(()) => {
                self.stats.batch_commits += 1;
                Ok(())
            }
            Err(e) => {
                // The device transaction is abandoned; ROLLBACK_ATOMIC_WRITE will find no
                // batch open. A refused ABORT leaves nothing for SQLite to do differently.
                let t = self.dev.abort(b.tx, self.now).unwrap_or(self.now);
                self.now = self.now.max(t);
                self.files = b.files_before;
                self.note_fallback();
                Err(e)
            }
        }
    }

    fn write_batch(&mut self, b: &Batch, with_sb: bool) -> FsResult<()> {
        let mut t = self.now;
        self.stats.db_page_writes += b.pages.len() as u64;
        for (lpn, bytes) in &b.pages {
            let tag = self.versions.push(bytes.clone());
            t = t.max(self.dev.write(b.tx, Lpn(*lpn), tag, self.now)?);
        }
        let sb = Superblock {
            seq: self.durable.seq + 1,
            page_bytes: self.page_bytes as u32,
            files: self.files,
        };
        if with_sb {
            let slot = (sb.seq % u64::from(SB_SLOTS)) as u32;
            let tag = self.versions.push(sb.encode().into_boxed_slice());
            t = t.max(self.dev.write(b.tx, Lpn(slot), tag, self.now)?);
            self.stats.superblock_writes += 1;
        }
        let acked = self.dev.commit(b.tx, t)?;
        if with_sb {
            self.durable = sb;
        }
        self.now = if self.opts.plant == Some(Plant::AckCommitEarly) {
            // Planted bug: SQLite hears "committed" when the writes were accepted.
            self.now.max(t)
        } else {
            self.now.max(acked)
        };
        Ok(())
    }

    /// SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE: ABORT(tx) (nothing if the batch already ended).
    pub fn rollback_batch(&mut self) -> FsResult<()> {
        if let Some(b) = self.batch.take() {
            self.files = b.files_before;
            let t = self.dev.abort(b.tx, self.now)?;
            self.now = self.now.max(t);
            self.note_fallback();
        }
        Ok(())
    }

    /// Checks the file table against the extent map and the durable superblock (debug
    /// builds call it after writes and syncs).
    pub fn check_invariants(&self) -> Result<(), String> {
        if self
            .durable
            .files
            .iter()
            .zip(&self.files)
            .any(|(d, f)| (d.start, d.pages) != (f.start, f.pages))
        {
            return Err("the extent map changed after format".into());
        }
        if self.batch.is_some() && !self.cache.is_empty() {
            return Err("dirty cached pages during a batch".into());
        }
        let mut at = SB_SLOTS;
        for (k, m) in self.files.iter().enumerate() {
            if m.start != at {
                return Err(format!("file {k} starts at {} not {at}", m.start));
            }
            if m.size > u64::from(m.pages) * self.page_bytes as u64 {
                return Err(format!("file {k} is larger than its extent"));
            }
            at += m.pages;
        }
        if at > self.dev.logical_pages() {
            return Err("extents past the device".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> Device {
        let mut c = check::small_config("none");
        c.protocol.name = "none".into();
        world::build_device(&c, None).expect("device")
    }

    #[test]
    fn superblock_round_trips_and_rejects_damage() {
        let sb = Superblock {
            seq: 7,
            page_bytes: 512,
            files: [
                FileMeta {
                    start: 2,
                    pages: 10,
                    size: 1234,
                    exists: true,
                },
                FileMeta::default(),
                FileMeta::default(),
            ],
        };
        let mut b = sb.encode();
        assert_eq!(Superblock::decode(&b), Some(sb));
        b[30] ^= 1;
        assert_eq!(Superblock::decode(&b), None);
    }

    #[test]
    fn sizes_survive_reopen_only_after_sync() {
        let mut fs = DeviceFs::format(
            dev(),
            Layout::default(),
            FsOptions::default(),
            SimTime::ZERO,
        )
        .expect("format");
        fs.write(FileId::Db, 0, &[7u8; 700]).expect("write");
        fs.sync(FileId::Db).expect("sync");
        fs.write(FileId::Db, 700, &[8u8; 100]).expect("write");
        let versions = fs.versions.clone();
        let d = fs.durable();
        assert_eq!(d.files[0].size, 700);
        let mut fs2 =
            DeviceFs::open(fs.dev, versions, FsOptions::default(), SimTime::ZERO).expect("open");
        let mut buf = [0u8; 800];
        assert_eq!(fs2.read(FileId::Db, 0, &mut buf).expect("read"), 700);
        assert!(buf[..700].iter().all(|b| *b == 7) && buf[700..].iter().all(|b| *b == 0));
    }

    #[test]
    fn regrowing_after_truncate_reads_zeroes_not_stale_bytes() {
        let mut fs = DeviceFs::format(
            dev(),
            Layout::default(),
            FsOptions::default(),
            SimTime::ZERO,
        )
        .expect("format");
        fs.write(FileId::Journal, 0, &[9u8; 1500]).expect("write");
        fs.truncate(FileId::Journal, 100).expect("truncate");
        fs.write(FileId::Journal, 1200, &[1u8; 10]).expect("write");
        let mut buf = vec![0u8; 1210];
        fs.read(FileId::Journal, 0, &mut buf).expect("read");
        assert!(buf[..100].iter().all(|b| *b == 9));
        assert!(
            buf[100..1200].iter().all(|b| *b == 0),
            "stale bytes came back"
        );
        assert!(buf[1200..].iter().all(|b| *b == 1));
    }

    #[test]
    fn a_file_larger_than_its_extent_is_refused() {
        let mut fs = DeviceFs::format(
            dev(),
            Layout {
                db_pages: 2,
                journal_pages: 2,
                wal_pages: 2,
            },
            FsOptions::default(),
            SimTime::ZERO,
        )
        .expect("format");
        let e = fs.write(FileId::Db, 0, &[0u8; 1025]).unwrap_err();
        assert!(matches!(e, FsError::Full { .. }), "{e}");
    }
}
