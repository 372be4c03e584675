//! The media layer: emulated NAND flash (and, later, PCM and disks).
//!
//! The NAND model enforces the physics a firmware engineer relies on and reports every
//! violation as an error value, never silently: programming only clears bits, at most NOP
//! programs per page between erases, optional in-order first programming within a block,
//! erase sets a block to all 1s and costs one P/E cycle, worn-out blocks go bad, MLC pages
//! allow one program unless their block runs in pSLC or odd-MLC mode.
//!
//! State changes apply when an operation is issued; the timing model (per-plane or per-die
//! array resources and per-channel buses) says when it starts and completes. When logging is
//! on, every mutating operation is recorded with its start and end time so that the crash
//! checker can rebuild the image that would survive a power cut at any instant.

pub mod disk;
pub mod error;
mod file;
pub mod geometry;
pub mod image;
pub mod nand;
pub mod oplog;
mod payloads;
pub mod pcm;
pub mod tier_file;

pub use error::NandError;
pub use geometry::{BlockId, Geometry, PhysAddr, Ppa, PuId};
pub use image::{BlockMode, CellType, Content, DataMode, NandImage, PageView, TornKind};
pub use nand::{Interleave, Nand, NandConfig, NandCounters, NandTiming, OpTiming};
pub use oplog::{LoggedOp, OpKind};
