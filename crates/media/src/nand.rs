//! `Nand`: an image plus timing, counters, the optional operation log and an optional file.
//!
//! Every operation takes the instant its inputs are ready (`ready`: the firmware has waited
//! for whatever it depends on) and returns when it started changing the medium and when it
//! completed. Physics is checked before anything is charged or logged: an operation that
//! breaks a rule is rejected whole.
//!
//! Timing model:
//! - program: the data crosses the channel (`bytes / channel_mbps`) once both the channel and
//!   the target array are free, then the array programs for `program_ns`;
//! - partial program: as program, moving only the changed bytes, for `partial_program_ns`;
//! - read: the array senses for `read_ns`, then the page (or only its OOB) crosses the channel;
//! - erase: the array is busy for `erase_ns`.
//!
//! The array resource is a plane, or a die when `interleave = "die"` (planes of a die then
//! serialize); it executes operations in the order they are issued. Channels are shared by
//! all chips on them and place each transfer in the first idle gap long enough for it, so
//! work booked far ahead on one plane (a GC job) does not hold the bus from the others.

use crate::file::ImageFile;
use crate::image::ImageParams;
use crate::{
    BlockId, BlockMode, CellType, Content, DataMode, Geometry, LoggedOp, NandError, NandImage,
    OpKind, PageView, Ppa, PuId,
};
use serde::{Deserialize, Serialize};
use sim::{Calendar, Resource, SimTime};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interleave {
    Plane,
    Die,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NandTiming {
    pub read_ns: u64,
    pub program_ns: u64,
    pub partial_program_ns: u64,
    pub erase_ns: u64,
    /// Channel bandwidth in MB/s (10^6 bytes per second); 0 means transfers are free.
    pub channel_mbps: u64,
    pub interleave: Interleave,
    /// Extra array time per program, partial program or erase, uniform in `[0, jitter_ns]`
    /// and drawn from `jitter_seed` and the operation's sequence number (0: none). The crash
    /// checker's timing profiles use it to make reorderings across planes reachable.
    pub jitter_ns: u64,
    pub jitter_seed: u64,
    /// MLC: program time of an MSB page (odd page in its block), ns; 0 = `program_ns`
    /// for every page. `program_ns` is then the LSB page's time (in-place-appends.md,
    /// "Flash types": LSB pages program faster; pSLC blocks use LSB pages only).
    pub program_msb_ns: u64,
}

impl Default for NandTiming {
    /// SLC figures of the Samsung K9F8G08 datasheet used by TxFlash and LightTx.
    fn default() -> Self {
        NandTiming {
            read_ns: 25_000,
            program_ns: 200_000,
            partial_program_ns: 200_000,
            erase_ns: 1_500_000,
            channel_mbps: 400,
            interleave: Interleave::Plane,
            jitter_ns: 0,
            jitter_seed: 0,
            program_msb_ns: 0,
        }
    }
}

impl NandTiming {
    fn xfer_ns(&self, bytes: u64) -> u64 {
        if self.channel_mbps == 0 {
            0
        } else {
            (bytes * 1_000).div_ceil(self.channel_mbps)
        }
    }
}

/// The `[nand]` section of a configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NandConfig {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
    pub oob_bytes: u32,
    pub cell: CellType,
    /// Partial programs allowed per SLC (or LSB) page between erases.
    pub nop: u8,
    pub in_order_program: bool,
    pub endurance: u32,
    pub data_mode: DataMode,
    pub append_bytes: u32,
    pub timing: NandTiming,
}

impl Default for NandConfig {
    fn default() -> Self {
        let g = Geometry::default();
        NandConfig {
            channels: g.channels,
            chips_per_channel: g.chips_per_channel,
            dies_per_chip: g.dies_per_chip,
            planes_per_die: g.planes_per_die,
            blocks_per_plane: g.blocks_per_plane,
            pages_per_block: g.pages_per_block,
            page_bytes: g.page_bytes,
            oob_bytes: g.oob_bytes,
            cell: CellType::Slc,
            nop: 4,
            in_order_program: true,
            endurance: 100_000,
            data_mode: DataMode::Tag,
            append_bytes: 0,
            timing: NandTiming::default(),
        }
    }
}

