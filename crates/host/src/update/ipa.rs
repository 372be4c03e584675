//! `ipa`: In-Place Appends, the N×M scheme (in-place-appends.md §3).
//!
//! Each DB page reserves a *delta area* of N × (1 + 3M + META) bytes at its end — on the
//! device, the page's append area (`nand.append_bytes`, which must be at least that). A
//! delta record is a control byte, up to M ⟨offset, new byte⟩ pairs (3 B each) and META
//! bytes of changed header/footer (the 8 B page LSN, which every WAL update changes, and a
//! 4 B CRC-32). Record k lives at offset k × (1 + 3M + META) of the area.
//!
//! Normal processing: while a page is buffered the changed bytes since its last write are
//! tracked from the workload's byte ranges (`update::net::changed_ranges`: an added-to
//! field only in the bytes that differ; an insert changes the whole record, a delete its
//! first byte, the slot's status). More than M distinct changed
//! bytes sets the page's out-of-place flag and tracking stops. On write-back: flag set, the
//! page was never written (unmapped), or it already holds N records → the page is written
//! out of place (a fresh physical page: its delta area starts empty, the deltas are folded);
//! otherwise one record is appended to the same physical page with `Device::write_delta`.
//! A fetch sees the page with its deltas applied (the host's `Core::disk` is the applied
//! image; a restart applies them explicitly, `apply_tail`).
//!
//! Record encoding (tag data mode: record bytes stand for the page's content through the
//! tag table, like a page program's tag):
//!
//! ```text
//! [0]                control: number of pairs p (0..=M, never 0xFF = empty slot)
//! [1..9]             tag, u64 LE: TagTable entry of the page image after this delta
//! [9..9+3p]          the pairs (their bytes are a deterministic stand-in derived from the tag)
//! [9+3p..13+3p]      CRC-32 of bytes [0..9+3p]
//! ```
//! 8 + 4 = META bytes. The record is one partial program; a torn one (each bit cleared or
//! not) fails its CRC — or reads as an empty slot — and is ignored with every later slot,
//! leaving the body and earlier records as they were. WAL redo restores the update: the
//! record is written only after the log is forced past the page LSN (WAL rule, `wal.rs`).
//!
//! MLC: the device must run in pSLC or odd-MLC mode (`ftl.mlc_mode`); on odd-MLC a page
//! that landed on an MSB page is written out of place (`ipa_oop_msb`; counted inside
//! `ipa_oop_full_or_new` too).
//!
//! `ipa-block` (§4 demo scenario 2, conventional SSD): the same tracking and records, but a
//! write-back that may append sends the whole page — the body's tag as last written out of
//! place and the delta area with every record so far — through `Device::write_page`; the
//! FTL programs it in place when only erased bits of the delta area clear and NOP allows,
//! otherwise out of place with the records (`ipa_block_device_out_of_place`). The host
//! cannot ask about MSB pages through a block interface, so it never does.
//!
//! Not done: DB pages spanning several flash pages (`host.page_bytes` must equal the flash
//! page size).

use crate::data::{PageImage, PageNo, TagContent, TagTable};
use crate::engine::{data_lpn, Core};
use crate::{HostConfig, HostError, Result};
use sim::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;
use workload::db::RecOp;

/// Header/footer bytes per record: the tag (page LSN stand-in) and the CRC.
pub const META_BYTES: u32 = 12;

pub fn record_slot_bytes(m: u32) -> u32 {
    1 + 3 * m + META_BYTES
}

/// Checks the settings against the device; errors name the key (exit 2). `slc`: the device
/// takes appends (SLC, or MLC in pSLC / odd-MLC mode, `Device::appends_supported`).
pub fn check(cfg: &HostConfig, flash_page_bytes: u32, append_bytes: u32, slc: bool) -> Result<()> {
    let bad = |key: &str, reason: String| {
        Err(HostError::Config {
            key: key.into(),
            reason,
        })
    };
    let (n, m) = (cfg.ipa.n, cfg.ipa.m);
    if cfg.strategy != "wal" {
        return bad(
            "host.update",
            format!(
                "ipa runs with the wal recovery strategy, not {}",
                cfg.strategy
            ),
        );
    }
    if n == 0 || m == 0 || m > 127 {
        return bad(
            "host.ipa",
            format!("N×M = {n}×{m}: N and M must be at least 1 and M at most 127 ([0×0] is host.update = \"out-of-place\")"),
        );
    }
    if cfg.page_bytes != flash_page_bytes {
        return bad(
            "host.page_bytes",
            format!("ipa needs one DB page per flash page: host.page_bytes is {} but the flash page is {flash_page_bytes} B", cfg.page_bytes),
        );
    }
    let area = u64::from(n) * u64::from(record_slot_bytes(m));
    if area * 2 >= u64::from(flash_page_bytes) {
        return bad(
            "host.ipa",
            format!("the delta area of N×M = {n}×{m} is {area} B, too large for a {flash_page_bytes} B page (at most half a page)"),
        );
    }
    if area > u64::from(append_bytes) {
        return bad(
            "nand.append_bytes",
            format!("is {append_bytes}; the delta area of N×M = {n}×{m} needs {area} B (set nand.append_bytes = {area})"),
        );
    }
    if !slc {
        return bad(
            "ftl.mlc_mode",
            "ipa on an MLC device needs a block mode that allows appends: set ftl.mlc_mode = \"pslc\" or \"odd-mlc\"".into(),
        );
    }
    Ok(())
}

