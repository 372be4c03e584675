//! Errors of the SSD layer. Misuse of the device interface (an unknown transaction, a write
//! after commit, a concurrency pattern the protocol cannot support) and operating conditions
//! (out of space, a corrupt image found by recovery) are values; nothing here panics on input.

use media::NandError;
use sim::{Lpn, TxId};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SsdError {
    Nand(NandError),
    /// The logical page is beyond the device's exported capacity.
    LpnOutOfRange {
        lpn: Lpn,
        logical_pages: u32,
    },
    /// BEGIN of a transaction id that is already active.
    TxInUse {
        tx: TxId,
    },
    /// A WRITE, COMMIT or ABORT naming a transaction that was never begun.
    UnknownTx {
        tx: TxId,
    },
    /// A WRITE, COMMIT or ABORT naming a transaction that already finished.
    TxFinished {
        tx: TxId,
        how: &'static str,
    },
    /// More pages than the configured maximum transaction size.
    TxTooLarge {
        tx: TxId,
        max_pages: u32,
    },
    /// More concurrently active transactions than configured.
    TooManyActive {
        max: u32,
    },
    /// A request the protocol cannot honour (an isolation level, concurrent writes to a page).
    Unsupported {
        protocol: &'static str,
        what: String,
    },
    /// No free space could be reclaimed.
    OutOfSpace {
        detail: String,
    },
    /// Recovery found an image it cannot make sense of.
    CorruptImage {
        detail: String,
    },
    /// A configuration value that cannot work.
    Config {
        key: String,
        reason: String,
    },
    /// An unknown protocol name.
    UnknownProtocol {
        name: String,
        known: Vec<&'static str>,
    },
}

impl From<NandError> for SsdError {
    fn from(e: NandError) -> Self {
        match e {
            NandError::CorruptImage { reason } => SsdError::CorruptImage { detail: reason },
            NandError::Config { key, reason } => SsdError::Config {
                key: key.into(),
                reason,
            },
            other => SsdError::Nand(other),
        }
    }
}

impl fmt::Display for SsdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SsdError::*;
        match self {
            Nand(e) => write!(f, "nand: {e}"),
            LpnOutOfRange { lpn, logical_pages } => {
                write!(
                    f,
                    "{lpn} is beyond the device's {logical_pages} logical pages"
                )
            }
            TxInUse { tx } => write!(f, "BEGIN of {tx}, which is already active"),
            UnknownTx { tx } => write!(f, "{tx} was never begun"),
            TxFinished { tx, how } => write!(f, "{tx} already {how}"),
            TxTooLarge { tx, max_pages } => {
                write!(
                    f,
                    "{tx} exceeds the maximum transaction size of {max_pages} pages"
                )
            }
            TooManyActive { max } => write!(f, "more than {max} concurrently active transactions"),
            Unsupported { protocol, what } => write!(f, "protocol {protocol} cannot {what}"),
            OutOfSpace { detail } => write!(f, "out of space: {detail}"),
            CorruptImage { detail } => write!(f, "corrupt device image: {detail}"),
            Config { key, reason } => write!(f, "{key}: {reason}"),
            UnknownProtocol { name, known } => {
                write!(f, "unknown protocol '{name}' (known: {})", known.join(", "))
            }
        }
    }
}

impl std::error::Error for SsdError {}

pub type Result<T, E = SsdError> = std::result::Result<T, E>;
