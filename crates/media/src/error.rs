//! Errors of the media layer. Physics violations are programmer errors of the layer above
//! (a firmware bug), but they are values so that a fuzzed or corrupt input can never crash
//! the process; the FTL turns them into its own error type with `From`.

use crate::{BlockId, Ppa};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NandError {
    /// The address is outside the device.
    OutOfRange {
        what: &'static str,
        index: u64,
        limit: u64,
    },
    /// A first program of a page that is not erased.
    NotErased { ppa: Ppa },
    /// A partial program of a page that was never programmed.
    NotProgrammed { ppa: Ppa },
    /// A reprogram would set a bit from 0 to 1 (only erase can do that).
    BitsWouldSet { ppa: Ppa, offset: u32 },
    /// More programs than the page's NOP allows between erases.
    NopExceeded { ppa: Ppa, nop: u8 },
    /// In-order programming: a page below the block's highest programmed page.
    OutOfOrder { ppa: Ppa, last_programmed: u32 },
    /// The page cannot be programmed in its block's mode (an MSB page in pSLC mode).
    PageNotProgrammable { ppa: Ppa, mode: &'static str },
    /// The block is bad (worn out).
    BadBlock { block: BlockId },
    /// The block's last erase was interrupted; it must be erased again before programming.
    UnstableBlock { block: BlockId },
    /// A reprogram of a page whose contents are uncorrectable.
    Uncorrectable { ppa: Ppa },
    /// The operation's size does not fit the page.
    SizeMismatch {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    /// A block mode that this cell type or block state does not allow.
    BadMode {
        block: BlockId,
        reason: &'static str,
    },
    /// A configuration that cannot describe a device.
    Config { key: &'static str, reason: String },
    /// A device image file that cannot be read back.
    CorruptImage { reason: String },
    /// An I/O error on a file-backed image.
    Io { reason: String },
}

impl fmt::Display for NandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use NandError::*;
        match self {
            OutOfRange { what, index, limit } => {
                write!(f, "{what} {index} out of range (device has {limit})")
            }
            NotErased { ppa } => write!(f, "program of {ppa}, which is not erased"),
            NotProgrammed { ppa } => write!(f, "partial program of {ppa}, which was never programmed"),
            BitsWouldSet { ppa, offset } => {
                write!(f, "reprogram of {ppa} would set bits 0->1 at byte {offset}")
            }
            NopExceeded { ppa, nop } => write!(f, "{ppa} programmed more than NOP={nop} times"),
            OutOfOrder { ppa, last_programmed } => write!(
                f,
                "out-of-order program of {ppa}: page {last_programmed} of its block is already programmed"
            ),
            PageNotProgrammable { ppa, mode } => {
                write!(f, "{ppa} cannot be programmed in {mode} mode")
            }
            BadBlock { block } => write!(f, "{block} is bad"),
            UnstableBlock { block } => {
                write!(f, "{block} was not fully erased (interrupted erase); erase it first")
            }
            Uncorrectable { ppa } => write!(f, "{ppa} is uncorrectable"),
            SizeMismatch { what, got, expected } => {
                write!(f, "{what}: got {got} bytes, expected {expected}")
            }
            BadMode { block, reason } => write!(f, "mode change of {block}: {reason}"),
            Config { key, reason } => write!(f, "{key}: {reason}"),
            CorruptImage { reason } => write!(f, "corrupt device image: {reason}"),
            Io { reason } => write!(f, "device image i/o: {reason}"),
        }
    }
}

impl std::error::Error for NandError {}