/// A buffered page's changed bytes since its last write: the distinct byte offsets, sorted,
/// at most M + 1 of them (the (M + 1)th sets `oop` and empties the list: only the count is
/// ever read, and past M it no longer matters).
#[derive(Default)]
struct Track {
    bytes: Vec<u32>,
    oop: bool,
}

impl Track {
    /// Adds bytes `[from, to)`; sets the out-of-place flag once more than `m` distinct bytes
    /// changed. The same outcome as adding the whole range to a set and then comparing its
    /// size with `m` (the size only grows), without visiting the bytes past the (M + 1)th.
    fn add(&mut self, from: u32, to: u32, m: u32) {
        if self.oop {
            return;
        }
        for b in from..to {
            if let Err(at) = self.bytes.binary_search(&b) {
                self.bytes.insert(at, b);
                if self.bytes.len() > m as usize {
                    self.oop = true;
                    self.bytes.clear();
                    return;
                }
            }
        }
    }
}

/// The pages being tracked: per DB page an index into a slab of `Track`s, whose entries
/// (and their vectors' capacity) are reused once a page is written back, so tracking
/// allocates only while the number of dirty pages grows. Never iterated.
struct Tracks {
    /// Per DB page: its entry in `slab`, or `NONE`.
    of_page: Vec<u32>,
    slab: Vec<Track>,
    free: Vec<u32>,
}

impl Tracks {
    const NONE: u32 = u32::MAX;

    fn new(pages: u64) -> Tracks {
        Tracks {
            of_page: vec![Self::NONE; pages as usize],
            slab: Vec::new(),
            free: Vec::new(),
        }
    }

    /// The page's entry, created empty if it has none.
    fn entry(&mut self, page: PageNo) -> &mut Track {
        let i = &mut self.of_page[page.0 as usize];
        if *i == Self::NONE {
            *i = match self.free.pop() {
                Some(f) => f,
                None => {
                    self.slab.push(Track::default());
                    (self.slab.len() - 1) as u32
                }
            };
        }
        &mut self.slab[*i as usize]
    }

    /// Forgets the page's entry: (its number of changed bytes, its out-of-place flag);
    /// (0, false) for a page without one.
    fn take(&mut self, page: PageNo) -> (usize, bool) {
        let i = std::mem::replace(&mut self.of_page[page.0 as usize], Self::NONE);
        if i == Self::NONE {
            return (0, false);
        }
        let tr = &mut self.slab[i as usize];
        let out = (tr.bytes.len(), tr.oop);
        tr.bytes.clear();
        tr.oop = false;
        self.free.push(i);
        out
    }
}

/// Net bytes modified per evicted dirty page: histogram buckets (upper bounds, bytes).
pub const NET_BYTES_BUCKETS: &[u64] = &[10, 50, 100, 500, 1000, 4096, u64::MAX];

pub struct Ipa {
    n: u32,
    m: u32,
    slot: u32,
    /// `ipa-block`: whole pages through the block interface (`Device::write_page`), the
    /// device decides in place or out of place.
    block: bool,
    /// `ipa-block`: per page holding records, its delta area as the host last wrote it.
    areas: BTreeMap<PageNo, Vec<u8>>,
    /// `ipa-block`: page writes carrying records that the device programmed out of place.
    pub block_device_oop: u64,
    /// Per DB page: delta records in its current physical page.
    records: Vec<u8>,
    /// Per DB page: when its last write (program or append) completes.
    last_end: Vec<SimTime>,
    track: Tracks,
    pub in_place: u64,
    pub out_of_place: u64,
    pub oop_flag: u64,
    pub oop_full: u64,
    /// Written out of place only because the page sits on an MSB page (odd-MLC).
    pub oop_msb: u64,
    pub net_bytes: u64,
    pub net_hist: Vec<u64>,
}

