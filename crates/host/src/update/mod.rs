//! Update strategies (DESIGN.md vocabulary): how an evicted dirty page reaches flash,
//! orthogonal to the recovery strategy.
//!
//! - `out-of-place`: every write-back is a whole new page image at a new physical page
//!   (the FTL remaps; the old copy becomes invalid). The behaviour before this module.
//! - `ipa`: In-Place Appends' N×M scheme (in-place-appends.md §3), `ipa.rs`.
//! - `ipa-block`: the same records, but whole pages (body + delta area) through the block
//!   interface; the FTL programs in place when it can (§4 demo scenario 2), `ipa.rs`.
//! - `ipl`: In-Page Logging (Lee & Moon, SIGMOD 2007), the baseline, `ipl.rs`.
//!
//! Only the `wal` recovery strategy takes an update strategy (IPA leaves recovery unchanged,
//! §3); `device-tx` refuses anything but `out-of-place`.

pub mod ipa;
pub mod ipl;
pub mod net;

use serde::{Deserialize, Serialize};

/// The update strategies known.
pub const NAMES: &[&str] = &["out-of-place", "ipa", "ipa-block", "ipl"];

/// `host.ipa`: the N×M scheme's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IpaConfig {
    /// N: delta records a page may hold before it is written out of place.
    pub n: u32,
    /// M: ⟨offset, value⟩ pairs (changed bytes) one delta record may hold.
    pub m: u32,
}

impl Default for IpaConfig {
    fn default() -> Self {
        // Table 1's [2×4].
        IpaConfig { n: 2, m: 4 }
    }
}