impl NandConfig {
    pub fn geometry(&self) -> Geometry {
        Geometry {
            channels: self.channels,
            chips_per_channel: self.chips_per_channel,
            dies_per_chip: self.dies_per_chip,
            planes_per_die: self.planes_per_die,
            blocks_per_plane: self.blocks_per_plane,
            pages_per_block: self.pages_per_block,
            page_bytes: self.page_bytes,
            oob_bytes: self.oob_bytes,
        }
    }

    /// The image parameters for a protocol whose OOB layout uses `oob_used` bytes.
    pub fn image_params(&self, oob_used: u32) -> ImageParams {
        ImageParams {
            geometry: self.geometry(),
            cell: self.cell,
            nop: self.nop,
            in_order_program: self.in_order_program,
            endurance: self.endurance,
            data_mode: self.data_mode,
            oob_used,
            append_bytes: self.append_bytes,
        }
    }
}

/// When an operation started changing the medium and when it completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpTiming {
    pub start: SimTime,
    pub end: SimTime,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NandCounters {
    pub reads: u64,
    pub oob_reads: u64,
    pub programs: u64,
    pub partial_programs: u64,
    pub erases: u64,
    pub bytes_transferred: u64,
    /// Programs that were copybacks (included in `programs`).
    pub copybacks: u64,
}

pub struct Nand {
    image: NandImage,
    timing: NandTiming,
    arrays: Vec<Resource>,
    /// Channels back-fill idle gaps (`sim::Calendar`): a GC job booked on one plane must not
    /// hold the bus from the other chips on it; arrays stay in issue order.
    channels: Vec<Calendar>,
    counters: NandCounters,
    log: Option<Vec<LoggedOp>>,
    file: Option<ImageFile>,
    /// Mutating operations issued so far (the jitter stream's position).
    jitter_n: u64,
}

/// A copy of the medium, its resources' timing state, counters and log, in memory. A
/// file-backed NAND's copy does not write through to the file (two devices must not write
/// one image file); callers that need the file refuse to copy one (`is_file_backed`).
impl Clone for Nand {
    fn clone(&self) -> Nand {
        Nand {
            image: self.image.clone(),
            timing: self.timing.clone(),
            arrays: self.arrays.clone(),
            channels: self.channels.clone(),
            counters: self.counters,
            log: self.log.clone(),
            file: None,
            jitter_n: self.jitter_n,
        }
    }
}

impl Nand {
    /// Whether the medium is written through to an image file.
    pub fn is_file_backed(&self) -> bool {
        self.file.is_some()
    }

    /// Cuts power and hands the medium over to a restart without copying it: returns what
    /// `Nand::from_image(self.image().clone(), self.timing().clone())` returns (the same
    /// pages, idle resources, zero counters, no log), and leaves this NAND with no pages
    /// (`NandImage::hollow`: its counters and timing state stay readable, any page access
    /// is out of range). For the end of a run whose medium nobody reads again. None for a
    /// medium written through to a file or logging its operations: a restart must not
    /// write the file, and the log belongs to the run (copy those).
    pub fn take_for_restart(&mut self) -> Option<Nand> {
        if self.file.is_some() || self.log.is_some() {
            return None;
        }
        let hollow = self.image.hollow();
        let image = std::mem::replace(&mut self.image, hollow);
        Some(Nand::from_image(image, self.timing.clone()))
    }

    /// A fresh, fully erased device in memory.
    pub fn new(params: ImageParams, timing: NandTiming) -> Result<Nand, NandError> {
        Ok(Nand::from_image(NandImage::new(params)?, timing))
    }