impl Ipa {
    pub fn new(cfg: &HostConfig, pages: u64) -> Ipa {
        Ipa {
            n: cfg.ipa.n,
            m: cfg.ipa.m,
            slot: record_slot_bytes(cfg.ipa.m),
            block: cfg.update == "ipa-block",
            areas: BTreeMap::new(),
            block_device_oop: 0,
            records: vec![0; pages as usize],
            last_end: vec![SimTime::ZERO; pages as usize],
            track: Tracks::new(pages),
            in_place: 0,
            out_of_place: 0,
            oop_flag: 0,
            oop_full: 0,
            oop_msb: 0,
            net_bytes: 0,
            net_hist: vec![0; NET_BYTES_BUCKETS.len()],
        }
    }

    /// A record operation changed `page` (called after the strategy's `on_update`).
    /// `before`: the record's value before the operation (`update::net::changed_ranges`).
    pub fn on_op(&mut self, core: &Core, page: PageNo, op: &RecOp, before: u64) {
        let (base, rb) = super::net::slot_bytes(&core.layout, page, op.rid().slot);
        let m = self.m;
        let tr = self.track.entry(page);
        if tr.oop {
            return;
        }
        super::net::for_each_changed_range(op, before, rb, |s, l| {
            tr.add(base + s, base + s + l, m)
        });
    }

    /// Rollback restored a whole record image (value logging): its bytes count as changed.
    pub fn on_undo(&mut self, core: &Core, page: PageNo, slot: u16) {
        let (t, _) = core.layout.locate(page);
        let rb = u32::from(core.layout.schema.table(t).record_bytes);
        let base = u32::from(slot) * rb;
        self.track.entry(page).add(base, base + rb, self.m);
    }

    /// Writes back `img` in place if the scheme allows; returns the ack, or None when the
    /// page must be written out of place (the caller does that, then calls `written`).
    pub fn try_append(
        &mut self,
        core: &mut Core,
        img: &Arc<PageImage>,
        at: SimTime,
    ) -> Result<Option<SimTime>> {
        let p = img.page;
        let (changed, oop) = self.track.take(p);
        let k = self.records[p.0 as usize];
        let lpn = data_lpn(&core.layout, p, 0);
        // odd-MLC: a page on an MSB page takes no append (`Device::can_append`). A
        // block-interface host cannot ask; the device decides (`Device::write_page`).
        let msb = !self.block && core.disk[p.0 as usize].is_some() && !core.device.can_append(lpn);
        if msb && !oop && u32::from(k) < self.n {
            self.oop_msb += 1;
        }
        let slot = match (&core.disk[p.0 as usize], oop) {
            (Some(_), false) if u32::from(k) < self.n && !msb => k,
            _ => {
                if oop {
                    self.oop_flag += 1;
                } else {
                    self.oop_full += 1;
                }
                self.note_net(if oop { u64::MAX } else { changed as u64 });
                return Ok(None);
            }
        };
        self.note_net(changed as u64);
        let pairs = changed as u32;
        let tag = core.tags.add(|| TagContent::Data {
            image: img.clone(),
            part: 0,
        });
        let rec = encode(tag, pairs);
        // Ordered after the page's previous write or append. Under the model this wait is
        // implied, not needed: the record goes to the physical page the lpn maps to, which
        // the previous write or append of this page programmed (or a GC copy issued after
        // it, whose read queued behind it), on one plane, and a plane executes in issue
        // order (DESIGN.md "Time"; the crash model persists at most one operation per
        // plane in flight, `check` crate). So the append never starts before the previous
        // one ends, with or without this wait, and the planted `ipa-appends-unordered`
        // changes no crash state (docs/MUTATION.md; the guarantee is tested by
        // `appends_to_one_page_start_after_the_previous_write_ends_even_when_issued_at_once`,
        // `ssd/src/delta.rs`). The wait stays for a device whose planes reorder.
        #[cfg(feature = "mutants")]
        let ready = if ssd::mutant::on("ipa-appends-unordered") {
            at
        } else {
            at.max(self.last_end[p.0 as usize])
        };
        #[cfg(not(feature = "mutants"))]
        let ready = at.max(self.last_end[p.0 as usize]);
        let t0 = core.disk[p.0 as usize].as_ref().map_or(0, |d| d.0);
        let end = if self.block {
            // The whole page: the body as last written out of place (its tag) and the
            // delta area with the new record after the earlier ones.
            let area = self.areas.entry(p).or_default();
            let off = (u32::from(slot) * self.slot) as usize;
            if area.len() < off + rec.len() {
                area.resize(off + rec.len(), 0xFF);
            }
            area[off..off + rec.len()].copy_from_slice(&rec);
            let (end, in_place) =
                core.device
                    .write_page(lpn, t0, area, ready)
                    .map_err(Core::dev_err(
                        ready,
                        format!("writing {lpn} with its delta area"),
                    ))?;
            if in_place {
                self.in_place += 1;
            } else {
                self.block_device_oop += 1;
            }
            core.stats.page_writes += 1;
            core.net.written(p, u64::from(core.cfg.page_bytes));
            end
        } else {
            let end = core
                .device
                .write_delta(lpn, u32::from(slot) * self.slot, &rec, ready)
                .map_err(Core::dev_err(
                    ready,
                    format!("appending a delta record to {lpn}"),
                ))?;
            self.in_place += 1;
            core.net.written(p, rec.len() as u64);
            end
        };
        self.records[p.0 as usize] = slot + 1;
        self.last_end[p.0 as usize] = end;
        core.disk[p.0 as usize] = Some((t0, img.clone()));
        Ok(Some(end))
    }

