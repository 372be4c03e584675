//! The operation log: every mutating NAND operation with the instant it started to change
//! the medium and the instant it completed.
//!
//! The crash checker's model of a power cut at time `T` is built from this log alone:
//! operations with `end <= T` persisted; operations with `start <= T < end` were in
//! progress and each may have persisted, not persisted, or (at most one) been torn;
//! operations with `start > T` had not begun. `start` is the moment the cells start to
//! change (after the data transfer for a program), so operations queued behind others on
//! the same plane never count as in progress together: a plane executes one command at a
//! time, in issue order.

use crate::{BlockId, BlockMode, Content, Ppa};
use sim::SimTime;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    Program {
        ppa: Ppa,
        content: Content,
        oob: Box<[u8]>,
    },
    PartialProgram {
        ppa: Ppa,
        oob: Option<Box<[u8]>>,
        patch: Option<(u32, Box<[u8]>)>,
    },
    Erase {
        block: BlockId,
    },
    /// A block-mode change: controller metadata, durable at once (`start == end`).
    SetMode {
        block: BlockId,
        mode: BlockMode,
    },
}

impl OpKind {
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Program { .. } => "program",
            OpKind::PartialProgram { .. } => "partial program",
            OpKind::Erase { .. } => "erase",
            OpKind::SetMode { .. } => "set mode",
        }
    }

    /// The block the operation touches.
    pub fn block(&self, g: &crate::Geometry) -> BlockId {
        match self {
            OpKind::Program { ppa, .. } | OpKind::PartialProgram { ppa, .. } => g.block_of(*ppa),
            OpKind::Erase { block } | OpKind::SetMode { block, .. } => *block,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedOp {
    pub kind: OpKind,
    /// When the operation began changing the medium.
    pub start: SimTime,
    /// When it completed.
    pub end: SimTime,
}
