//! Errors of the SSD layer. Misuse of the device interface (an unknown transaction, a write
//! after commit, a concurrency pattern the protocol cannot support) and operating conditions
//! (out of space, a corrupt image found by recovery) are values; nothing here panics on input.
//! Messages are `thiserror` attributes; they are the texts the CLI prints.

use media::NandError;
use sim::{Lpn, TxId};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SsdError {
    #[error("nand: {0}")]
    Nand(NandError),
    /// The logical page is beyond the device's exported capacity.
    #[error("{lpn} is beyond the device's {logical_pages} logical pages")]
    LpnOutOfRange { lpn: Lpn, logical_pages: u32 },
    /// BEGIN of a transaction id that is already active.
    #[error("BEGIN of {tx}, which is already active")]
    TxInUse { tx: TxId },
    /// A WRITE, COMMIT or ABORT naming a transaction that was never begun.
    #[error("{tx} was never begun")]
    UnknownTx { tx: TxId },
    /// A WRITE, COMMIT or ABORT naming a transaction that already finished.
    #[error("{tx} already {how}")]
    TxFinished { tx: TxId, how: &'static str },
    /// More pages than the configured maximum transaction size.
    #[error("{tx} exceeds the maximum transaction size of {max_pages} pages")]
    TxTooLarge { tx: TxId, max_pages: u32 },
    /// More concurrently active transactions than configured.
    #[error("more than {max} concurrently active transactions")]
    TooManyActive { max: u32 },
    /// A request the protocol cannot honour (an isolation level, concurrent writes to a page).
    #[error("protocol {protocol} cannot {what}")]
    Unsupported {
        protocol: &'static str,
        what: String,
    },
    /// No free space could be reclaimed.
    #[error("out of space: {detail}")]
    OutOfSpace { detail: String },
    /// Recovery found an image it cannot make sense of.
    #[error("corrupt device image: {detail}")]
    CorruptImage { detail: String },
    /// A configuration value that cannot work.
    #[error("{key}: {reason}")]
    Config { key: String, reason: String },
    /// An unknown protocol name.
    #[error("unknown protocol '{name}'{} (known: {})", did_you_mean(name, known), .known.join(", "))]
    UnknownProtocol {
        name: String,
        known: Vec<&'static str>,
    },
}

impl SsdError {
    /// Whether this error is a request the protocol or configuration cannot honour (the
    /// input's fault: exit code 2) rather than a failure of the device model.
    pub fn input_fault(&self) -> bool {
        use SsdError::*;
        matches!(
            self,
            Unsupported { .. }
                | TooManyActive { .. }
                | TxTooLarge { .. }
                | LpnOutOfRange { .. }
                | OutOfSpace { .. }
                | Config { .. }
                | UnknownProtocol { .. }
        )
    }
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

pub type Result<T, E = SsdError> = std::result::Result<T, E>;

/// " (did you mean X?)" for the one of `known` nearest to `name` by edit distance, when it
/// is within a third of the name's length (at least 1); else "".
pub fn did_you_mean(name: &str, known: &[&str]) -> String {
    let name = name.to_ascii_lowercase();
    let best = known
        .iter()
        .map(|k| (edit_distance(&name, k), *k))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, k)) if d > 0 && d <= (name.chars().count() / 3).max(1) => {
            format!(" (did you mean {k}?)")
        }
        _ => String::new(),
    }
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts the hand-written Display impls gave before thiserror:
    /// the CLI's messages and the tests that match them depend on them.
    #[test]
    fn messages_are_unchanged_by_thiserror() {
        let cases: Vec<(SsdError, &str)> = vec![
            (
                SsdError::UnknownProtocol {
                    name: "x".into(),
                    known: vec!["none", "tc"],
                },
                "unknown protocol 'x' (known: none, tc)",
            ),
            (
                SsdError::TooManyActive { max: 4 },
                "more than 4 concurrently active transactions",
            ),
            (
                SsdError::Config {
                    key: "ftl.k".into(),
                    reason: "bad".into(),
                },
                "ftl.k: bad",
            ),
            (
                SsdError::Unsupported {
                    protocol: "aw",
                    what: "trim".into(),
                },
                "protocol aw cannot trim",
            ),
            (
                SsdError::from(NandError::Io { reason: "e".into() }),
                "nand: device image i/o: e",
            ),
            (
                SsdError::from(NandError::CorruptImage { reason: "r".into() }),
                "corrupt device image: r",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
        }
    }
}
