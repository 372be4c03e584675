//! Device geometry and physical addresses.
//!
//! A physical page is named two ways: `PhysAddr` spells out every level (channel, chip, die,
//! plane, block, page) as the hardware would, and `Ppa` is the same page as one flat index,
//! which is what the hot paths index arrays with. Blocks are numbered plane-major so that the
//! blocks of one parallel unit (a plane, `PuId`) are contiguous:
//!
//! ```text
//! pu    = ((channel * chips + chip) * dies + die) * planes + plane
//! block = pu * blocks_per_plane + block_in_plane
//! ppa   = block * pages_per_block + page
//! ```

use crate::NandError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A physical page, as a flat index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[repr(transparent)]
pub struct Ppa(pub u32);

// SAFETY: a `#[repr(transparent)]` `u32`: no padding, every bit pattern is a value.
unsafe impl sim::mem::Plain for Ppa {}

/// A physical block, as a flat index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BlockId(pub u32);

/// A parallel unit: one plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PuId(pub u32);

impl Ppa {
    pub const NONE: Ppa = Ppa(u32::MAX);
}

impl fmt::Display for Ppa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ppa {}", self.0)
    }
}
impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {}", self.0)
    }
}
impl fmt::Display for PuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pu {}", self.0)
    }
}

/// A physical page spelled out level by level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhysAddr {
    pub channel: u32,
    pub chip: u32,
    pub die: u32,
    pub plane: u32,
    pub block: u32,
    pub page: u32,
}

impl fmt::Display for PhysAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ch{}/chip{}/die{}/pl{}/blk{}/pg{}",
            self.channel, self.chip, self.die, self.plane, self.block, self.page
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Bytes in a page's data area.
    pub page_bytes: u32,
    /// Bytes in a page's out-of-band (spare) area.
    pub oob_bytes: u32,
}

impl Default for Geometry {
    /// The small default device: 2 channels × 1 chip × 1 die × 2 planes, 64 blocks of 64
    /// 4 KiB pages per plane (64 MiB raw).
    fn default() -> Self {
        Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 64,
            pages_per_block: 64,
            page_bytes: 4096,
            oob_bytes: 128,
        }
    }
}

fn positive(key: &'static str, v: u32) -> Result<(), NandError> {
    if v == 0 {
        Err(NandError::Config {
            key,
            reason: "must be at least 1".into(),
        })
    } else {
        Ok(())
    }
}

impl Geometry {
    /// Rejects geometries that cannot describe a device or that overflow the address types.
    pub fn validate(&self) -> Result<(), NandError> {
        positive("nand.channels", self.channels)?;
        positive("nand.chips_per_channel", self.chips_per_channel)?;
        positive("nand.dies_per_chip", self.dies_per_chip)?;
        positive("nand.planes_per_die", self.planes_per_die)?;
        positive("nand.blocks_per_plane", self.blocks_per_plane)?;
        if self.pages_per_block < 2 || self.pages_per_block > 4096 {
            return Err(NandError::Config {
                key: "nand.pages_per_block",
                reason: format!("must be in 2..=4096, got {}", self.pages_per_block),
            });
        }
        if self.page_bytes < 512 || self.page_bytes > 65536 || !self.page_bytes.is_power_of_two() {
            return Err(NandError::Config {
                key: "nand.page_bytes",
                reason: format!(
                    "must be a power of two in 512..=65536, got {}",
                    self.page_bytes
                ),
            });
        }
        if self.oob_bytes < 16 || self.oob_bytes > 4096 {
            return Err(NandError::Config {
                key: "nand.oob_bytes",
                reason: format!("must be in 16..=4096, got {}", self.oob_bytes),
            });
        }
        let pages = u64::from(self.channels)
            * u64::from(self.chips_per_channel)
            * u64::from(self.dies_per_chip)
            * u64::from(self.planes_per_die)
            * u64::from(self.blocks_per_plane)
            * u64::from(self.pages_per_block);
        if pages >= u64::from(u32::MAX) {
            return Err(NandError::Config {
                key: "nand",
                reason: format!("{pages} pages is more than the 2^32-1 a page address can name"),
            });
        }
        Ok(())
    }

