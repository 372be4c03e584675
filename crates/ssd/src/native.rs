//! Host-managed erase units on the plain FTL (`none`): the block-level interface In-Page
//! Logging needs (Lee & Moon, SIGMOD 2007, §3–4; in-place-appends.md §1: IPL "writes the
//! logs to the separate, reserved Flash pages on the same Flash block the original data
//! is", and a merge writes the merged pages to a fresh block and erases the old one). A
//! page-mapping FTL cannot promise that two logical pages share a block, so the host takes
//! whole blocks out of the FTL's free pools (`FtlCore::reserve_block`: never allocated to a
//! stream, never collected, never wear-levelled), programs their pages itself in ascending
//! order, appends to a page by partial programs within NOP, and gives a block back with an
//! explicit erase (`FtlCore::release_block`). NoFTL regions (in-place-appends.md §1, [6,7])
//! are this interface.
//!
//! OOB of a host-managed page (14 bytes, `none`'s width):
//!
//! ```text
//! [0]       page kind 0x06 NATIVE (oob::kind::NATIVE)
//! [1..5]    owner word a, u32 LE   (ipl: the erase unit)
//! [5..13]   owner word b, u64 LE   (ipl: the unit's generation, one per merge)
//! [13]      owner byte c           (ipl: data pages the block's merge programmed)
//! ```
//!
//! Recovery (`protocols/none.rs`): the scan finds every block holding a NATIVE page and
//! keeps it owned (`RecoveryCtx::claim_block`), so nothing the FTL does after a crash
//! programs or erases it; `native_scan` lists them for the host, whose recovery decides
//! which ones it still needs. A block whose erase was torn reads uncorrectable or erased:
//! it is not claimed and goes back to the FTL as a dirty free block (erased before reuse).
//!
//! Refused (configuration errors naming the key): any protocol but `none` (the others own
//! their OOB); mapping checkpoints (`ftl.checkpoint_interval` > 0: recovery would scan only
//! the checkpoint's scan set and miss the host's blocks).
//!
//! Counters: a program or read of a host-managed page counts as a host write or read
//! (`FtlStats::host_writes` / `host_reads`); the erase of a released block in
//! `FtlStats::native_erases`; partial programs are counted by the host.

use super::Device;
use crate::core::{outcome_of, ReadOutcome};
use crate::error::{Result, SsdError};
use crate::oob::{get_u32, get_u64, kind, put_u32, put_u64};
use media::{BlockId, Content, PageView, Ppa, PuId};
use sim::SimTime;

/// The owner's words in a host-managed page's OOB (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NativeOob {
    pub a: u32,
    pub b: u64,
    pub c: u8,
}

impl NativeOob {
    fn encode(self, width: usize) -> Vec<u8> {
        let mut o = vec![0xFF; width];
        o[0] = kind::NATIVE;
        put_u32(&mut o, 1, self.a);
        put_u64(&mut o, 5, self.b);
        o[13] = self.c;
        o
    }

    /// The owner words of a NATIVE page's OOB, None for any other page.
    pub fn decode(oob: &[u8]) -> Option<NativeOob> {
        if oob.len() < 14 || oob[0] != kind::NATIVE {
            return None;
        }
        Some(NativeOob {
            a: get_u32(oob, 1),
            b: get_u64(oob, 5),
            c: oob[13],
        })
    }
}

impl Device {
    fn native_check(&self) -> Result<()> {
        if self.info.name != "none" {
            return Err(SsdError::Config {
                key: "protocol.name".into(),
                reason: format!(
                    "host-managed erase units run on the plain FTL (protocol none), not {}",
                    self.info.name
                ),
            });
        }
        if self.core.checkpoints_enabled() {
            return Err(SsdError::Config {
                key: "ftl.checkpoint_interval".into(),
                reason: "host-managed erase units need recovery to scan every block; set ftl.checkpoint_interval = 0".into(),
            });
        }
        Ok(())
    }

    /// Whether host-managed erase units can run on this device (`native_check`).
    pub fn native_supported(&self) -> Result<()> {
        self.native_check()
    }

