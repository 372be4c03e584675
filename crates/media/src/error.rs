//! Errors of the media layer. Physics violations are programmer errors of the layer above
//! (a firmware bug), but they are values so that a fuzzed or corrupt input can never crash
//! the process; the FTL turns them into its own error type with `From`.

use crate::{BlockId, Ppa};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NandError {
    /// The address is outside the device.
    #[error("{what} {index} out of range (device has {limit})")]
    OutOfRange {
        what: &'static str,
        index: u64,
        limit: u64,
    },
    /// A first program of a page that is not erased.
    #[error("program of {ppa}, which is not erased")]
    NotErased { ppa: Ppa },
    /// A partial program of a page that was never programmed.
    #[error("partial program of {ppa}, which was never programmed")]
    NotProgrammed { ppa: Ppa },
    /// A reprogram would set a bit from 0 to 1 (only erase can do that).
    #[error("reprogram of {ppa} would set bits 0->1 at byte {offset}")]
    BitsWouldSet { ppa: Ppa, offset: u32 },
    /// More programs than the page's NOP allows between erases.
    #[error("{ppa} programmed more than NOP={nop} times")]
    NopExceeded { ppa: Ppa, nop: u8 },
    /// In-order programming: a page below the block's highest programmed page.
    #[error(
        "out-of-order program of {ppa}: page {last_programmed} of its block is already programmed"
    )]
    OutOfOrder { ppa: Ppa, last_programmed: u32 },
    /// The page cannot be programmed in its block's mode (an MSB page in pSLC mode).
    #[error("{ppa} cannot be programmed in {mode} mode")]
    PageNotProgrammable { ppa: Ppa, mode: &'static str },
    /// The block is bad (worn out).
    #[error("{block} is bad")]
    BadBlock { block: BlockId },
    /// The block's last erase was interrupted; it must be erased again before programming.
    #[error("{block} was not fully erased (interrupted erase); erase it first")]
    UnstableBlock { block: BlockId },
    /// A reprogram of a page whose contents are uncorrectable.
    #[error("{ppa} is uncorrectable")]
    Uncorrectable { ppa: Ppa },
    /// The operation's size does not fit the page.
    #[error("{what}: got {got} bytes, expected {expected}")]
    SizeMismatch {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    /// A block mode that this cell type or block state does not allow.
    #[error("mode change of {block}: {reason}")]
    BadMode {
        block: BlockId,
        reason: &'static str,
    },
    /// A configuration that cannot describe a device.
    #[error("{key}: {reason}")]
    Config { key: &'static str, reason: String },
    /// A device image file that cannot be read back.
    #[error("corrupt device image: {reason}")]
    CorruptImage { reason: String },
    /// An I/O error on a file-backed image.
    #[error("device image i/o: {reason}")]
    Io { reason: String },
}