    pub fn pus(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip * self.planes_per_die
    }
    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    pub fn blocks(&self) -> u32 {
        self.pus() * self.blocks_per_plane
    }
    pub fn pages(&self) -> u32 {
        self.blocks() * self.pages_per_block
    }
    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.pages()) * u64::from(self.page_bytes)
    }

    #[inline]
    pub fn block_of(&self, ppa: Ppa) -> BlockId {
        BlockId(ppa.0 / self.pages_per_block)
    }
    #[inline]
    pub fn page_in_block(&self, ppa: Ppa) -> u32 {
        ppa.0 % self.pages_per_block
    }
    #[inline]
    pub fn ppa(&self, block: BlockId, page: u32) -> Ppa {
        debug_assert!(page < self.pages_per_block);
        Ppa(block.0 * self.pages_per_block + page)
    }
    #[inline]
    pub fn first_page(&self, block: BlockId) -> Ppa {
        Ppa(block.0 * self.pages_per_block)
    }
    #[inline]
    pub fn pu_of_block(&self, block: BlockId) -> PuId {
        PuId(block.0 / self.blocks_per_plane)
    }
    #[inline]
    pub fn pu_of(&self, ppa: Ppa) -> PuId {
        self.pu_of_block(self.block_of(ppa))
    }
    /// The blocks of one parallel unit, in order.
    pub fn blocks_of_pu(&self, pu: PuId) -> impl Iterator<Item = BlockId> {
        let first = pu.0 * self.blocks_per_plane;
        (first..first + self.blocks_per_plane).map(BlockId)
    }
    #[inline]
    pub fn channel_of_pu(&self, pu: PuId) -> u32 {
        pu.0 / (self.chips_per_channel * self.dies_per_chip * self.planes_per_die)
    }
    #[inline]
    pub fn die_of_pu(&self, pu: PuId) -> u32 {
        pu.0 / self.planes_per_die
    }

    /// The fully spelled-out address of a page.
    pub fn addr(&self, ppa: Ppa) -> PhysAddr {
        let page = ppa.0 % self.pages_per_block;
        let block = ppa.0 / self.pages_per_block;
        let blk = block % self.blocks_per_plane;
        let pu = block / self.blocks_per_plane;
        let plane = pu % self.planes_per_die;
        let die_g = pu / self.planes_per_die;
        let die = die_g % self.dies_per_chip;
        let chip_g = die_g / self.dies_per_chip;
        let chip = chip_g % self.chips_per_channel;
        let channel = chip_g / self.chips_per_channel;
        PhysAddr {
            channel,
            chip,
            die,
            plane,
            block: blk,
            page,
        }
    }

    /// The flat index of a spelled-out address, or an error naming the level out of range.
    pub fn ppa_of(&self, a: PhysAddr) -> Result<Ppa, NandError> {
        let check = |what: &'static str, v: u32, lim: u32| {
            if v < lim {
                Ok(())
            } else {
                Err(NandError::OutOfRange {
                    what,
                    index: v.into(),
                    limit: lim.into(),
                })
            }
        };
        check("channel", a.channel, self.channels)?;
        check("chip", a.chip, self.chips_per_channel)?;
        check("die", a.die, self.dies_per_chip)?;
        check("plane", a.plane, self.planes_per_die)?;
        check("block", a.block, self.blocks_per_plane)?;
        check("page", a.page, self.pages_per_block)?;
        let pu = ((a.channel * self.chips_per_channel + a.chip) * self.dies_per_chip + a.die)
            * self.planes_per_die
            + a.plane;
        Ok(Ppa((pu * self.blocks_per_plane + a.block)
            * self.pages_per_block
            + a.page))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 3,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 5,
            pages_per_block: 7,
            page_bytes: 4096,
            oob_bytes: 128,
        }
    }

    #[test]
    fn addresses_round_trip_through_every_level() {
        let g = g();
        for p in 0..g.pages() {
            let a = g.addr(Ppa(p));
            assert_eq!(g.ppa_of(a).unwrap(), Ppa(p));
        }
    }

    #[test]
    fn pu_channel_and_die_are_consistent_with_addr() {
        let g = g();
        for p in (0..g.pages()).step_by(3) {
            let a = g.addr(Ppa(p));
            let pu = g.pu_of(Ppa(p));
            assert_eq!(g.channel_of_pu(pu), a.channel);
            assert_eq!(
                g.die_of_pu(pu),
                (a.channel * g.chips_per_channel + a.chip) * g.dies_per_chip + a.die
            );
        }
    }

    #[test]
    fn impossible_geometries_are_rejected_with_the_key() {
        let mut bad = g();
        bad.pages_per_block = 1;
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("nand.pages_per_block"), "{e}");
        let mut bad = g();
        bad.channels = 0;
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("nand.channels"));
        let mut huge = g();
        huge.blocks_per_plane = 1 << 30;
        assert!(huge.validate().is_err());
        let mut odd = g();
        odd.page_bytes = 3000;
        assert!(odd
            .validate()
            .unwrap_err()
            .to_string()
            .contains("page_bytes"));
    }

    #[test]
    fn out_of_range_level_is_named() {
        let g = g();
        let e = g
            .ppa_of(PhysAddr {
                channel: 0,
                chip: 3,
                die: 0,
                plane: 0,
                block: 0,
                page: 0,
            })
            .unwrap_err();
        assert!(e.to_string().contains("chip 3"), "{e}");
    }
}
