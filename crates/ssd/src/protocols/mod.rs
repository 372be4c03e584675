//! The commit protocols, one file each. Each file opens with its OOB layout byte by byte and
//! the crash-case argument for why it is atomic and durable.

pub mod afc;
pub mod cfc;
pub mod flagchain;
pub mod none;
