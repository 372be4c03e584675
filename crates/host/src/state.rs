//! The state the engine and the strategy share (`Core`): the configuration, the DB layout,
//! the device (and the log device), the buffer pool, the tag table, the data area's
//! current page versions, and the counters. Core methods are the plain device paths every
//! strategy uses: read a DB page, write a page image's parts, write a log page.
//!
//! Layer: engine core. It names no strategy: strategy-specific device content is
//! `data::TagContent::Strategy`, a restart's strategy state `hooks::Resume`, both opaque
//! here (docs/ARCHITECTURE.md, "Host core").

use crate::buffer::{Frame, Pool};
use crate::data::{Layout, PageImage, PageNo, TagTable};
use crate::metrics::HostStats;
use crate::{HostConfig, HostError, Result};
use sim::{Lpn, SimTime};
use ssd::{Device, SsdError};
use std::sync::Arc;

/// The first device page of DB page `p`'s part `k`.
pub fn data_lpn(layout: &Layout, p: PageNo, k: u32) -> Lpn {
    Lpn((p.0 * u64::from(layout.parts) + u64::from(k)) as u32)
}

/// Device pages the data area uses.
pub fn data_lpns(layout: &Layout) -> u64 {
    layout.pages * u64::from(layout.parts)
}

/// State shared by the engine and the strategy.
pub struct Core {
    pub cfg: HostConfig,
    pub layout: Layout,
    pub device: Device,
    /// The log device (`host.log_device = "separate"`): the WAL's log pages and master
    /// record are written here; None: on `device`, after the data pages.
    pub log_device: Option<Device>,
    pub pool: Pool,
    pub tags: TagTable,
    /// Per DB page: the version a read returns now (None: as loaded), with its first tag.
    ///
    /// With `lazy_disk`, the image's `values` may be *taken* (left empty) by `frame_mut`
    /// when nothing else holds the image (no tag table keeps it): the frame then owns them
    /// and is dirty, so the entry is replaced by its write-back before any read of the page
    /// could look at it. Invariant: an entry with taken values belongs to a page with a
    /// built frame in the pool (`check_disk`).
    pub disk: Vec<Option<(u64, Arc<PageImage>)>>,
    /// The strategy builds every frame through `Core::frame_mut` (never `Pool::frame_mut`
    /// directly), so a fetch may install `buffer::Unbuilt::Disk` frames and a build may take
    /// the disk image's values instead of copying them. Set by the strategy's `create`
    /// (`wal`); default off.
    pub lazy_disk: bool,
    /// Builds that took a disk image's values instead of copying them (not a metric: for
    /// tests and profiles).
    pub disk_values_taken: u64,
    pub stats: HostStats,
    /// The device commands issued, as a `txn` trace (when capturing one).
    pub trace: Option<Vec<workload::txn::Timed>>,
    /// Net bytes modified per written page (`update::net`).
    pub net: crate::update::net::NetBytes,
    /// Device pages a read of a DB page reads besides its own parts (`ipl`: the log pages
    /// of its erase unit holding records for it), and how many such reads were made.
    pub also_read: std::collections::BTreeMap<u64, Vec<Lpn>>,
    pub also_read_pages: u64,
    /// The number of the transaction whose attempt `Strategy::begin` is starting:
    /// transactions are numbered 1, 2, … in the order clients take them from the workload,
    /// and a restart keeps its number (as wait-die keeps its timestamp), while every
    /// attempt gets a fresh `TxnId`. PCMLogging's XIDs (§4's residence clock) use it.
    pub txn_number: u64,
    /// A file-backed run of a PCM strategy: the tier image its PCM and disk write through to
    /// (`media::tier_file`), attached by the strategy's `create` after formatting.
    pub tier_sink: Option<media::tier_file::TierSink>,
    /// An engine resumed on a recovered medium (`Engine::resume`): the strategy's state its
    /// restart left, taken by the strategy's `create`.
    pub resume: Option<Resume>,
}

impl Core {
    /// Notes a device command in the captured trace (if any).
    pub fn trace(&mut self, at: SimTime, cmd: workload::txn::TxCmd) {
        if let Some(t) = self.trace.as_mut() {
            t.push(workload::txn::Timed {
                time_ns: at.as_ns(),
                cmd,
            });
        }
    }

