//! Recovery strategies: how the host gets atomicity and durability, one file (or folder)
//! each plus one line in `REGISTRY` (like `ssd::protocol::REGISTRY`).
//!
//! What the engine calls and when, and the durability contract every strategy keeps, are
//! in `hooks` (the `Strategy` trait), below the strategies; this module is the registry
//! above them and keeps the trait's old paths (`strategy::Strategy`, …) as re-exports
//! (docs/ARCHITECTURE.md, "Host core").

pub mod device_tx;
pub mod flagcommit_ex;
pub mod pages;
pub mod pcm_destage;
pub mod pcmlogging;
pub mod pcmlogging_engine;
pub mod pcmlogging_page;
pub mod scmlogging;
pub mod wal;
pub mod wal_pcm;

use crate::{HostError, Result};

pub use crate::hooks::{Admit, RecoverCtx, RecoveredDb, Resume, Strategy, StrategyInfo, WriteBack};
pub use pages::read_data_pages;

/// Every recovery strategy. One line each.
pub static REGISTRY: &[&StrategyInfo] = &[
    &wal::INFO,
    &device_tx::INFO,
    &flagcommit_ex::INFO,
    &flagcommit_ex::CFC_INFO,
    &flagcommit_ex::AFC_INFO,
    &pcmlogging_engine::INFO,
    &wal_pcm::INFO,
    &scmlogging::INFO,
    &pcmlogging_page::INFO,
];

pub fn lookup(name: &str) -> Result<&'static StrategyInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|s| s.name == name)
        .ok_or_else(|| HostError::Config {
            key: "host.strategy".into(),
            reason: format!(
                "unknown recovery strategy '{name}'{} (known: {})",
                ssd::protocol::did_you_mean(name, &names()),
                names().join(", ")
            ),
        })
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|s| s.name).collect()
}
