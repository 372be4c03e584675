//! The host's ack log: what a file-backed host run (`commitlab run --host S --image F
//! --ack-log A`) tells the outside world about its commits, and how `commitlab recover
//! --host S --verify-acks A` judges a recovered database against it.
//!
//! Format: one JSON object per line, `{"ev":"issue"|"ack","txn":N,"digest":D}`. The engine
//! writes `issue` just before it hands a transaction's commit to the strategy, and `ack`
//! when the strategy's ack instant is reached, before the transaction's locks are released
//! and before anything else happens (`engine::Engine::set_ack_sink`). Each line is one
//! unbuffered `write`, so a process killed at any point leaves every line it wrote; a line
//! cut short (no newline) is not a claim and is ignored. `digest` is `spec_digest` of the
//! transaction's record operations: the verifier recomputes it from the re-run that
//! rebuilds the tag table (below) and refuses a log whose transactions differ.
//!
//! The oracle is `check::judge_commits`, the host crash checker's: a transaction with an
//! `ack` line is acked (its effects must all be there, in commit order), one with only an
//! `issue` line is in flight (all or nothing), and every other transaction of the run must
//! have left no effect.
//!
//! Tag contents. A host run writes 64-bit tags to the device; `data::TagTable` maps them to
//! what they stand for (page images, log pages, master records) and is the decompression of
//! the bytes a byte-exact device would hold. It is a pure function of (configuration, seed):
//! a run allocates tags in a deterministic order. `recover --host` therefore rebuilds it by
//! re-running the configuration stored in the image header in memory; the killed process
//! ran a prefix of that same run, so every tag on its image is in the table. A re-run that
//! diverged would show as a tag decoding to the wrong page (`HostError::Corrupt`) or as an
//! ack-log digest that differs; both are refused.
//!
//! The PCM strategies keep their database in PCM and on a disk (`uses_pcm_tier`): their
//! file-backed run writes both through to a tier image (`media::tier_file`), whose disk
//! holds record values, not tags; the re-run gives the commits and the PCM's geometry.
//!
//! What it does not cover: continuing the run after recovery.

use crate::data::CommitRec;
use crate::data::{Effect, Layout};
use serde::{Deserialize, Serialize};
use sim::{SimTime, TxnId};
use workload::db::TxnSpec;

/// What an ack-log line says about a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AckEv {
    /// The commit was handed to the strategy (its effects may or may not be durable).
    Issue,
    /// The commit was acked: its effects must survive any crash from here on.
    Ack,
}

/// One line of the ack log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckLine {
    pub ev: AckEv,
    pub txn: u64,
    pub digest: u64,
}

/// Where the engine reports commits (`engine::Engine::set_ack_sink`). An error stops the run.
pub type AckSink = Box<dyn FnMut(&AckLine) -> std::io::Result<()>>;

/// The strategies whose durable state is not on the emulated device but in the PCM tier's
/// PCM and disk: a file-backed run keeps them in a tier image (`media::tier_file`).
pub fn uses_pcm_tier(strategy: &str) -> bool {
    matches!(
        strategy,
        "pcmlogging" | "pcmlogging-page" | "wal-pcm" | "scmlogging"
    )
}

/// A digest of what a transaction writes: per writing operation, the record's global page
/// and slot and the effect on its value (`data::Effect`), in operation order.
pub fn spec_digest(layout: &Layout, spec: &TxnSpec) -> u64 {
    let mut h = 0x5EED_AC4E_0000_0001u64;
    for op in &spec.ops {
        let Some(e) = Effect::of(op) else { continue };
        let rid = op.rid();
        let (kind, arg) = match e {
            Effect::Update(d) => (1, d),
            Effect::Insert(f) => (2, f),
            Effect::Delete => (3, 0),
        };
        for x in [layout.page_of(rid).0, u64::from(rid.slot), kind, arg] {
            h = crate::data::mix64(h.rotate_left(17) ^ x);
        }
    }
    h
}

