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
//! Not modelled: seek distance, rotational position, on-disk caches. (Issue 11's option of
//! commitlab's own emulated SSD as the external store is not here yet.)

use sim::SimTime;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskKind {
    Hdd,
    Ssd,
    SdCard,
}

impl DiskKind {
    pub fn parse(s: &str) -> Result<DiskKind, String> {
        match s {
            "hdd" => Ok(DiskKind::Hdd),
            "ssd" => Ok(DiskKind::Ssd),
            "sd" | "sd-card" => Ok(DiskKind::SdCard),
            _ => Err(format!(
                "unknown external store '{s}' (known: hdd, ssd, sd-card)"
            )),
        }
    }

    /// (read, write) ns per page, Table 2.
    pub fn latency_ns(self) -> (u64, u64) {
        match self {
            DiskKind::Hdd => (8_050_000, 8_200_000),
            DiskKind::Ssd => (25_000, 50_000),
            DiskKind::SdCard => (1_470_000, 200_100_000),
        }
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

#[derive(Clone)]
pub struct Disk {
    pub kind: DiskKind,
    read_ns: u64,
    write_ns: u64,
    busy_until: SimTime,
    pages: BTreeMap<u64, Vec<u64>>,
    log: Option<Vec<DiskWrite>>,
    pub counters: DiskCounters,
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
            counters: DiskCounters::default(),
        }
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
    }

    pub fn take_log(&mut self) -> Vec<DiskWrite> {
        self.log.take().unwrap_or_default()
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
        let (_, end) = self.serve(now, self.read_ns);
        self.counters.reads += 1;
        (self.pages.get(&page).cloned(), end)
    }

    /// Writes a page (contents change now); returns when the write completes.
    pub fn write(&mut self, page: u64, data: Vec<u64>, now: SimTime) -> SimTime {
        let (start, end) = self.serve(now, self.write_ns);
        self.counters.writes += 1;
        if let Some(l) = self.log.as_mut() {
            l.push(DiskWrite {
                page,
                data: data.clone(),
                start,
                end,
            });
        }
        self.pages.insert(page, data);
        end
    }

    /// When the disk is next idle.
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
        let t1 = d.write(3, vec![1, 2], SimTime::ZERO);
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
    }

    #[test]
    fn writes_are_logged_with_their_service_interval() {
        let mut d = Disk::new(DiskKind::Ssd);
        d.set_logging(true);
        d.write(0, vec![5], SimTime(100));
        d.write(1, vec![6], SimTime(100));
        let l = d.take_log();
        assert_eq!((l[0].start, l[0].end), (SimTime(100), SimTime(50_100)));
        assert_eq!((l[1].start, l[1].end), (SimTime(50_100), SimTime(100_100)));
    }
}
