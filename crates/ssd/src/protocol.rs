//! The protocol registry: every commit protocol commitlab knows, found by name.
//!
//! Adding a protocol is one file in `protocols/` plus one line in `REGISTRY`; the device, the
//! CLI, the crash checker and the reproduction suite find it here. What a protocol is (the
//! trait, its durability contract, `ProtocolInfo`) is `crate::commit`; its options are
//! `crate::config::ProtocolConfig`. Both are re-exported here, the path other crates use.

pub use crate::commit::{CloneProtocol, CommitProtocol, Isolation, ProtocolInfo, TxRef};
pub use crate::config::{BpccSrs, ProtocolConfig};
pub use crate::error::did_you_mean;
use crate::error::{Result, SsdError};

/// Every protocol commitlab knows. One line per protocol.
pub static REGISTRY: &[&ProtocolInfo] = &[
    &crate::protocols::none::INFO,
    &crate::protocols::tc::INFO,
    &crate::protocols::scc::INFO,
    &crate::protocols::bpcc::INFO,
    &crate::protocols::cfc::INFO,
    &crate::protocols::afc::INFO,
    &crate::protocols::lighttx::INFO,
    &crate::protocols::aw::INFO,
    &crate::protocols::mhl_d::INFO,
    &crate::protocols::mhl_m::INFO,
];

/// The registered protocol called `name`, in any case (`TC`, `LightTx`).
pub fn lookup(name: &str) -> Result<&'static ProtocolInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| SsdError::UnknownProtocol {
            name: name.into(),
            known: names(),
        })
}

/// The registered spelling of `name` (`TC` -> `tc`).
pub fn canonical(name: &str) -> Result<&'static str> {
    lookup(name).map(|p| p.name)
}

#[cfg(test)]
mod suggest_tests {
    use super::*;

    #[test]
    fn names_in_any_case_and_near_misses_are_suggested() {
        assert_eq!(canonical("TC").unwrap(), "tc");
        assert_eq!(canonical("LightTx").unwrap(), "lighttx");
        let e = canonical("lightx").unwrap_err().to_string();
        assert!(e.contains("did you mean lighttx?"), "{e}");
        let e = canonical("zzzzzz").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name).collect()
}