    /// The device holding the log and the master record: the log device when there is one.
    pub fn log_dev(&mut self) -> &mut Device {
        match self.log_device.as_mut() {
            Some(d) => d,
            None => &mut self.device,
        }
    }

    /// Writes log page number `seq` (already tagged) to `lpn` of the log's device as a
    /// plain, durable-at-ack write, noting it in the trace and the log-page counter; returns
    /// the ack instant.
    pub fn write_log_page(
        &mut self,
        lpn: Lpn,
        tag: u64,
        seq: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        let t = self.write_traced(lpn, tag, now, || format!("writing log page {seq}"))?;
        self.stats.log_page_writes += 1;
        if self.cfg.fault_log_acked_at_issue {
            // The planted bug (`HostConfig::fault_log_acked_at_issue`).
            return Ok(now);
        }
        Ok(t)
    }

    /// Writes a strategy's master record (the root its restart starts from) at `lpn`: a plain
    /// write, traced like a log page but not counted as one.
    pub fn write_master(&mut self, lpn: Lpn, tag: u64, now: SimTime) -> Result<SimTime> {
        self.write_traced(lpn, tag, now, || "writing the master record".into())
    }

    /// A traced plain write of one page of the log's device; `what` names it in an error.
    /// (A run with a log device captures no trace: `run_with` refuses it.)
    fn write_traced(
        &mut self,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
        what: impl FnOnce() -> String,
    ) -> Result<SimTime> {
        self.trace(
            now,
            workload::txn::TxCmd::Write {
                tx: None,
                lpn,
                pages: 1,
            },
        );
        self.log_dev()
            .write_plain(lpn, tag, now)
            .map_err(|error| HostError::Device {
                at: now,
                what: what(),
                error,
            })
    }

    /// The error of a failed device command. `what` is built even when the command
    /// succeeds: on per-command paths, format the message inside a `map_err` closure.
    pub fn dev_err(at: SimTime, what: impl Into<String>) -> impl FnOnce(SsdError) -> HostError {
        let what = what.into();
        move |error| HostError::Device { at, what, error }
    }

    /// Hints the CPU to fetch `page`'s entries in the pool's page map and in `disk` (a fetch
    /// of it follows soon). Changes speed only.
    #[inline]
    pub fn prefetch_page(&self, page: PageNo) {
        self.pool.prefetch(page);
        if let Some(d) = self.disk.get(page.0 as usize) {
            sim::mem::prefetch(d);
        }
    }

    /// The values of `page` as the device holds them now.
    pub fn disk_image(&self, page: PageNo) -> (Vec<u64>, u64) {
        match &self.disk[page.0 as usize] {
            Some((_, img)) => {
                debug_assert!(
                    !img.values.is_empty(),
                    "page {}'s disk image was taken by its frame",
                    page.0
                );
                (img.values.clone(), img.lsn)
            }
            None => (self.layout.initial_page(page), 0),
        }
    }

    /// Frame `f`, its values built. An `Unbuilt::Disk` frame takes the disk image's values
    /// when no one else holds the image (`disk`'s invariant) and copies them otherwise;
    /// every other frame is built by `Pool::frame_mut`.
    pub fn frame_mut(&mut self, f: u32) -> &mut Frame {
        if self.pool.frame(f).refers_to_disk() {
            let page = self.pool.frame(f).page;
            let (values, lsn) = match &mut self.disk[page.0 as usize] {
                Some((_, img)) => {
                    let lsn = img.lsn;
                    let values = match Arc::get_mut(img) {
                        Some(own) => {
                            self.disk_values_taken += 1;
                            std::mem::take(&mut own.values)
                        }
                        None => img.values.clone(),
                    };
                    debug_assert!(!values.is_empty(), "page {}'s disk image was taken", page.0);
                    (values, lsn)
                }
                None => (self.layout.initial_page(page), 0),
            };
            self.pool.build_from_disk(f, values, lsn);
        }
        self.pool.frame_mut(f)
    }

