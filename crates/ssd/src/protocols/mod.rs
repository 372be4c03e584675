//! The commit protocols, one file each. Each file opens with its OOB layout byte by byte and
//! the crash-case argument for why it is atomic and durable.

pub mod bpcc;
pub(crate) mod cyclic;
pub mod none;
pub mod scc;
pub mod tc;
