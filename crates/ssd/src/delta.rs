//! `write_delta`: In-Place Appends' device command (in-place-appends.md §3, "write_delta").
//!
//! `write_delta(lpn, offset, bytes)` partial-programs `bytes` into the *delta area* of the
//! physical page `lpn` maps to, without remapping it: the delta area is the last
//! `nand.append_bytes` bytes of the page's data area, which a tagged program leaves erased
//! (media `ImageParams::append_bytes`); `offset` counts from the start of that area.
//! `read_delta(lpn)` returns the page's outcome together with the delta area as stored.
//!
//! Rules (all enforced by the medium, reported as `SsdError::Nand`): the page must be
//! programmed and within its NOP (SLC: `nand.nop` programs per page, the first being the
//! page program itself); only erased bits may be cleared; MLC pages in the normal mode
//! allow one program, so an MLC device takes appends only in a block mode
//! (`ftl.mlc_mode`, `modes`): pSLC (every data page is an LSB page) or odd-MLC (LSB pages
//! only; `can_append` tells the host beforehand); plain MLC refuses the command with a
//! configuration error naming `ftl.mlc_mode`. Only the plain FTL (`none`) accepts the command: transactional protocols own
//! their pages' OOB and flags.
//!
//! Durability: the ack is the partial program's completion; a crash before it may leave the
//! bytes torn (each bit cleared or not, `TornKind::Partial`) — the page body and earlier
//! bytes stay readable, and the host must detect the torn record (the `ipa` update strategy
//! checksums each record). GC migrates a page *with* its delta area, body and delta area in
//! one program (`media::Content::TagTail`, `gc/mod.rs`), so appended bytes survive
//! migration, also onto an odd-MLC MSB page (which then takes no further appends); the host
//! folds deltas only when it writes the page out of place.
//!
//! Counters: `FtlStats::delta_writes` / `delta_bytes` (host→device bytes of appends);
//! `host_writes` counts out-of-place page writes, `page_invalidations` the pages they
//! invalidated.

use super::Device;
use crate::core::ReadOutcome;
use crate::error::{Result, SsdError};
use sim::{Lpn, SimTime};

impl Device {
    /// Bytes of each page's delta area (`nand.append_bytes`).
    pub fn delta_area_bytes(&self) -> u32 {
        self.core.nand.image().params().append_bytes
    }

    /// Whether the device can take appends at all: SLC, or MLC in a pSLC / odd-MLC block
    /// mode (`ftl.mlc_mode`, `modes`).
    pub fn appends_supported(&self) -> bool {
        self.core.nand.image().params().cell == media::CellType::Slc
            || self.core.cfg.mlc_mode != crate::modes::MlcMode::Mlc
    }

    /// Whether an append to `lpn` can be programmed now: the plain FTL, a delta area, the
    /// page mapped and still within its NOP (odd-MLC: an MSB page allows no second program,
    /// so the host writes it out of place instead).
    pub fn can_append(&self, lpn: Lpn) -> bool {
        if self.info.name != "none" || self.delta_area_bytes() == 0 {
            return false;
        }
        match self.core.lookup(lpn) {
            Some(ppa) => {
                let img = self.core.nand.image();
                img.program_count(ppa) < img.nop_of(ppa)
            }
            None => false,
        }
    }