    /// `disk`'s invariant: every entry whose values were taken belongs to a page with a
    /// built frame in the pool.
    pub fn check_disk(&self) -> std::result::Result<(), String> {
        for (p, d) in self.disk.iter().enumerate() {
            if let Some((_, img)) = d {
                if img.values.is_empty() {
                    let ok = self
                        .pool
                        .find(PageNo(p as u64))
                        .is_some_and(|f| self.pool.frame(f).is_built());
                    if !ok {
                        return Err(format!(
                            "page {p}'s disk image was taken but no built frame holds it"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Forgets the contents of every tag the medium no longer holds (`TagTable::retain`):
    /// a run that measures its recovery at the end needs only those a read of the medium
    /// can return then, and a tag that left the medium (its page overwritten elsewhere and
    /// erased) never comes back. Called between events, when every tag allocated has been
    /// written (each strategy allocates a write's tags in the call that issues it). Results
    /// are unchanged: recovery reads only tags on the medium, and an unknown tag is an
    /// error, not a guess (so a tag forgotten too early fails the run loudly).
    pub fn prune_tags(&mut self) {
        let n = self.tags.len() as usize;
        let mut live = vec![false; n + 1];
        let mut mark = |t: u64| {
            if let Some(x) = live.get_mut(t as usize) {
                *x = true;
            }
        };
        self.device.core.nand.image().for_each_tag(&mut mark);
        // The log device's pages name log and master tags.
        if let Some(l) = &self.log_device {
            l.core.nand.image().for_each_tag(&mut mark);
        }
        self.tags.retain(|t| live[t as usize]);
    }

    /// Allocates the tags of a new image of `img.page` (one per part, consecutive).
    pub fn tag_image(&mut self, img: &Arc<PageImage>) -> u64 {
        let mut first = 0;
        for k in 0..self.layout.parts {
            let t = self.tags.add(|| crate::data::TagContent::Data {
                image: img.clone(),
                part: k,
            });
            if k == 0 {
                first = t;
            }
        }
        first
    }

    /// Reads every part of `page`; returns when the last read completes.
    pub fn read_page(&mut self, page: PageNo, now: SimTime) -> Result<SimTime> {
        let mut end = now;
        self.trace(
            now,
            workload::txn::TxCmd::Read {
                lpn: data_lpn(&self.layout, page, 0),
                pages: self.layout.parts,
            },
        );
        for k in 0..self.layout.parts {
            self.device
                .core
                .prefetch_page(data_lpn(&self.layout, page, k));
        }
        for k in 0..self.layout.parts {
            let lpn = data_lpn(&self.layout, page, k);
            let (o, t) = self
                .device
                .read(lpn, now)
                .map_err(|error| HostError::Device {
                    at: now,
                    what: format!("reading {lpn}"),
                    error,
                })?;
            #[cfg(debug_assertions)]
            {
                let want = match &self.disk[page.0 as usize] {
                    Some((t0, _)) => ssd::ReadOutcome::Tag(t0 + u64::from(k)),
                    None => ssd::ReadOutcome::Unmapped,
                };
                // A page as loaded is unmapped, or holds its loaded tag on a device the
                // database was loaded onto (`external::load_data_area`).
                let loaded = want == ssd::ReadOutcome::Unmapped
                    && o == ssd::ReadOutcome::Tag(crate::data::loaded_tag(lpn));
                if o != want && !loaded {
                    return Err(HostError::Stuck(format!(
                        "internal: {lpn} reads {o:?}, the host expects {want:?}"
                    )));
                }
            }
            let _ = o;
            end = end.max(t);
        }
        if let Some(extra) = self.also_read.get(&page.0) {
            for lpn in extra.clone() {
                let (_, t) = self
                    .device
                    .read(lpn, now)
                    .map_err(Core::dev_err(now, format!("reading log page {lpn}")))?;
                end = end.max(t);
                self.also_read_pages += 1;
            }
        }
        self.stats.page_reads += 1;
        Ok(end)
    }

    /// Issues one device write per part of a new image of `img.page`, through `write`
    /// (plain, or inside device transaction `tx`). Returns the first tag and when the last
    /// write completes.
    pub fn write_image(
        &mut self,
        img: &Arc<PageImage>,
        tx: Option<sim::TxId>,
        now: SimTime,
        write: impl FnMut(&mut Device, Lpn, u64) -> std::result::Result<SimTime, SsdError>,
    ) -> Result<(u64, SimTime)> {
        self.write_image_traced(img, tx, false, now, write)
    }

    /// `write_image` for the last page a device transaction writes at commit: the last
    /// part's write goes with the COMMIT (`write` calls `Device::commit_write` for it), and
    /// the trace shows it on the COMMIT line.
    pub fn write_image_with_commit(
        &mut self,
        img: &Arc<PageImage>,
        tx: sim::TxId,
        now: SimTime,
        write: impl FnMut(&mut Device, Lpn, u64) -> std::result::Result<SimTime, SsdError>,
    ) -> Result<(u64, SimTime)> {
        self.write_image_traced(img, Some(tx), true, now, write)
    }

    fn write_image_traced(
        &mut self,
        img: &Arc<PageImage>,
        tx: Option<sim::TxId>,
        commit_last: bool,
        now: SimTime,
        mut write: impl FnMut(&mut Device, Lpn, u64) -> std::result::Result<SimTime, SsdError>,
    ) -> Result<(u64, SimTime)> {
        let t0 = self.tag_image(img);
        let parts = self.layout.parts;
        let plain = if commit_last { parts - 1 } else { parts };
        if plain > 0 {
            self.trace(
                now,
                workload::txn::TxCmd::Write {
                    tx,
                    lpn: data_lpn(&self.layout, img.page, 0),
                    pages: plain,
                },
            );
        }
        if let (true, Some(tx)) = (commit_last, tx) {
            self.trace(
                now,
                workload::txn::TxCmd::Commit {
                    tx,
                    write: Some(data_lpn(&self.layout, img.page, parts - 1)),
                },
            );
        }
        let mut end = now;
        for k in 0..self.layout.parts {
            self.device
                .core
                .prefetch_page(data_lpn(&self.layout, img.page, k));
        }
        for k in 0..self.layout.parts {
            let lpn = data_lpn(&self.layout, img.page, k);
            let t = write(&mut self.device, lpn, t0 + u64::from(k)).map_err(|error| {
                HostError::Device {
                    at: now,
                    what: format!("writing {lpn}"),
                    error,
                }
            })?;
            end = end.max(t);
        }
        self.stats.page_writes += 1;
        self.net.written(img.page, u64::from(self.cfg.page_bytes));
        Ok((t0, end))
    }
}

/// A strategy's state after a restart that wrote back (`WriteBack::resume`), taken by its
/// `create` when the engine resumes (`engine::Core::resume`): a value of the strategy's own
/// type (`wal::Resume`, `flagcommit_ex::Resume`, `pcmlogging_engine::PcmResume`, device-tx's
/// marker), which only that strategy reads back (`take`).
#[derive(Debug)]
pub struct Resume(Box<dyn ResumeState>);

/// What a `Resume` may hold: any strategy type with a `Debug` form.
pub trait ResumeState: std::any::Any + std::fmt::Debug {}

impl<T: std::any::Any + std::fmt::Debug> ResumeState for T {}

impl Resume {
    pub fn new<T: ResumeState>(state: T) -> Resume {
        Resume(Box::new(state))
    }

    /// Whether it holds a `T`.
    pub fn is<T: ResumeState>(&self) -> bool {
        (&*self.0 as &dyn std::any::Any).is::<T>()
    }

    /// Its state as a `T`, or itself back when it holds another type.
    pub fn take<T: ResumeState>(self) -> std::result::Result<T, Resume> {
        if self.is::<T>() {
            let b: Box<dyn std::any::Any> = self.0;
            Ok(*b.downcast::<T>().expect("checked by is"))
        } else {
            Err(self)
        }
    }

    /// Takes a `T` out of `slot`, leaving any other state there.
    pub fn take_from<T: ResumeState>(slot: &mut Option<Resume>) -> Option<T> {
        match slot.take().map(Resume::take::<T>) {
            Some(Ok(t)) => Some(t),
            Some(Err(other)) => {
                *slot = Some(other);
                None
            }
            None => None,
        }
    }
}
