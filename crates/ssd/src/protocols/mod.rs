//! The commit protocols, one file each. Each file opens with its OOB layout byte by byte and
//! the crash-case argument for why it is atomic and durable.

pub mod afc;
pub mod aw;
pub mod bpcc;
pub mod cfc;
pub(crate) mod cyclic;
pub mod flagchain;
pub mod lighttx;
pub mod mhl_d;
pub mod mhl_m;
pub mod none;
pub mod scc;
pub mod tc;
pub(crate) mod txtable;
