//! External storage for the PCMLogging tier (PCMLogging Table 2): a disk of DB pages, each a
//! vector of 64-bit slot values (the host's data model), served one request at a time.
//!
//! Latencies per 8 KiB page (Table 2): HDD 8.05 / 8.20 ms (IBM DNES-309170 without write
//! cache), SATA SSD 25 / 50 µs, SD card 1.47 / 200.1 ms. Requests queue FIFO behind the one
//! in service. A page never written reads as `None` (the loaded database).
//!
//! Crash model: every page write is logged (`DiskWrite`) with its start and end; at a
//! power cut a write in progress may have persisted any subset of its slots (a torn page at
//! sector granularity, one slot standing for a sector); completed writes persisted.
//!
//! The emulated SSD (`DiskKind::Emulated`): the same `Disk` with a
//! `PageBackend` (`host::external`, which owns commitlab's own `ssd::Device`; the media
//! layer cannot name the FTL) serving each read and write on flash instead of the latency
//! constant: the backend gives the completion instants (the device's queues, channels and
//! GC), and its log (`FlashLog`) holds the NAND operations, which are then the crash points
//! in place of `DiskWrite`s. The contents a read returns are still this `Disk`'s map (the
//! backend checks that the flash holds them).
//!
//! Not modelled: seek distance, rotational position, on-disk caches.

use crate::{LoggedOp, NandImage, NandTiming};
use sim::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskKind {
    Hdd,
    Ssd,
    SdCard,
    /// commitlab's emulated SSD (`host::external`). The latencies are the nominal ones of an
    /// unloaded device (`DiskKind::emulated`), for the models that need one number (the
    /// adaptive destager's μ_max, recovery-time estimates); runs take the device's own.
    Emulated {
        read_ns: u64,
        write_ns: u64,
    },
}

impl DiskKind {
    pub fn parse(s: &str) -> Result<DiskKind, String> {
        match s {
            "hdd" => Ok(DiskKind::Hdd),
            "ssd" => Ok(DiskKind::Ssd),
            "sd" | "sd-card" => Ok(DiskKind::SdCard),
            // Nominal figures of the default NAND timing, 8 KiB over two 4 KiB pages;
            // `host::external` replaces them with the configured device's.
            "emulated" => Ok(DiskKind::emulated(&NandTiming::default(), 4096, 2)),
            _ => Err(format!(
                "unknown external store '{s}' (known: hdd, ssd, sd-card, emulated)"
            )),
        }
    }

    /// The emulated SSD's nominal latencies for a DB page of `parts` flash pages of
    /// `page_bytes`: the parts go to different planes in parallel and share a channel, so a
    /// read costs one array read plus every part's transfer, a write every part's transfer
    /// plus one program. (GC and queueing come on top in a run.)
    pub fn emulated(t: &NandTiming, page_bytes: u32, parts: u32) -> DiskKind {
        let xfer = if t.channel_mbps == 0 {
            0
        } else {
            u64::from(page_bytes) * 1000 / t.channel_mbps
        };
        let parts = u64::from(parts.max(1));
        DiskKind::Emulated {
            read_ns: t.read_ns + parts * xfer,
            write_ns: t.program_ns + parts * xfer,
        }
    }

    /// The name `parse` takes.
    pub fn name(self) -> &'static str {
        match self {
            DiskKind::Hdd => "hdd",
            DiskKind::Ssd => "ssd",
            DiskKind::SdCard => "sd-card",
            DiskKind::Emulated { .. } => "emulated",
        }
    }

    /// (read, write) ns per page, Table 2 (the emulated SSD: nominal, see `emulated`).
    pub fn latency_ns(self) -> (u64, u64) {
        match self {
            DiskKind::Hdd => (8_050_000, 8_200_000),
            DiskKind::Ssd => (25_000, 50_000),
            DiskKind::SdCard => (1_470_000, 200_100_000),
            DiskKind::Emulated { read_ns, write_ns } => (read_ns, write_ns),
        }
    }
}