    /// The engine starts on a medium a restart wrote back (`strategy::wal`, "Run-on
    /// restart"): every page that is not as loaded was written out of place by `end`, so no
    /// page holds records and the next append to one follows that write.
    pub fn resumed(&mut self, end: SimTime) {
        self.records.iter_mut().for_each(|k| *k = 0);
        self.areas.clear();
        self.last_end.iter_mut().for_each(|e| *e = end);
    }

    /// The page was written out of place (a fresh physical page, empty delta area).
    pub fn written(&mut self, page: PageNo, end: SimTime) {
        self.records[page.0 as usize] = 0;
        self.areas.remove(&page);
        self.last_end[page.0 as usize] = end;
        self.out_of_place += 1;
    }

    fn note_net(&mut self, bytes: u64) {
        if bytes != u64::MAX {
            self.net_bytes += bytes;
        }
        let i = NET_BYTES_BUCKETS
            .iter()
            .position(|b| bytes <= *b)
            .unwrap_or(NET_BYTES_BUCKETS.len() - 1);
        self.net_hist[i] += 1;
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("ipa_in_place_appends", self.in_place),
            ("ipa_out_of_place_writes", self.out_of_place),
            ("ipa_oop_flag", self.oop_flag),
            ("ipa_oop_full_or_new", self.oop_full),
            ("ipa_oop_msb", self.oop_msb),
            ("ipa_block_device_out_of_place", self.block_device_oop),
            ("ipa_net_bytes_tracked", self.net_bytes),
            ("ipa_evicted_net_bytes_le_10", self.net_hist[0]),
            ("ipa_evicted_net_bytes_le_50", self.net_hist[1]),
            ("ipa_evicted_net_bytes_le_100", self.net_hist[2]),
            ("ipa_evicted_net_bytes_le_500", self.net_hist[3]),
            ("ipa_evicted_net_bytes_le_1000", self.net_hist[4]),
            ("ipa_evicted_net_bytes_le_4096", self.net_hist[5]),
            ("ipa_evicted_net_bytes_more_or_untracked", self.net_hist[6]),
        ]
    }
}

fn filler(tag: u64, i: u32) -> u8 {
    (crate::data::mix64(tag ^ u64::from(i)) & 0xFF) as u8
}

/// One delta record's bytes.
pub fn encode(tag: u64, pairs: u32) -> Vec<u8> {
    let mut r = Vec::with_capacity(record_slot_bytes(pairs) as usize);
    r.push(pairs as u8);
    r.extend_from_slice(&tag.to_le_bytes());
    for i in 0..3 * pairs {
        r.push(filler(tag, i));
    }
    let crc = sim::crc::crc32(&r);
    r.extend_from_slice(&crc.to_le_bytes());
    r
}