    /// Page slots of a host-managed block (pSLC: LSB pages only).
    pub fn native_slots(&self) -> u32 {
        self.core.geo.pages_per_block / self.core.page_stride()
    }

    /// Partial programs a slot of a host-managed block allows (its first program included).
    pub fn native_nop(&self, block: BlockId) -> u8 {
        let ppa = self.native_ppa(block, 0);
        self.core.nand.image().nop_of(ppa)
    }

    fn native_ppa(&self, block: BlockId, slot: u32) -> Ppa {
        self.core.geo.ppa(block, slot * self.core.page_stride())
    }

    fn owned_slot(&self, block: BlockId, slot: u32) -> Result<Ppa> {
        if !self.core.is_owned(block) || slot >= self.native_slots() {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!("host-managed page {slot} of {block}, which the host does not own"),
            });
        }
        Ok(self.native_ppa(block, slot))
    }

    /// Takes an erased block out of the FTL's free pools for the host: from the unit the
    /// striping policy picks, else any unit with a spare free block, else after GC
    /// reclaims victims in a unit until it has one. Each unit keeps `ftl.gc_min_free_blocks` (at least one) free blocks for
    /// GC. Returns the block and when it is known erased (programs into it queue behind
    /// that anyway).
    pub fn native_take_block(&mut self, now: SimTime) -> Result<(BlockId, SimTime)> {
        self.native_check()?;
        let keep = self.core.cfg.gc_min_free_blocks.max(1);
        let pus = self.core.geo.pus();
        let first = self.core.next_pu();
        for k in 0..pus {
            let pu = PuId((first.0 + k) % pus);
            if let Some(x) = self.core.reserve_block(pu, keep, now)? {
                self.maintain(now)?;
                return Ok(x);
            }
        }
        // Every unit is down to the blocks GC keeps: reclaim victims beyond the threshold
        // (GC's own work, counted as such) until a unit has a block to spare.
        for k in 0..pus {
            let pu = PuId((first.0 + k) % pus);
            for _ in 0..self.core.geo.blocks_per_plane {
                if let Some(x) = self.core.reserve_block(pu, keep, now)? {
                    self.maintain(now)?;
                    return Ok(x);
                }
                if crate::gc::collect_one(&mut self.core, self.proto.as_mut(), pu, now)?.is_none() {
                    break;
                }
            }
        }
        Err(SsdError::OutOfSpace {
            detail: format!(
                "no unit has a free block beyond the {keep} kept for GC for a host-managed erase unit"
            ),
        })
    }

    /// Programs slot `slot` of host-managed `block` (erased, slots in ascending order) with
    /// `content` and the owner words `oob`; returns the ack (the program's completion).
    pub fn native_program(
        &mut self,
        block: BlockId,
        slot: u32,
        content: Content,
        oob: NativeOob,
        now: SimTime,
    ) -> Result<SimTime> {
        let ppa = self.owned_slot(block, slot)?;
        let bytes = oob.encode(self.core.nand.image().oob_used());
        let ready = self.core.host_transfer_done(now);
        let t = self.core.program_owned(ppa, content, &bytes, ready)?;
        self.core.stats.host_writes += 1;
        Ok(self.done(t.end))
    }

    /// Partial-programs `bytes` at byte `offset` of slot `slot` of host-managed `block`
    /// (programmed, within NOP, clearing bits only: the medium refuses anything else).
    pub fn native_append(
        &mut self,
        block: BlockId,
        slot: u32,
        offset: u32,
        bytes: &[u8],
        now: SimTime,
    ) -> Result<SimTime> {
        let ppa = self.owned_slot(block, slot)?;
        let t = self
            .core
            .nand
            .partial_program(ppa, None, Some((offset, bytes)), now)?;
        self.core.clock += 1;
        Ok(self.done(t.end))
    }

    /// Reads slot `slot` of `block`: what it holds and its owner words (None: not a
    /// host-managed page, or erased or uncorrectable).
    pub fn native_read(
        &mut self,
        block: BlockId,
        slot: u32,
        now: SimTime,
    ) -> Result<(ReadOutcome, Option<NativeOob>, SimTime)> {
        if block.0 >= self.core.geo.blocks() || slot >= self.native_slots() {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!("host-managed page {slot} of {block}: beyond the device"),
            });
        }
        let ppa = self.native_ppa(block, slot);
        let (t, view) = self.core.read_page(ppa, now)?;
        let oob = match &view {
            PageView::Programmed { oob, .. } => NativeOob::decode(oob),
            _ => None,
        };
        let out = outcome_of(view);
        self.core.stats.host_reads += 1;
        Ok((out, oob, t.end))
    }

    /// Erases host-managed `block` (not before `ready`) and gives it back to the FTL's free
    /// pool; returns the erase's completion.
    pub fn native_erase(&mut self, block: BlockId, ready: SimTime) -> Result<SimTime> {
        if !self.core.is_owned(block) {
            return Err(SsdError::Unsupported {
                protocol: self.info.name,
                what: format!("erase of {block}, which the host does not own"),
            });
        }
        let t = self.core.release_block(block, ready)?;
        self.core.stats.native_erases += 1;
        Ok(self.done(t.end))
    }

    /// Recovery: the blocks the host owned at the crash (those recovery claimed: every block
    /// holding a NATIVE page), in block order.
    pub fn native_blocks(&self) -> Vec<BlockId> {
        (0..self.core.geo.blocks())
            .map(BlockId)
            .filter(|b| self.core.is_owned(*b))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Device, DeviceConfig, ReadOutcome};
    use media::Content;
    use sim::SimTime;

    fn cfg() -> DeviceConfig {
        let mut c = DeviceConfig::default();
        c.protocol.name = "none".into();
        let n = &mut c.nand;
        n.channels = 1;
        n.chips_per_channel = 1;
        n.dies_per_chip = 1;
        n.planes_per_die = 2;
        n.blocks_per_plane = 16;
        n.pages_per_block = 8;
        n.page_bytes = 2048;
        n.oob_bytes = 64;
        c.ftl.gc_threshold = 0.0;
        c.ftl.gc_min_free_blocks = 2;
        c
    }

    #[test]
    fn host_blocks_survive_recovery_and_are_never_collected() {
        let mut d = Device::in_memory(&cfg()).unwrap();
        let (b, t) = d.native_take_block(SimTime::ZERO).unwrap();
        let o = super::NativeOob { a: 7, b: 3, c: 1 };
        let t = d.native_program(b, 0, Content::Tag(42), o, t).unwrap();
        let t = d
            .native_program(b, 1, Content::Bytes(vec![0xFF; 2048].into()), o, t)
            .unwrap();
        let t = d.native_append(b, 1, 0, &[1, 2, 3], t).unwrap();
        let (r, oob, _) = d.native_read(b, 0, t).unwrap();
        assert_eq!((r, oob), (ReadOutcome::Tag(42), Some(o)));
        // Fill the rest of the device through the FTL: GC must never pick the host's block.
        let lp = d.logical_pages();
        let mut now = t;
        for i in 0..3 * lp {
            now = d
                .write_plain(sim::Lpn(i % lp), u64::from(i) + 100, now)
                .unwrap();
        }
        assert!(d.core.is_owned(b));
        let nand = d.into_nand();
        let (mut r, _) = Device::recover(&cfg(), nand).unwrap();
        assert_eq!(r.native_blocks(), vec![b]);
        let (out, oob, _) = r.native_read(b, 1, SimTime::ZERO).unwrap();
        match out {
            ReadOutcome::Bytes(v) => assert_eq!(&v[..3], &[1, 2, 3]),
            other => panic!("{other:?}"),
        }
        assert_eq!(oob, Some(o));
        let e = r.native_erase(b, SimTime::ZERO).unwrap();
        assert!(e > SimTime::ZERO);
        assert!(!r.core.is_owned(b));
    }
}