/// Serves a `Disk`'s pages on another medium (`host::external`: the emulated SSD). The
/// `Disk` keeps the functional contents; the backend stores them and times the I/O.
/// Durability contract: a write is durable on the backend's medium at the instant `write`
/// returns as its end, not before.
pub trait PageBackend {
    /// Reads `page`, whose contents are `expect` (None: never written); returns when the
    /// read completes. The backend checks that its medium holds `expect`.
    fn read(&mut self, page: u64, expect: Option<&[u64]>, now: SimTime) -> SimTime;
    /// Writes `page`; returns (start, end): when it began changing the medium and when it
    /// is durable, or why the medium refused the write (e.g. a worn-out flash device).
    fn write(
        &mut self,
        page: u64,
        data: &Arc<Vec<u64>>,
        now: SimTime,
    ) -> Result<(SimTime, SimTime), String>;
    /// Starts or stops the operation log (`take_log`).
    fn set_logging(&mut self, on: bool);
    /// The operation log since `set_logging(true)`.
    fn take_log(&mut self) -> Option<FlashLog>;
    /// Counters of the medium (flash reads, programs, GC erases, …), for the report.
    fn counters(&self) -> Vec<(&'static str, u64)>;
}

/// What a `PageBackend` on flash leaves for the crash checker: the NAND image when logging
/// began, every NAND operation since (host writes, GC migrations and erases), and how to
/// read the disk pages back out of a recovered flash image.
#[derive(Clone, Debug)]
pub struct FlashLog {
    pub base: NandImage,
    pub ops: Vec<LoggedOp>,
    /// Flash pages per disk page.
    pub parts: u32,
    /// Every disk page written since logging began → its first logical flash page (part k
    /// is at `first + k`).
    pub pages: BTreeMap<u64, u32>,
    /// Every tag written → (disk page, part, the whole page's contents). Part k of a page
    /// of `n` words holds words `part_range(n, parts, k)`.
    pub contents: BTreeMap<u64, (u64, u32, Arc<Vec<u64>>)>,
}

/// The words of part `k` of a disk page of `n` words split over `parts` flash pages.
pub fn part_range(n: usize, parts: u32, k: u32) -> std::ops::Range<usize> {
    let c = n.div_ceil(parts.max(1) as usize).max(1);
    let a = (k as usize * c).min(n);
    a..((k as usize + 1) * c).min(n)
}

/// A disk's write log: its page writes (each with its service interval) and, on the
/// emulated SSD, the flash log under them. Derefs to the page writes.
#[derive(Clone, Debug, Default)]
pub struct DiskLog {
    pub writes: Vec<DiskWrite>,
    pub flash: Option<FlashLog>,
}

impl std::ops::Deref for DiskLog {
    type Target = Vec<DiskWrite>;
    fn deref(&self) -> &Vec<DiskWrite> {
        &self.writes
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskWrite {
    pub page: u64,
    pub data: Vec<u64>,
    pub start: SimTime,
    pub end: SimTime,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub reads: u64,
    pub writes: u64,
}

pub struct Disk {
    pub kind: DiskKind,
    read_ns: u64,
    write_ns: u64,
    busy_until: SimTime,
    pages: BTreeMap<u64, Vec<u64>>,
    log: Option<Vec<DiskWrite>>,
    /// A file-backed run's tier image: every page write is appended as it is issued.
    sink: Option<crate::tier_file::TierSink>,
    pub counters: DiskCounters,
    /// The medium serving the pages instead of the latency constant (the emulated SSD).
    backend: Option<Box<dyn PageBackend>>,
}

impl Disk {
    pub fn new(kind: DiskKind) -> Disk {
        let (read_ns, write_ns) = kind.latency_ns();
        Disk {
            kind,
            read_ns,
            write_ns,
            busy_until: SimTime::ZERO,
            pages: BTreeMap::new(),
            log: None,
            sink: None,
            counters: DiskCounters::default(),
            backend: None,
        }
    }

    /// A disk of `kind` whose pages `backend` serves (module docs).
    pub fn with_backend(kind: DiskKind, backend: Box<dyn PageBackend>) -> Disk {
        Disk {
            backend: Some(backend),
            ..Disk::new(kind)
        }
    }

    /// The backend's counters (none for a latency-constant disk).
    pub fn medium_counters(&self) -> Vec<(&'static str, u64)> {
        self.backend
            .as_ref()
            .map(|b| b.counters())
            .unwrap_or_default()
    }

    /// A disk holding `pages` (a crash image), idle.
    pub fn from_image(kind: DiskKind, pages: BTreeMap<u64, Vec<u64>>) -> Disk {
        Disk {
            pages,
            ..Disk::new(kind)
        }
    }

    pub fn set_logging(&mut self, on: bool) {
        self.log = if on { Some(Vec::new()) } else { None };
        if let Some(b) = self.backend.as_mut() {
            b.set_logging(on);
        }
    }

    /// Writes the disk through to a tier image from now on: the pages it holds now, then
    /// every page write, become records (`tier_file`). A disk served by a backend (the
    /// emulated SSD) keeps its pages on flash, not in a tier image: refused.
    pub fn set_sink(&mut self, sink: crate::tier_file::TierSink) -> Result<(), String> {
        if self.backend.is_some() {
            return Err(format!(
                "a {} disk keeps its pages on the emulated flash device, not in a tier image",
                self.kind.name()
            ));
        }
        for (p, v) in &self.pages {
            crate::tier_file::with_sink(&sink, |f| f.disk_write(*p, v))?;
        }
        self.sink = Some(sink);
        Ok(())
    }

    pub fn take_log(&mut self) -> DiskLog {
        DiskLog {
            writes: self.log.take().unwrap_or_default(),
            flash: self.backend.as_mut().and_then(|b| b.take_log()),
        }
    }

    pub fn image(&self) -> &BTreeMap<u64, Vec<u64>> {
        &self.pages
    }

    fn serve(&mut self, now: SimTime, ns: u64) -> (SimTime, SimTime) {
        let start = now.max(self.busy_until);
        let end = start + ns;
        self.busy_until = end;
        (start, end)
    }

    /// Reads a page: its contents (None: as loaded) and when the read completes.
    pub fn read(&mut self, page: u64, now: SimTime) -> (Option<Vec<u64>>, SimTime) {
        let end = match self.backend.as_mut() {
            Some(b) => {
                let end = b.read(page, self.pages.get(&page).map(|v| v.as_slice()), now);
                self.busy_until = self.busy_until.max(end);
                end
            }
            None => self.serve(now, self.read_ns).1,
        };
        self.counters.reads += 1;
        (self.pages.get(&page).cloned(), end)
    }

    /// Writes a page (contents change now); returns when the write completes.
    pub fn write(&mut self, page: u64, data: Vec<u64>, now: SimTime) -> Result<SimTime, String> {
        let (start, end) = match self.backend.as_mut() {
            Some(b) => {
                let (s, e) = b.write(page, &Arc::new(data.clone()), now)?;
                self.busy_until = self.busy_until.max(e);
                (s, e)
            }
            None => self.serve(now, self.write_ns),
        };
        self.counters.writes += 1;
        if let Some(s) = &self.sink {
            crate::tier_file::with_sink(s, |f| f.disk_write(page, &data))?;
        }
        if let Some(l) = self.log.as_mut() {
            l.push(DiskWrite {
                page,
                data: data.clone(),
                start,
                end,
            });
        }
        self.pages.insert(page, data);
        Ok(end)
    }

    /// When the disk is next idle (the emulated SSD: when everything issued is done).
    pub fn idle_at(&self) -> SimTime {
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_2_latencies_and_fifo_service() {
        let mut d = Disk::new(DiskKind::Hdd);
        let t1 = d.write(3, vec![1, 2], SimTime::ZERO).unwrap();
        assert_eq!(t1, SimTime(8_200_000));
        // queued behind the write
        let (v, t2) = d.read(3, SimTime(1));
        assert_eq!(v, Some(vec![1, 2]));
        assert_eq!(t2, SimTime(8_200_000 + 8_050_000));
        assert_eq!(d.read(9, t2).0, None);
        assert_eq!(DiskKind::SdCard.latency_ns(), (1_470_000, 200_100_000));
        assert_eq!(
            DiskKind::parse("ssd").unwrap().latency_ns(),
            (25_000, 50_000)
        );
        assert!(DiskKind::parse("tape").is_err());
        // The emulated SSD's nominal figures: default timing (25 µs read, 200 µs program,
        // 400 MB/s channels), 8 KiB over two 4 KiB pages: 2 × 10.24 µs of transfer.
        let e = DiskKind::parse("emulated").unwrap();
        assert_eq!(e.latency_ns(), (25_000 + 20_480, 200_000 + 20_480));
        assert_eq!(e.name(), "emulated");
    }

    #[test]
    fn parts_cover_a_page_once() {
        for (n, parts) in [(10, 4), (161, 4), (3, 4), (129, 1)] {
            let mut seen = vec![0; n];
            for k in 0..parts {
                for i in part_range(n, parts, k) {
                    seen[i] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{n} words over {parts}");
        }
    }

    #[test]
    fn writes_are_logged_with_their_service_interval() {
        let mut d = Disk::new(DiskKind::Ssd);
        d.set_logging(true);
        d.write(0, vec![5], SimTime(100)).unwrap();
        d.write(1, vec![6], SimTime(100)).unwrap();
        let l = d.take_log();
        assert_eq!((l[0].start, l[0].end), (SimTime(100), SimTime(50_100)));
        assert_eq!((l[1].start, l[1].end), (SimTime(50_100), SimTime(100_100)));
    }
}
