//! The SSD layer: a page-mapping FTL (`core`: mapping, allocation, GC, wear leveling,
//! summary pages, mapping checkpoints) and the commit protocols that plug into it through
//! one trait (`protocol`), assembled into the transactional `Device` a host talks to.

pub mod commit;
pub mod config;
pub mod core;
pub mod device;
pub mod error;
pub mod gc;
pub mod modes;
pub mod mutant;
pub mod oob;
pub mod protocol;
pub mod protocols;
pub mod recovery;
pub mod stats;
mod units;

pub use core::meta;

pub use config::{FtlConfig, GcPolicyKind, MapPlacement, RecoveryReads, Striping};
pub use core::{FtlCore, ReadOutcome, Stream};
pub use device::{Device, DeviceConfig, NativeOob, RecoveryReport};
pub use error::SsdError;
pub use protocol::{
    BpccSrs, CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef, REGISTRY,
};
pub use stats::FtlStats;