/// The tags of the valid records of a delta area, oldest first; stops at the first empty
/// or torn slot.
pub fn decode(tail: &[u8], m: u32, n: u32, skip_crc: bool) -> Vec<u64> {
    let slot = record_slot_bytes(m) as usize;
    // Bytes the device never stored read as 0xFF: a tag-mode page keeps only its delta
    // area's programmed prefix, so a record whose last CRC byte is 0xFF may end beyond it
    // (an in-place program of only the bytes that change, a GC copy of the area). Found by
    // the ipa-block random crash check (seed 5 on `ipa_block_survives_random_crashes…`):
    // such a record was dropped, losing an acked update once the log was truncated.
    let padded;
    let tail = if tail.len() < n as usize * slot {
        let mut v = tail.to_vec();
        v.resize(n as usize * slot, 0xFF);
        padded = v;
        &padded[..]
    } else {
        tail
    };
    let mut out = Vec::new();
    for k in 0..n as usize {
        let s = k * slot;
        let Some(&ctrl) = tail.get(s) else { break };
        if ctrl == 0xFF || u32::from(ctrl) > m {
            break;
        }
        let len = 9 + 3 * ctrl as usize;
        let Some(body) = tail.get(s..s + len + 4) else {
            break;
        };
        let crc = u32::from_le_bytes([body[len], body[len + 1], body[len + 2], body[len + 3]]);
        if !skip_crc && sim::crc::crc32(&body[..len]) != crc {
            break;
        }
        let mut t = [0u8; 8];
        t.copy_from_slice(&body[1..9]);
        out.push(u64::from_le_bytes(t));
    }
    out
}

/// Restart: the image a page's body plus its delta area stands for (the newest valid
/// record's image, or the body's).
pub fn apply_tail(
    cfg: &HostConfig,
    tags: &TagTable,
    page: PageNo,
    body: Arc<PageImage>,
    tail: &[u8],
) -> Result<Arc<PageImage>> {
    let mut img = body;
    for tag in decode(tail, cfg.ipa.m, cfg.ipa.n, cfg.fault_ipa_skip_crc) {
        match tags.get(tag) {
            Some(TagContent::Data { image, part: 0 }) if image.page == page => img = image.clone(),
            other => {
                return Err(HostError::Corrupt(format!(
                    "page {} delta record names tag {tag}, which is {other:?}",
                    page.0
                )))
            }
        }
    }
    Ok(img)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// `Track::add` keeps the outcome of the ordered set it replaced: for any sequence of
    /// ranges, the out-of-place flag is set iff more than M distinct bytes changed, and
    /// otherwise the count is the set's size; an entry taken is empty again.
    #[test]
    fn tracking_counts_distinct_bytes_as_a_set_does() {
        let mut rng = sim::Rng::new(7);
        for round in 0..2_000u64 {
            let m = 1 + (round % 20) as u32;
            let mut set = BTreeSet::new();
            let mut model_oop = false;
            let mut tracks = Tracks::new(3);
            let page = PageNo(1 + round % 2);
            for _ in 0..rng.below(8) {
                let from = rng.below(64) as u32;
                let long = rng.below(4) == 0;
                let len = 1 + rng.below(if long { 40 } else { 4 }) as u32;
                tracks.entry(page).add(from, from + len, m);
                if !model_oop {
                    set.extend(from..from + len);
                    if set.len() > m as usize {
                        model_oop = true;
                        set.clear();
                    }
                }
            }
            let want = if model_oop {
                (0, true)
            } else {
                (set.len(), false)
            };
            assert_eq!(tracks.take(page), want, "round {round}");
            assert_eq!(tracks.take(page), (0, false));
            // The slab entry is reused, empty.
            assert_eq!(tracks.entry(PageNo(0)).bytes.len(), 0);
            assert!(!tracks.entry(PageNo(0)).oop);
            assert!(tracks.slab.len() <= 1);
        }
    }

    #[test]
    fn records_round_trip_and_torn_ones_are_dropped() {
        let m = 4;
        let slot = record_slot_bytes(m) as usize;
        let mut tail = vec![0xFF; 3 * slot];
        let a = encode(11, 2);
        let b = encode(12, 4);
        tail[..a.len()].copy_from_slice(&a);
        tail[slot..slot + b.len()].copy_from_slice(&b);
        assert_eq!(decode(&tail, m, 3, false), vec![11, 12]);
        // Tear the second record: clear some of its bits.
        let mut torn = tail.clone();
        torn[slot + 1] &= 0x03; // tag byte 0x0C -> 0x00
        assert_eq!(decode(&torn, m, 3, false), vec![11]);
        // The planted bug accepts it (with a wrong tag).
        assert_eq!(decode(&torn, m, 3, true).len(), 2);
        // Slots beyond N are ignored; a short (never written) area reads as empty.
        assert_eq!(decode(&tail, m, 1, false), vec![11]);
        assert_eq!(decode(&[], m, 2, false), Vec::<u64>::new());
        // A record ending in 0xFF whose last byte was never stored (tag mode keeps only
        // the programmed prefix) still decodes (regression, see `decode`).
        let tag = (0..100_000u64)
            .find(|t| encode(*t, 2).last() == Some(&0xFF))
            .unwrap();
        let r = encode(tag, 2);
        assert_eq!(decode(&r[..r.len() - 1], m, 2, false), vec![tag]);
    }
}
