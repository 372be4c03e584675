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
//! checksums each record). GC migrates a page *with* its delta area (program the tag, then
//! partial-program the stored tail, `gc/mod.rs`), so appended bytes survive migration; the
//! host folds deltas only when it writes the page out of place.
//!
//! Counters: `FtlStats::delta_writes` / `delta_bytes` (host→device bytes of appends);
//! `host_writes` counts out-of-place page writes, `page_invalidations` the pages they
//! invalidated.

use super::Device;
use crate::core::ReadOutcome;
use crate::error::{Result, SsdError};
use sim::{Lpn, SimTime};

/// Recovery tie-break for GC duplicates (`none`): a GC copy carries the original's write
/// sequence, and its delta area is programmed after the copy (gc/mod.rs), so while both
/// exist the copy's tail is the original's with some bits possibly not yet cleared (copy
/// cut short), or with more records cleared (appends after the move). The copy with fewer
/// 1 bits in its delta area is the one to keep. 0 when the device has no delta area.
pub(crate) fn tail_ones(core: &crate::core::FtlCore, ppa: media::Ppa) -> u32 {
    match core.nand.image().view(ppa) {
        media::PageView::Programmed {
            data: media::image::DataRef::Tag { tail, .. },
            ..
        } => {
            let stored: u32 = tail.iter().map(|b| b.count_ones()).sum();
            // Bytes never stored read as 0xFF.
            let area = core.nand.image().params().append_bytes as usize;
            stored + 8 * area.saturating_sub(tail.len()) as u32
        }
        _ => 0,
    }
}

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
        self.maintain(now)?;
        // GC inside maintain may have moved the page (with its delta area).
        let ppa = self.core.lookup(lpn).unwrap_or(ppa);
        let page_bytes = self.core.geo.page_bytes;
        let abs = page_bytes - area + offset;
        let t = self
            .core
            .nand
            .partial_program(ppa, None, Some((abs, bytes)), now)?;
        self.core.stats.delta_writes += 1;
        self.core.stats.delta_bytes += bytes.len() as u64;
        Ok(self.done(t.end))
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
        // A GC copy carries the original's sequence and gets its delta area by a second
        // (partial) program. Crash right after the copy's program: two copies with one
        // sequence, only the original holding the appended bytes; recovery must keep the
        // original (`tail_ones`'s tie-break). Without the tie-break recovery keeps the first
        // scanned copy; in this schedule that happens to be the original too, so this test
        // alone does not tell the two apart — the tie-break itself is checked below.
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
            .position(|o| matches!(&o.kind, media::OpKind::Program { ppa, .. } if *ppa == to))
            .expect("the copy's program");
        let j = i + ops[i..]
            .iter()
            .position(
                |o| matches!(&o.kind, media::OpKind::PartialProgram { ppa, .. } if *ppa == to),
            )
            .expect("the copy's delta-area program");
        // Everything issued before the delta-area program persisted, nothing after.
        let mut img = base;
        for o in &ops[..j] {
            img.apply(&o.kind).unwrap();
        }
        {
            let nand = media::Nand::from_image(img.clone(), c.nand.timing.clone());
            let core = crate::core::FtlCore::new(nand, c.effective_ftl().unwrap()).unwrap();
            assert!(tail_ones(&core, to) > tail_ones(&core, before));
        }
        let nand = media::Nand::from_image(img, c.nand.timing.clone());
        let (mut r, _) = Device::recover(&c, nand).unwrap();
        let (o, tail, _) = r.read_delta(Lpn(0), SimTime::ZERO).unwrap();
        assert_eq!(o, ReadOutcome::Tag(1));
        assert_eq!(&tail[..2], &[0xAB, 0xCD]);
    }
}
