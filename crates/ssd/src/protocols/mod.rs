//! The commit protocols, one file each. Each file opens with its OOB layout byte by byte and
//! the crash-case argument for why it is atomic and durable.

pub mod afc;
pub mod aw;
pub mod cfc;
pub mod flagchain;
pub mod lighttx;
pub mod mhl_d;
pub mod mhl_m;
pub mod none;
