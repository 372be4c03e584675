//! MLC block modes for In-Place Appends (in-place-appends.md §3, "Flash types and program
//! interference"): `ftl.mlc_mode`.
//!
//! - `mlc` (default): every page of an MLC block is programmed once; no appends
//!   (`Device::write_delta` is refused by the medium). On SLC devices the only mode.
//! - `pslc`: pseudo-SLC. Only LSB pages (even pages, counting from 0 — the paper's
//!   odd-numbered pages counting from 1) are used, each allowing `nand.nop` programs, so
//!   appends work on every data page; a block holds half as many data pages, and the
//!   exported logical space halves with it. The FTL addresses a block's k-th data page at
//!   page 2k (`FtlCore::page_stride`), its summary page at the last LSB page.
//! - `odd-mlc`: every page is used; LSB pages allow `nand.nop` programs (appends), MSB
//!   pages one, so an append to a page that landed on an MSB page is refused
//!   (`Device::can_append` says so beforehand) and the host writes it out of place.
//!
//! The mode is set on every block when the device is formatted (`core::format_modes`), except the
//! root-log blocks of mapping checkpoints, which stay normal MLC (they are written a whole
//! page at a time in page order). It is part of the medium (kept across erases and in
//! image files), so recovery finds it; the FTL takes the page stride from the same key.
//!
//! Latencies: on MLC `nand.timing.program_ns` is the LSB page's program time and
//! `nand.timing.program_msb_ns` the MSB page's (0: one figure for both).
//!
//! Not modelled: program interference (the reason for the modes), TLC.

use crate::error::{Result, SsdError};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MlcMode {
    #[default]
    Mlc,
    Pslc,
    OddMlc,
}

impl MlcMode {
    pub fn name(self) -> &'static str {
        match self {
            MlcMode::Mlc => "mlc",
            MlcMode::Pslc => "pslc",
            MlcMode::OddMlc => "odd-mlc",
        }
    }

    pub(crate) fn block_mode(self) -> media::BlockMode {
        match self {
            MlcMode::Mlc => media::BlockMode::Normal,
            MlcMode::Pslc => media::BlockMode::PSlc,
            MlcMode::OddMlc => media::BlockMode::OddMlc,
        }
    }

    /// Physical pages per data page slot in a block (2 in pSLC: LSB pages only).
    pub fn stride(self) -> u32 {
        if self == MlcMode::Pslc {
            2
        } else {
            1
        }
    }
}