    /// A device whose medium is `image` (as found after a crash, say), with idle resources.
    pub fn from_image(image: NandImage, timing: NandTiming) -> Nand {
        let g = image.geometry();
        let arrays = match timing.interleave {
            Interleave::Plane => g.pus(),
            Interleave::Die => g.dies(),
        } as usize;
        let channels = g.channels as usize;
        Nand {
            image,
            timing,
            arrays: vec![Resource::default(); arrays],
            channels: vec![Calendar::default(); channels],
            counters: NandCounters::default(),
            log: None,
            file: None,
            jitter_n: 0,
        }
    }

    /// A fresh device written through to `path` (full data mode only).
    pub fn create_file(
        path: &Path,
        params: ImageParams,
        timing: NandTiming,
        label: &str,
    ) -> Result<Nand, NandError> {
        let image = NandImage::new(params)?;
        let file = ImageFile::create(path, &image, label)?;
        let mut nand = Nand::from_image(image, timing);
        nand.file = Some(file);
        Ok(nand)
    }

    /// Opens an image file written by `create_file` (in this or another process); returns the
    /// device and the label stored with it.
    pub fn open_file(path: &Path, timing: NandTiming) -> Result<(Nand, String), NandError> {
        let (file, image, label) = ImageFile::open(path)?;
        let mut nand = Nand::from_image(image, timing);
        nand.file = Some(file);
        Ok((nand, label))
    }

    /// Reads only the label and parameters of an image file.
    pub fn peek_file(path: &Path) -> Result<(ImageParams, String), NandError> {
        let (_, image, label) = ImageFile::open(path)?;
        Ok((image.params().clone(), label))
    }

    pub fn geometry(&self) -> &Geometry {
        self.image.geometry()
    }
    pub fn image(&self) -> &NandImage {
        &self.image
    }
    pub fn into_image(self) -> NandImage {
        self.image
    }
    pub fn timing(&self) -> &NandTiming {
        &self.timing
    }
    pub fn counters(&self) -> NandCounters {
        self.counters
    }
    pub fn data_mode(&self) -> DataMode {
        self.image.params().data_mode
    }