/// Parses an ack log. The last line without its newline was cut by a kill: not a claim.
pub fn parse(text: &str) -> Result<Vec<AckLine>, String> {
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = Vec::new();
    for (i, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: AckLine = serde_json::from_str(line).map_err(|e| {
            format!(
                "line {}: expected {{\"ev\":\"issue\"|\"ack\",\"txn\":N,\"digest\":D}}: {e}",
                i + 1
            )
        })?;
        out.push(l);
    }
    Ok(out)
}

/// What the ack log says, checked against the re-run's commits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckSummary {
    pub acked: u64,
    pub in_flight: u64,
    /// Commits of the re-run the log never mentions (issued after the kill).
    pub unissued: u64,
}

/// The commits with the crash instant `t` at which `check::judge_commits` sees them as the
/// log says: acked (ack ≤ t), in flight (issue ≤ t < ack), not committed (issue > t), in
/// the re-run's commit order (strict 2PL: conflicting transactions commit in that order).
/// Errors: a log that is not this run's (unknown transaction, digest, order).
pub fn commits_as_logged(
    layout: &Layout,
    commits: &[CommitRec],
    lines: &[AckLine],
) -> Result<(Vec<CommitRec>, SimTime, AckSummary), String> {
    use std::collections::BTreeMap;
    let mut state: BTreeMap<u64, (AckEv, u64)> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        match (state.get(&l.txn), l.ev) {
            (None, AckEv::Issue) | (Some((AckEv::Issue, _)), AckEv::Ack) => {}
            (prev, ev) => {
                return Err(format!(
                    "entry {}: {ev:?} of transaction {} after {:?}",
                    i + 1,
                    l.txn,
                    prev.map(|p| p.0)
                ))
            }
        }
        if let Some((_, d)) = state.get(&l.txn) {
            if *d != l.digest {
                return Err(format!(
                    "entry {}: transaction {} changed its digest between issue and ack",
                    i + 1,
                    l.txn
                ));
            }
        }
        state.insert(l.txn, (l.ev, l.digest));
    }
    let (t, before, after) = (
        SimTime::from_ns(2),
        SimTime::from_ns(1),
        SimTime::from_ns(3),
    );
    let mut out = Vec::with_capacity(commits.len());
    let mut sum = AckSummary::default();
    let mut seen = 0usize;
    for c in commits {
        let (issue, ack) = match state.get(&c.txn.0) {
            Some((ev, digest)) => {
                seen += 1;
                let want = spec_digest(layout, &c.spec);
                if *digest != want {
                    return Err(format!(
                        "transaction {} wrote other records in the re-run (digest {want:#x}, logged {digest:#x}): the log is not this image's run",
                        c.txn
                    ));
                }
                match ev {
                    AckEv::Ack => {
                        sum.acked += 1;
                        (before, before)
                    }
                    AckEv::Issue => {
                        sum.in_flight += 1;
                        (before, after)
                    }
                }
            }
            None => {
                sum.unissued += 1;
                (after, after)
            }
        };
        out.push(CommitRec {
            txn: c.txn,
            spec: c.spec.clone(),
            issue,
            ack,
        });
    }
    if seen != state.len() {
        let known: std::collections::BTreeSet<u64> = commits.iter().map(|c| c.txn.0).collect();
        let stray = state
            .keys()
            .find(|k| !known.contains(k))
            .copied()
            .unwrap_or(0);
        return Err(format!(
            "the log names transaction {} which the re-run of this image's configuration never committed",
            TxnId(stray)
        ));
    }
    Ok((out, t, sum))
}

/// Builds the line for a commit event of `spec`.
pub fn line(ev: AckEv, txn: TxnId, layout: &Layout, spec: &TxnSpec) -> AckLine {
    AckLine {
        ev,
        txn: txn.0,
        digest: spec_digest(layout, spec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_cut_by_a_kill_is_not_a_claim_and_garbage_is_refused() {
        let a = AckLine {
            ev: AckEv::Ack,
            txn: 7,
            digest: 9,
        };
        let s = serde_json::to_string(&a).unwrap();
        let text = format!("{s}\n{}", &s[..s.len() - 3]);
        assert_eq!(parse(&text).unwrap(), vec![a]);
        let e = parse("{\"ev\":\"ack\",\"txn\":1}\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse("lpn 3\n").is_err());
    }
}