/// Checks the mode against the cell type (errors name the key).
pub fn validate(mode: MlcMode, cell: media::CellType, pages_per_block: u32) -> Result<()> {
    if mode != MlcMode::Mlc && cell == media::CellType::Slc {
        return Err(SsdError::Config {
            key: "ftl.mlc_mode".into(),
            reason: format!(
                "is \"{}\" but the device is SLC (nand.cell = \"slc\"); pSLC and odd-MLC are MLC block modes",
                mode.name()
            ),
        });
    }
    if mode == MlcMode::Pslc && pages_per_block < 4 {
        return Err(SsdError::Config {
            key: "ftl.mlc_mode".into(),
            reason: format!("pSLC needs at least 4 pages per block, got {pages_per_block}"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Device, DeviceConfig};
    use sim::{Lpn, SimTime};

    fn cfg(mode: MlcMode) -> DeviceConfig {
        let mut c = DeviceConfig::default();
        c.nand.channels = 1;
        c.nand.chips_per_channel = 1;
        c.nand.dies_per_chip = 1;
        c.nand.planes_per_die = 1;
        c.nand.blocks_per_plane = 16;
        c.nand.pages_per_block = 8;
        c.nand.page_bytes = 2048;
        c.nand.append_bytes = 64;
        c.nand.cell = media::CellType::Mlc;
        c.nand.nop = 4;
        c.nand.timing.program_ns = 500_000;
        c.nand.timing.program_msb_ns = 1_900_000;
        c.ftl.mlc_mode = mode;
        c.protocol.name = "none".into();
        c
    }

    #[test]
    fn pslc_halves_capacity_and_appends_everywhere() {
        let full = Device::in_memory(&cfg(MlcMode::Mlc)).unwrap();
        let half = Device::in_memory(&cfg(MlcMode::Pslc)).unwrap();
        assert!(half.logical_pages() * 2 <= full.logical_pages() + 16);
        assert!(half.logical_pages() < full.logical_pages());
        let mut d = half;
        let mut t = SimTime::ZERO;
        let n = d.logical_pages();
        // Fill and churn through GC; every page must be LSB and appendable.
        for i in 0..(4 * n) {
            let l = Lpn(i % n);
            t = d.write_plain(l, u64::from(i) + 1, t).unwrap();
            let ppa = d.core.lookup(l).unwrap();
            assert!(d.core.geo.page_in_block(ppa).is_multiple_of(2), "{ppa:?}");
            assert!(d.can_append(l));
            t = d.write_delta(l, 0, &[0x0F], t).unwrap();
        }
        assert!(d.core.stats.gc_erases > 0);
    }

    #[test]
    fn odd_mlc_appends_only_to_lsb_pages_and_msb_programs_are_slower() {
        let mut d = Device::in_memory(&cfg(MlcMode::OddMlc)).unwrap();
        let mut t = SimTime::ZERO;
        let (mut lsb, mut msb) = (0, 0);
        for i in 0..6u32 {
            let t0 = t;
            t = d.write_plain(Lpn(i), u64::from(i) + 1, t).unwrap();
            let ppa = d.core.lookup(Lpn(i)).unwrap();
            let even = d.core.geo.page_in_block(ppa).is_multiple_of(2);
            assert_eq!(d.can_append(Lpn(i)), even);
            if even {
                lsb += 1;
                assert!(t.since(t0) < 1_900_000);
                d.write_delta(Lpn(i), 0, &[0], t).unwrap();
            } else {
                msb += 1;
                assert!(t.since(t0) >= 1_900_000);
                assert!(d.write_delta(Lpn(i), 0, &[0], t).is_err());
            }
        }
        assert!(lsb > 0 && msb > 0);
    }

    /// Regression: on odd-MLC, GC moving a page that carries appended delta bytes onto an
    /// MSB page failed with `NopExceeded` (the copy was programmed, then its delta area
    /// partial-programmed — a second program an MSB page refuses). Found by review of a
    /// risk the appends' design named (docs/FTL.md, "The FTL", appends); GC programs
    /// the copy whole (`Content::TagTail`). Without the fix this test fails with the error.
    #[test]
    fn odd_mlc_gc_moves_appended_pages_onto_msb_pages() {
        let mut c = cfg(MlcMode::OddMlc);
        c.nand.blocks_per_plane = 32;
        c.ftl.over_provisioning = 0.15;
        let mut d = Device::in_memory(&c).unwrap();
        let mut t = SimTime::ZERO;
        let n = d.logical_pages();
        let mut tails = vec![None; n as usize];
        let mut onto_msb = 0;
        // Cold pages (the lower half) carry appends; hot pages churn so GC moves them.
        // Interleaved, so every block holds cold pages GC must move.
        for i in 0..n {
            let l = if i % 2 == 0 { i / 2 } else { n / 2 + i / 2 };
            t = d.write_plain(Lpn(l), u64::from(i) + 1, t).unwrap();
        }
        for i in 0..n / 2 {
            if d.can_append(Lpn(i)) {
                t = d.write_delta(Lpn(i), 0, &[i as u8 & 0x7F], t).unwrap();
                tails[i as usize] = Some(i as u8 & 0x7F);
            }
        }
        let mut x = 7u64;
        for i in 0..(6 * n) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = Lpn(n / 2 + ((x >> 33) % u64::from(n - n / 2)) as u32);
            t = d.write_plain(l, u64::from(i) + 1000, t).unwrap();
            // Appends go to LSB pages only, so an appended page on an MSB page was moved
            // there by GC.
            for k in 0..n / 2 {
                if tails[k as usize].is_some() {
                    let ppa = d.core.lookup(Lpn(k)).unwrap();
                    if !d.core.geo.page_in_block(ppa).is_multiple_of(2) {
                        onto_msb += 1;
                        assert!(!d.can_append(Lpn(k)));
                    }
                }
            }
        }
        assert!(
            onto_msb > 0,
            "GC never moved an appended page onto an MSB page: {:?} n={n} appended={}",
            d.core.stats,
            tails.iter().flatten().count()
        );
        for (k, b) in tails.iter().enumerate() {
            let (_, tail, _) = d.read_delta(Lpn(k as u32), t).unwrap();
            match b {
                Some(b) => assert_eq!(tail.first(), Some(b), "lpn {k}"),
                None => assert!(tail.iter().all(|x| *x == 0xFF), "lpn {k}"),
            }
        }
    }

    /// Regression: `can_append(lpn)` true, then `write_delta(lpn)` failed with `NopExceeded
    /// { nop: 1 }` on odd-MLC: `write_delta` ran pending GC *before* its append, GC moved the
    /// page onto an MSB page, and the append went there. An append needs no free page, so
    /// GC now runs after it and the page stays where `can_append` saw it. Found by
    /// `commitlab reproduce --paper ipa --quick` (TPC-B [2×4] odd-MLC on an aged device).
    #[test]
    fn can_append_holds_for_the_next_write_delta_while_gc_is_pending() {
        let mut c = cfg(MlcMode::OddMlc);
        c.nand.blocks_per_plane = 32;
        let mut d = Device::in_memory(&c).unwrap();
        let mut t = SimTime::ZERO;
        let n = d.logical_pages();
        for i in 0..n {
            let l = if i % 2 == 0 { i / 2 } else { n / 2 + i / 2 };
            t = d.write_plain(Lpn(l), u64::from(i) + 1, t).unwrap();
        }
        let mut used = vec![0u32; n as usize];
        let (mut x, mut appends) = (7u64, 0);
        for i in 0..(6 * n) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let hot = Lpn(n / 2 + ((x >> 33) % u64::from(n - n / 2)) as u32);
            t = d.write_plain(hot, u64::from(i) + 1000, t).unwrap();
            // Right after a write that left GC pending: an appendable cold page of the block
            // with the fewest mapped pages (greedy GC's likely victim).
            if !d.core.needs_gc(media::PuId(0)) {
                continue;
            }
            let mut valid = std::collections::BTreeMap::new();
            for l in 0..n {
                if let Some(p) = d.core.lookup(Lpn(l)) {
                    *valid.entry(d.core.geo.block_of(p)).or_insert(0u32) += 1;
                }
            }
            let Some(k) = (0..n / 2)
                .filter(|&k| d.can_append(Lpn(k)) && used[k as usize] < 60)
                .min_by_key(|&k| valid[&d.core.geo.block_of(d.core.lookup(Lpn(k)).unwrap())])
            else {
                continue;
            };
            {
                let off = used[k as usize];
                t = d
                    .write_delta(Lpn(k), off, &[0x5A], t)
                    .unwrap_or_else(|e| panic!("append {appends} to lpn {k}: {e}"));
                used[k as usize] += 1;
                appends += 1;
            }
        }
        assert!(
            appends > 100 && d.core.stats.gc_erases > 0,
            "{:?}",
            d.core.stats
        );
    }

    #[test]
    fn plain_mlc_refuses_appends_and_slc_refuses_modes() {
        let mut d = Device::in_memory(&cfg(MlcMode::Mlc)).unwrap();
        let t = d.write_plain(Lpn(0), 1, SimTime::ZERO).unwrap();
        assert!(!d.can_append(Lpn(0)));
        assert!(d.write_delta(Lpn(0), 0, &[0], t).is_err());
        let mut c = cfg(MlcMode::Pslc);
        c.nand.cell = media::CellType::Slc;
        assert!(matches!(
            Device::in_memory(&c),
            Err(SsdError::Config { key, .. }) if key == "ftl.mlc_mode"
        ));
    }

    #[test]
    fn pslc_survives_recovery() {
        for extra in 0..8 {
            pslc_recovers_after(2 + extra);
        }
    }

    #[test]
    fn pslc_survives_recovery_with_mapping_checkpoints() {
        for extra in [2, 5, 9] {
            pslc_recovers_after_ckpt(extra, 16);
        }
    }

    fn pslc_recovers_after(extra: u32) {
        pslc_recovers_after_ckpt(extra, 0);
    }

    fn pslc_recovers_after_ckpt(extra: u32, checkpoint_interval: u64) {
        let mut c = cfg(MlcMode::Pslc);
        c.nand.pages_per_block = 16;
        c.nand.blocks_per_plane = 24;
        c.ftl.checkpoint_interval = checkpoint_interval;
        let mut d = Device::in_memory(&c).unwrap();
        let mut t = SimTime::ZERO;
        let n = d.logical_pages();
        // 2n + 3 writes leave a partly written open block, which recovery scans slot by
        // slot (LSB pages only); a scan by physical page stops at the first erased MSB
        // page and loses the pages after it (planted and caught: every lpn is checked).
        let mut last = vec![0u64; n as usize];
        for i in 0..(2 * n + extra) {
            t = d.write_plain(Lpn(i % n), u64::from(i) + 1, t).unwrap();
            last[(i % n) as usize] = u64::from(i) + 1;
        }
        let l1 = Lpn(1);
        t = d.write_delta(l1, 0, &[0xAB], t).unwrap();
        let nand = media::Nand::from_image(d.core.nand.image().clone(), c.nand.timing.clone());
        let (mut r, _) = Device::recover(&c, nand).unwrap();
        let (_, tail, _) = r.read_delta(l1, t).unwrap();
        assert_eq!(tail[0], 0xAB);
        for (l, tag) in last.iter().enumerate() {
            let (o, _) = r.read(Lpn(l as u32), t).unwrap();
            assert_eq!(o, crate::ReadOutcome::Tag(*tag), "lpn {l}");
        }
        // Writing continues on LSB pages only.
        for i in 0..n {
            t = r.write_plain(Lpn(i), 1_000 + u64::from(i), t).unwrap();
            let ppa = r.core.lookup(Lpn(i)).unwrap();
            assert!(r.core.geo.page_in_block(ppa).is_multiple_of(2));
        }
    }
}
