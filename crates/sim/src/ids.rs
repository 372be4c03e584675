//! Identifier newtypes shared by every layer, so that a logical page number can never be
//! passed where a transaction id is expected.
//!
//! Physical addresses (`Ppa`, `BlockId`) belong to the medium and live in `media`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Logical page number: the address space a host sees.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Lpn(pub u32);

/// A device transaction id, as carried on the wire between host and device (`BEGIN(tx)`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct TxId(pub u64);

/// A host (DBMS) transaction id.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct TxnId(pub u64);

impl fmt::Display for Lpn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lpn {}", self.0)
    }
}
impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tx {}", self.0)
    }
}
impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "txn {}", self.0)
    }
}