    /// Appends `bytes` at `offset` of the delta area of the page `lpn` maps to; returns the
    /// ack (the partial program's completion).
    pub fn write_delta(
        &mut self,
        lpn: Lpn,
        offset: u32,
        bytes: &[u8],
        now: SimTime,
    ) -> Result<SimTime> {
        self.core.check_lpn(lpn)?;
        if self.info.name != "none" {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: "write_delta (in-place appends run on the plain FTL, protocol none)".into(),
            });
        }
        if !self.appends_supported() {
            return Err(SsdError::Config {
                key: "ftl.mlc_mode".into(),
                reason: "write_delta on MLC needs a block mode that allows appends: set ftl.mlc_mode = \"pslc\" or \"odd-mlc\"".into(),
            });
        }
        let area = self.delta_area_bytes();
        let end = u64::from(offset) + bytes.len() as u64;
        if bytes.is_empty() || end > u64::from(area) {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!(
                    "write_delta of {} bytes at offset {offset}: the delta area (nand.append_bytes) is {area} bytes",
                    bytes.len()
                ),
            });
        }
        let Some(ppa) = self.core.lookup(lpn) else {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!("write_delta to {lpn}, which is not mapped"),
            });
        };
        // The append goes where `can_append` saw the page; pending GC runs after it (an
        // append takes no free page). Run before, GC could move the page onto an odd-MLC
        // MSB page between the host's `can_append` and this program (NopExceeded; test
        // `modes::tests::can_append_holds_for_the_next_write_delta_while_gc_is_pending`).
        let page_bytes = self.core.geo.page_bytes;
        let abs = page_bytes - area + offset;
        let t = self
            .core
            .nand
            .partial_program(ppa, None, Some((abs, bytes)), now)?;
        self.core.stats.delta_writes += 1;
        self.core.stats.delta_bytes += bytes.len() as u64;
        self.maintain(now)?;
        Ok(self.done(t.end))
    }

    /// A block-interface write of a whole page image: body `tag` plus `tail`, the delta
    /// area's bytes from its start (in-place-appends.md §4, demo scenario 2, "IPA for
    /// conventional SSD"). The FTL programs it *in place* — a partial program of the bytes
    /// that differ, same physical page, no remap, no invalidation — when the page `lpn`
    /// maps to holds the same body tag, the new delta area only clears bits still set
    /// there, and the page is within its NOP (odd-MLC: LSB pages only; plain MLC: never);
    /// otherwise *out of place*, body and delta area in one program
    /// (`media::Content::TagTail`), as `write_plain`. Returns the ack and whether it was in
    /// place. The whole page crosses the interface either way (the host's byte counters
    /// count `page_bytes`). Only the plain FTL (`none`) takes a non-empty tail.
    ///
    /// Crash: in place, the partial program may tear (each bit cleared or not); the body and
    /// bytes programmed before stay as they were, so the host's record CRC decides, as for
    /// `write_delta`. Out of place, one program: torn it reads uncorrectable and the old
    /// copy (lower sequence) stays mapped.
    pub fn write_page(
        &mut self,
        lpn: Lpn,
        tag: u64,
        tail: &[u8],
        now: SimTime,
    ) -> Result<(SimTime, bool)> {
        self.core.check_lpn(lpn)?;
        let area = self.delta_area_bytes() as usize;
        if tail.iter().all(|b| *b == 0xFF) {
            return Ok((self.write_plain(lpn, tag, now)?, false));
        }
        if tail.len() > area {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!(
                    "a page write with {} delta-area bytes: the delta area (nand.append_bytes) is {area} bytes",
                    tail.len()
                ),
            });
        }
        self.maintain(now)?;
        if self.info.name == "none" {
            if let Some((ppa, off, patch)) = self.in_place_patch(lpn, tag, tail) {
                let ready = self.core.host_transfer_done(now);
                let abs = self.core.geo.page_bytes - area as u32 + off;
                let t = self
                    .core
                    .nand
                    .partial_program(ppa, None, Some((abs, &patch)), ready)?;
                self.core.stats.in_place_writes += 1;
                self.core.clock += 1;
                return Ok((self.done(t.end), true));
            }
        }
        let seq = self.next_tx_seq();
        let tx = crate::protocol::TxRef {
            host: sim::TxId(u64::MAX),
            seq,
        };
        let t = self.proto.write_plain_content(
            &mut self.core,
            tx,
            lpn,
            media::Content::TagTail(tag, tail.into()),
            now,
        )?;
        self.count_write();
        Ok((self.done(t), false))
    }

    /// In-Page Logging's log-sector write (Lee & Moon, SIGMOD 2007; the host's `ipl`):
    /// `bytes` at byte `offset` of the raw (untagged) page `lpn` maps to. Offset 0, or an
    /// unmapped page, starts a fresh log page: a program out of place. Otherwise a partial
    /// program of the sector into the same physical page when it is a raw page within its
    /// NOP and the bytes only clear bits (a sector of a log page written once); if not (NOP
    /// spent, an odd-MLC MSB page, plain MLC) the page's current bytes plus the sector are
    /// programmed out of place. Returns the ack and whether it was in place.
    pub fn write_sector(
        &mut self,
        lpn: Lpn,
        offset: u32,
        bytes: &[u8],
        now: SimTime,
    ) -> Result<(SimTime, bool)> {
        self.core.check_lpn(lpn)?;
        let end = offset as usize + bytes.len();
        if bytes.is_empty() || end > self.core.geo.page_bytes as usize {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!(
                    "a log sector of {} bytes at offset {offset} of a {} B page",
                    bytes.len(),
                    self.core.geo.page_bytes
                ),
            });
        }
        self.maintain(now)?;
        let mut image = vec![0xFF; end];
        if offset > 0 {
            if let Some(ppa) = self.core.lookup(lpn) {
                let img = self.core.nand.image();
                if let media::PageView::Programmed {
                    data: media::image::DataRef::Bytes(old),
                    ..
                } = img.view(ppa)
                {
                    let within = img.program_count(ppa) < img.nop_of(ppa);
                    let o = offset as usize;
                    let clears = bytes
                        .iter()
                        .enumerate()
                        .all(|(j, n)| n & !old.get(o + j).copied().unwrap_or(0xFF) == 0);
                    if within && clears {
                        let ready = self.core.host_transfer_done(now);
                        let t = self.core.nand.partial_program(
                            ppa,
                            None,
                            Some((offset, bytes)),
                            ready,
                        )?;
                        self.core.clock += 1;
                        return Ok((self.done(t.end), true));
                    }
                    if image.len() < old.len() {
                        image.resize(old.len(), 0xFF);
                    }
                    image[..old.len()].copy_from_slice(old);
                }
            }
        }
        image[offset as usize..end].copy_from_slice(bytes);
        let seq = self.next_tx_seq();
        let tx = crate::protocol::TxRef {
            host: sim::TxId(u64::MAX),
            seq,
        };
        let t = self.proto.write_plain_content(
            &mut self.core,
            tx,
            lpn,
            media::Content::Bytes(image.into()),
            now,
        )?;
        self.count_write();
        Ok((self.done(t), false))
    }

    /// The in-place program `write_page` can make: (page, offset in the delta area, bytes),
    /// or None when the image cannot be programmed over the page `lpn` maps to.
    fn in_place_patch(
        &self,
        lpn: Lpn,
        tag: u64,
        tail: &[u8],
    ) -> Option<(media::Ppa, u32, Vec<u8>)> {
        let ppa = self.core.lookup(lpn)?;
        let img = self.core.nand.image();
        if img.program_count(ppa) >= img.nop_of(ppa) {
            return None;
        }
        let media::PageView::Programmed {
            data:
                media::image::DataRef::Tag {
                    tag: stored,
                    tail: old,
                },
            ..
        } = img.view(ppa)
        else {
            return None;
        };
        if stored != tag {
            return None;
        }
        let old_at = |j: usize| old.get(j).copied().unwrap_or(0xFF);
        // Programming only clears bits: a bit set in the new image must still be set.
        if tail.iter().enumerate().any(|(j, n)| n & !old_at(j) != 0)
            || old.iter().skip(tail.len()).any(|b| *b != 0xFF)
        {
            return None;
        }
        let first = (0..tail.len()).find(|&j| tail[j] != old_at(j))?;
        let last = (0..tail.len()).rev().find(|&j| tail[j] != old_at(j))?;
        Some((ppa, first as u32, tail[first..=last].to_vec()))
    }

    /// Reads `lpn` (as `read`) and, for a tagged page, its delta area as stored (bytes never
    /// programmed read as 0xFF; shorter than the area when the tail was never written).
    pub fn read_delta(
        &mut self,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(ReadOutcome, Vec<u8>, SimTime)> {
        let (o, t) = self.read(lpn, now)?;
        let mut tail = Vec::new();
        if let (ReadOutcome::Tag(_), Some(ppa)) = (&o, self.core.lookup(lpn)) {
            if let media::PageView::Programmed {
                data: media::image::DataRef::Tag { tail: b, .. },
                ..
            } = self.core.nand.image().view(ppa)
            {
                tail = b.to_vec();
            }
        }
        Ok((o, tail, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tail_ones;
    use crate::DeviceConfig;

    fn dev(append: u32) -> Device {
        Device::in_memory(&cfg(append)).expect("device")
    }

    fn cfg(append: u32) -> DeviceConfig {
        let mut c = DeviceConfig::default();
        c.nand.channels = 1;
        c.nand.chips_per_channel = 1;
        c.nand.dies_per_chip = 1;
        c.nand.planes_per_die = 1;
        c.nand.blocks_per_plane = 16;
        c.nand.pages_per_block = 8;
        c.nand.page_bytes = 2048;
        c.nand.append_bytes = append;
        c.protocol.name = "none".into();
        c
    }

    #[test]
    fn appends_in_place_within_nop_and_reads_back() {
        let mut d = dev(64);
        let nop = d.core.nand.image().params().nop;
        let t = d.write_plain(Lpn(3), 7, SimTime::ZERO).unwrap();
        let ppa = d.core.lookup(Lpn(3)).unwrap();
        for k in 0..u32::from(nop) - 1 {
            let t2 = d.write_delta(Lpn(3), k * 4, &[k as u8; 4], t).unwrap();
            assert!(t2 > t);
        }
        // Same physical page, no remap, no invalidation.
        assert_eq!(d.core.lookup(Lpn(3)), Some(ppa));
        assert_eq!(d.core.stats.page_invalidations, 0);
        assert_eq!(d.core.stats.delta_writes, u64::from(nop) - 1);
        let (o, tail, _) = d.read_delta(Lpn(3), t).unwrap();
        assert_eq!(o, ReadOutcome::Tag(7));
        assert_eq!(&tail[..4], &[0, 0, 0, 0]);
        // NOP exhausted.
        assert!(matches!(
            d.write_delta(Lpn(3), 60, &[0; 4], t),
            Err(SsdError::Nand(_))
        ));
        // Rewriting out of place resets the delta area and counts one invalidation.
        d.write_plain(Lpn(3), 8, t).unwrap();
        let (_, tail, _) = d.read_delta(Lpn(3), t).unwrap();
        assert!(tail.iter().all(|b| *b == 0xFF));
        assert_eq!(d.core.stats.page_invalidations, 1);
    }

    #[test]
    fn write_page_programs_in_place_when_only_erased_bits_clear() {
        let mut d = dev(64);
        let t = d.write_plain(Lpn(2), 9, SimTime::ZERO).unwrap();
        let ppa = d.core.lookup(Lpn(2)).unwrap();
        // Same body, a record in the delta area: in place.
        let mut tail = vec![0xFF; 8];
        tail[..3].copy_from_slice(&[1, 2, 3]);
        let (t, inp) = d.write_page(Lpn(2), 9, &tail, t).unwrap();
        assert!(inp);
        assert_eq!(d.core.lookup(Lpn(2)), Some(ppa));
        assert_eq!(d.core.stats.in_place_writes, 1);
        // A second record after the first: in place again.
        tail[3..5].copy_from_slice(&[4, 5]);
        let (t, inp) = d.write_page(Lpn(2), 9, &tail, t).unwrap();
        assert!(inp);
        let (_, got, _) = d.read_delta(Lpn(2), t).unwrap();
        assert_eq!(&got[..5], &[1, 2, 3, 4, 5]);
        // A byte that would need a set bit: out of place, body and delta area together.
        tail[0] = 0xF1;
        let (t, inp) = d.write_page(Lpn(2), 9, &tail, t).unwrap();
        assert!(!inp);
        assert_ne!(d.core.lookup(Lpn(2)), Some(ppa));
        assert_eq!(d.core.stats.page_invalidations, 1);
        let (o, got, _) = d.read_delta(Lpn(2), t).unwrap();
        assert_eq!(o, ReadOutcome::Tag(9));
        assert_eq!(&got[..5], &[0xF1, 2, 3, 4, 5]);
        // A new body: out of place.
        let (_, inp) = d.write_page(Lpn(2), 10, &tail, t).unwrap();
        assert!(!inp);
    }

    #[test]
    fn write_page_on_odd_mlc_msb_pages_goes_out_of_place_in_one_program() {
        let mut c = cfg(64);
        c.nand.cell = media::CellType::Mlc;
        c.nand.nop = 4;
        c.ftl.mlc_mode = crate::modes::MlcMode::OddMlc;
        let mut d = Device::in_memory(&c).unwrap();
        let mut t = SimTime::ZERO;
        let (mut lsb, mut msb) = (0, 0);
        for i in 0..6u32 {
            t = d.write_plain(Lpn(i), u64::from(i) + 1, t).unwrap();
            let ppa = d.core.lookup(Lpn(i)).unwrap();
            let (t2, inp) = d.write_page(Lpn(i), u64::from(i) + 1, &[7, 7], t).unwrap();
            t = t2;
            assert_eq!(inp, d.core.geo.page_in_block(ppa).is_multiple_of(2));
            if inp {
                lsb += 1
            } else {
                msb += 1
            }
            let (_, got, _) = d.read_delta(Lpn(i), t).unwrap();
            assert_eq!(&got[..2], &[7, 7]);
        }
        assert!(lsb > 0 && msb > 0);
    }

    /// The ordering In-Place Appends' restart relies on without waiting for it
    /// (`host/src/update/ipa.rs`, the planted `ipa-appends-unordered`): consecutive writes
    /// to one page's delta area, and the out-of-place write before them, go to the physical
    /// page the lpn maps to, on one plane, which executes them in issue order. So an append
    /// issued before the previous one completed still starts after it ends, and the crash
    /// checker (at most one operation per plane in flight) never persists it alone.
    #[test]
    fn appends_to_one_page_start_after_the_previous_write_ends_even_when_issued_at_once() {
        let mut c = cfg(64);
        c.nand.planes_per_die = 2;
        c.nand.channels = 2;
        let mut d = Device::in_memory(&c).unwrap();
        // Other planes busy with unrelated writes, so the issue order is all that orders.
        let t0 = SimTime::ZERO;
        for l in 10..14 {
            d.write_plain(Lpn(l), u64::from(l), t0).unwrap();
        }
        d.core.nand.enable_log();
        // Every write issued at t0: none waits for the one before.
        d.write_plain(Lpn(3), 7, t0).unwrap();
        for k in 0..2u32 {
            d.write_delta(Lpn(3), k * 8, &[k as u8; 8], t0).unwrap();
        }
        // The block-interface form: the whole delta area, one more record in place.
        let mut tail = vec![0xFF; 32];
        tail[..8].fill(0);
        tail[8..16].fill(1);
        tail[16..18].copy_from_slice(&[1, 2]);
        let (_, inp) = d.write_page(Lpn(3), 7, &tail, t0).unwrap();
        assert!(inp, "the block-interface write went in place");
        let ppa = d.core.lookup(Lpn(3)).unwrap();
        let ops: Vec<_> = d
            .core
            .nand
            .take_log()
            .into_iter()
            .filter(|o| match &o.kind {
                media::OpKind::Program { ppa: p, .. }
                | media::OpKind::PartialProgram { ppa: p, .. } => *p == ppa,
                _ => false,
            })
            .collect();
        assert_eq!(ops.len(), 4, "one program and three appends of the page");
        for w in ops.windows(2) {
            assert!(
                w[1].start >= w[0].end,
                "an append started at {:?}, before the previous write of its page ended at {:?}",
                w[1].start,
                w[0].end
            );
        }
    }

    #[test]
    fn refuses_bad_appends() {
        let mut d = dev(32);
        assert!(d.write_delta(Lpn(1), 0, &[1], SimTime::ZERO).is_err()); // unmapped
        d.write_plain(Lpn(1), 5, SimTime::ZERO).unwrap();
        assert!(d
            .write_delta(Lpn(1), 30, &[1, 2, 3], SimTime::ZERO)
            .is_err()); // beyond area
        assert!(d.write_delta(Lpn(1), 0, &[], SimTime::ZERO).is_err());
        d.write_delta(Lpn(1), 0, &[0x0F], SimTime::ZERO).unwrap();
        // Setting a cleared bit is impossible without an erase.
        assert!(d.write_delta(Lpn(1), 0, &[0xF0], SimTime::ZERO).is_err());
        let mut none = dev(0);
        none.write_plain(Lpn(1), 5, SimTime::ZERO).unwrap();
        assert!(none.write_delta(Lpn(1), 0, &[1], SimTime::ZERO).is_err());
    }

    #[test]
    fn gc_migrates_the_delta_area() {
        let mut d = dev(32);
        let mut t = SimTime::ZERO;
        t = d.write_plain(Lpn(0), 1, t).unwrap();
        t = d.write_delta(Lpn(0), 0, &[0xAB, 0xCD], t).unwrap();
        let before = d.core.lookup(Lpn(0));
        // Churn other pages until GC has moved lpn 0.
        let mut tag = 100;
        let n = d.logical_pages();
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = 1 + ((x >> 33) % u64::from(n - 1)) as u32;
            tag += 1;
            t = d.write_plain(Lpn(l), tag, t).unwrap();
            if d.core.lookup(Lpn(0)) != before {
                break;
            }
        }
        assert_ne!(d.core.lookup(Lpn(0)), before, "GC never moved the page");
        let (o, tail, _) = d.read_delta(Lpn(0), t).unwrap();
        assert_eq!(o, ReadOutcome::Tag(1));
        assert_eq!(&tail[..2], &[0xAB, 0xCD]);
    }

    #[test]
    fn a_crash_inside_gc_keeps_the_copy_with_the_delta_area() {
        // A GC copy carries the original's sequence and, since the odd-MLC fix, its delta
        // area in the same program (`Content::TagTail`). Crash right after the copy's
        // program: two copies with one sequence and equal delta areas; recovery may keep
        // either, and both read the appended bytes. (Before the fix the copy took a second,
        // partial program; `tail_ones` kept the original when the crash fell between them.)
        let c = cfg(32);
        let mut d = Device::in_memory(&c).unwrap();
        let mut t = d.write_plain(Lpn(0), 1, SimTime::ZERO).unwrap();
        t = d.write_delta(Lpn(0), 0, &[0xAB, 0xCD], t).unwrap();
        let before = d.core.lookup(Lpn(0)).unwrap();
        let base = d.core.nand.image().clone();
        d.core.nand.enable_log();
        let n = d.logical_pages();
        let mut x = 99u64;
        let mut tag = 100;
        while d.core.lookup(Lpn(0)) == Some(before) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = 1 + ((x >> 33) % u64::from(n - 1)) as u32;
            tag += 1;
            t = d.write_plain(Lpn(l), tag, t).unwrap();
        }
        let to = d.core.lookup(Lpn(0)).unwrap();
        let ops = d.core.nand.take_log();
        let i = ops
            .iter()
            .rposition(|o| matches!(&o.kind, media::OpKind::Program { ppa, .. } if *ppa == to))
            .expect("the copy's program");
        assert!(
            matches!(
                &ops[i].kind,
                media::OpKind::Program {
                    content: media::Content::TagTail(1, _),
                    ..
                }
            ),
            "{:?}",
            ops[i].kind
        );
        assert!(
            !ops[i..].iter().any(
                |o| matches!(&o.kind, media::OpKind::PartialProgram { ppa, .. } if *ppa == to)
            ),
            "the copy is one program"
        );
        // Everything up to the copy's program persisted, nothing after.
        let mut img = base;
        for o in &ops[..=i] {
            img.apply(&o.kind).unwrap();
        }
        {
            let nand = media::Nand::from_image(img.clone(), c.nand.timing.clone());
            let core = crate::core::FtlCore::new(nand, c.effective_ftl().unwrap()).unwrap();
            assert_eq!(
                tail_ones(&core, to),
                tail_ones(&core, before),
                "{:?}",
                ops[i].kind
            );
        }
        let nand = media::Nand::from_image(img, c.nand.timing.clone());
        let (mut r, _) = Device::recover(&c, nand).unwrap();
        let (o, tail, _) = r.read_delta(Lpn(0), SimTime::ZERO).unwrap();
        assert_eq!(o, ReadOutcome::Tag(1));
        assert_eq!(&tail[..2], &[0xAB, 0xCD]);
    }
}