    /// Starts recording every mutating operation (for the crash checker).
    pub fn enable_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }
    pub fn take_log(&mut self) -> Vec<LoggedOp> {
        self.log.take().unwrap_or_default()
    }
    pub fn log(&self) -> Option<&[LoggedOp]> {
        self.log.as_deref()
    }

    #[inline]
    fn array_of(&self, pu: PuId) -> usize {
        match self.timing.interleave {
            Interleave::Plane => pu.0 as usize,
            Interleave::Die => self.image.geometry().die_of_pu(pu) as usize,
        }
    }

    /// The instant the array of `pu` becomes free (for "least busy" allocation policies).
    pub fn array_free_at(&self, pu: PuId) -> SimTime {
        self.arrays[self.array_of(pu)].busy_until
    }

    /// Total busy nanoseconds of every array resource (for utilisation).
    pub fn array_busy_ns(&self) -> u64 {
        self.arrays.iter().map(|r| r.busy_ns).sum()
    }

    /// The next operation's extra array time (`timing.jitter_ns`): a SplitMix64 hash of the
    /// seed and the operation's number, so a run stays a pure function of its configuration.
    fn jitter(&mut self) -> u64 {
        if self.timing.jitter_ns == 0 {
            return 0;
        }
        self.jitter_n += 1;
        let mut z = (self.timing.jitter_seed ^ self.jitter_n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        z % (self.timing.jitter_ns + 1)
    }

    fn record(&mut self, kind: impl FnOnce() -> OpKind, t: OpTiming) {
        if let Some(log) = self.log.as_mut() {
            log.push(LoggedOp {
                kind: kind(),
                start: t.start,
                end: t.end,
            });
        }
    }

    fn transfer_then_array(
        &mut self,
        pu: PuId,
        ready: SimTime,
        bytes: u64,
        array_ns: u64,
    ) -> OpTiming {
        let array_ns = array_ns + self.jitter();
        let a = self.array_of(pu);
        let ch = self.image.geometry().channel_of_pu(pu) as usize;
        let t0 = self.arrays[a].earliest(ready);
        let xfer = self.timing.xfer_ns(bytes);
        let (_, xfer_end) = self.channels[ch].occupy(t0, xfer);
        let (start, end) = self.arrays[a].occupy(xfer_end, array_ns);
        self.counters.bytes_transferred += bytes;
        OpTiming { start, end }
    }

    fn array_then_transfer(
        &mut self,
        pu: PuId,
        ready: SimTime,
        array_ns: u64,
        bytes: u64,
    ) -> OpTiming {
        let a = self.array_of(pu);
        let ch = self.image.geometry().channel_of_pu(pu) as usize;
        let (start, sensed) = self.arrays[a].occupy(ready, array_ns);
        let xfer = self.timing.xfer_ns(bytes);
        let (_, end) = self.channels[ch].occupy(sensed, xfer);
        self.counters.bytes_transferred += bytes;
        OpTiming { start, end }
    }

    fn sync_page(&self, ppa: Ppa) -> Result<(), NandError> {
        match &self.file {
            Some(f) => {
                f.write_page(&self.image, ppa)?;
                f.write_block(&self.image, self.image.geometry().block_of(ppa), false)
            }
            None => Ok(()),
        }
    }

    /// First program of an erased page.
    pub fn program(
        &mut self,
        ppa: Ppa,
        content: Content,
        oob: &[u8],
        ready: SimTime,
    ) -> Result<OpTiming, NandError> {
        self.image.check_program(ppa, &content, oob, true)?;
        let g = self.image.geometry();
        let pu = g.pu_of(ppa);
        let bytes = u64::from(g.page_bytes) + oob.len() as u64;
        let msb = self.timing.program_msb_ns > 0
            && self.image.params().cell == CellType::Mlc
            && !g.page_in_block(ppa).is_multiple_of(2);
        let array_ns = if msb {
            self.timing.program_msb_ns
        } else {
            self.timing.program_ns
        };
        let t = self.transfer_then_array(pu, ready, bytes, array_ns);
        self.image.apply_program(ppa, &content, oob);
        self.counters.programs += 1;
        self.record(
            || OpKind::Program {
                ppa,
                content,
                oob: oob.into(),
            },
            t,
        );
        self.sync_page(ppa)?;
        Ok(t)
    }

    /// Copyback (internal data move) of `src`'s page, already sensed into its plane's page
    /// register by `read_for_copyback`, into the erased page `ppa` with new `oob`: the data
    /// never crosses the channel, only the rewritten OOB goes in. Possible only inside one
    /// plane (the page register is per plane); from another plane the data crosses the
    /// channel as for `program`. Same physics and log entry as `program`.
    pub fn copyback_program(
        &mut self,
        src: Ppa,
        ppa: Ppa,
        content: Content,
        oob: &[u8],
        ready: SimTime,
    ) -> Result<OpTiming, NandError> {
        let g = self.image.geometry();
        if g.pu_of(src) != g.pu_of(ppa) {
            return self.program(ppa, content, oob, ready);
        }
        self.image.check_program(ppa, &content, oob, true)?;
        let pu = g.pu_of(ppa);
        let t = self.transfer_then_array(pu, ready, oob.len() as u64, self.timing.program_ns);
        self.image.apply_program(ppa, &content, oob);
        self.counters.programs += 1;
        self.counters.copybacks += 1;
        self.record(
            || OpKind::Program {
                ppa,
                content,
                oob: oob.into(),
            },
            t,
        );
        self.sync_page(ppa)?;
        Ok(t)
    }

    /// Senses a page into its plane's register for a copyback, moving only its OOB over the
    /// channel (the controller needs it to place the copy).
    pub fn read_for_copyback(
        &mut self,
        ppa: Ppa,
        ready: SimTime,
    ) -> Result<(OpTiming, PageView<'_>), NandError> {
        self.image.check_ppa(ppa)?;
        let pu = self.image.geometry().pu_of(ppa);
        let bytes = self.image.oob_used() as u64;
        let t = self.array_then_transfer(pu, ready, self.timing.read_ns, bytes);
        self.counters.reads += 1;
        Ok((t, self.image.view(ppa)))
    }

    /// Partial program: new OOB contents (clearing bits only) and/or bytes into the data area.
    pub fn partial_program(
        &mut self,
        ppa: Ppa,
        oob: Option<&[u8]>,
        patch: Option<(u32, &[u8])>,
        ready: SimTime,
    ) -> Result<OpTiming, NandError> {
        self.image.check_partial(ppa, oob, patch)?;
        let pu = self.image.geometry().pu_of(ppa);
        let bytes = oob.map_or(0, |o| o.len()) + patch.map_or(0, |(_, b)| b.len());
        let t = self.transfer_then_array(pu, ready, bytes as u64, self.timing.partial_program_ns);
        self.image.apply_partial(ppa, oob, patch);
        self.counters.partial_programs += 1;
        self.record(
            || OpKind::PartialProgram {
                ppa,
                oob: oob.map(Into::into),
                patch: patch.map(|(o, b)| (o, b.into())),
            },
            t,
        );
        self.sync_page(ppa)?;
        Ok(t)
    }

    /// Reads a whole page (data and OOB).
    pub fn read(
        &mut self,
        ppa: Ppa,
        ready: SimTime,
    ) -> Result<(OpTiming, PageView<'_>), NandError> {
        self.image.check_ppa(ppa)?;
        let g = self.image.geometry();
        let pu = g.pu_of(ppa);
        let bytes = u64::from(g.page_bytes) + self.image.oob_used() as u64;
        let t = self.array_then_transfer(pu, ready, self.timing.read_ns, bytes);
        self.counters.reads += 1;
        Ok((t, self.image.view(ppa)))
    }

    /// Reads a page but transfers only its OOB area.
    pub fn read_oob(
        &mut self,
        ppa: Ppa,
        ready: SimTime,
    ) -> Result<(OpTiming, PageView<'_>), NandError> {
        self.image.check_ppa(ppa)?;
        let pu = self.image.geometry().pu_of(ppa);
        let bytes = self.image.oob_used() as u64;
        let t = self.array_then_transfer(pu, ready, self.timing.read_ns, bytes);
        self.counters.oob_reads += 1;
        Ok((t, self.image.view(ppa)))
    }

    /// Erases a block. Returns the timing and whether the block just wore out (went bad).
    pub fn erase(&mut self, block: BlockId, ready: SimTime) -> Result<(OpTiming, bool), NandError> {
        self.image.check_block(block)?;
        if self.image.is_bad(block) {
            return Err(NandError::BadBlock { block });
        }
        let pu = self.image.geometry().pu_of_block(block);
        let a = self.array_of(pu);
        let erase_ns = self.timing.erase_ns + self.jitter();
        let (start, end) = self.arrays[a].occupy(ready, erase_ns);
        let t = OpTiming { start, end };
        let worn_out = self.image.erase(block)?;
        self.counters.erases += 1;
        self.record(|| OpKind::Erase { block }, t);
        if let Some(f) = &self.file {
            f.write_block(&self.image, block, true)?;
        }
        Ok((t, worn_out))
    }

    /// Changes an erased MLC block's mode (controller metadata: durable at once).
    pub fn set_block_mode(
        &mut self,
        block: BlockId,
        mode: BlockMode,
        now: SimTime,
    ) -> Result<(), NandError> {
        self.image.set_mode(block, mode)?;
        self.record(
            || OpKind::SetMode { block, mode },
            OpTiming {
                start: now,
                end: now,
            },
        );
        if let Some(f) = &self.file {
            f.write_block(&self.image, block, false)?;
        }
        Ok(())
    }
}
