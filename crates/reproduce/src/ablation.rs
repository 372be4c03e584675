//! Explanations computed from ablation runs: a claim that disagrees with its paper is
//! explained by a second measured run of the same reproduction that changes exactly the
//! suspected cause, and the explanation's class follows from that run's numbers, never from
//! expectation.
//!
//! The claim is judged again on the ablation's figures (`Probe`: the claim's own run and the
//! ablation, each with the verdict the claim's one rule gives it). If the ablation brings the
//! claim into agreement, or moves its figure toward the paper's by more than the report's
//! sameness threshold (`SAME_WITHIN` of the distance), the suspected cause is supported and
//! the explanation takes the cause's class (`setup` or `model`). Otherwise the cause is
//! refuted and may not be claimed: the explanation is a `finding` that says so and still
//! shows the ablation. When the claim's own run already has the paper's setting for the cause
//! (e.g. full scale at the paper's warehouses), the disagreement is a `finding` whatever the
//! ablation shows.
//!
//! Several suspected causes of one claim are tried in order (`explain_first`): the first the
//! numbers support explains it; if none does, the finding names every one refuted.

use crate::{
    Ablation, CauseClass, Claim, Direction, Explanation, Magnitude, Output, Verdict, SAME_WITHIN,
};

/// What closeness to the paper means for a claim's figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The figures are measured ÷ paper ratios (`Verdict::ratio`): on the paper's side of
    /// zero, closeness is |ln ratio| (×2 and ×0.5 equally far); a ratio on the wrong side
    /// is farther than any on the paper's side, and farther the more negative it is.
    Ratio,
    /// The paper's number: closer = a smaller distance to it.
    Value(f64),
    /// A statement that holds above this figure (e.g. a margin that must be positive).
    Above(f64),
    /// A statement that holds below this figure.
    Below(f64),
}

impl Target {
    /// How far `x` is from the target: (on the wrong side of zero, distance). Only
    /// `Ratio` has a wrong side.
    fn distance(self, x: f64) -> (bool, f64) {
        match self {
            Target::Ratio if x > 0.0 => (false, x.ln().abs()),
            Target::Ratio => (true, 1.0 - x),
            Target::Value(p) => (false, (x - p).abs()),
            Target::Above(t) => (false, (t - x).max(0.0)),
            Target::Below(t) => (false, (x - t).max(0.0)),
        }
    }
}

/// A probe on two verdicts of one claim: its own run's and the ablation's, compared by
/// their ratios (`Target::Ratio`; a verdict without a ratio can only move by flipping).
pub fn probe_of(base: &Verdict, ablated: &Verdict) -> Probe {
    Probe {
        target: Target::Ratio,
        base: base.ratio.unwrap_or(f64::NAN),
        base_verdict: *base,
        ablated: ablated.ratio.unwrap_or(f64::NAN),
        ablated_verdict: *ablated,
    }
}

/// A claim's figure in its own run and in an ablation, each with its verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    pub target: Target,
    pub base: f64,
    pub base_verdict: Verdict,
    pub ablated: f64,
    pub ablated_verdict: Verdict,
}

/// How the ablation moves the claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Movement {
    /// The claim agrees on both axes in the ablation.
    IntoAgreement,
    /// Its figure gets closer to the paper's by more than `SAME_WITHIN` of the distance.
    Toward,
    /// Within `SAME_WITHIN` of the distance either way.
    Unmoved,
    /// Farther from the paper's.
    Away,
}

impl Probe {
    pub fn movement(&self) -> Movement {
        let v = &self.ablated_verdict;
        if v.direction == Direction::Agrees && v.magnitude != Magnitude::Off {
            return Movement::IntoAgreement;
        }
        if v.direction == Direction::NotModelled {
            return Movement::Unmoved; // no evidence either way
        }
        let ((w0, d0), (w1, d1)) = (
            self.target.distance(self.base),
            self.target.distance(self.ablated),
        );
        if !d0.is_finite() || !d1.is_finite() {
            return Movement::Unmoved;
        }
        if w0 != w1 {
            return if w0 { Movement::Toward } else { Movement::Away };
        }
        if d1 < d0 * (1.0 - SAME_WITHIN) {
            Movement::Toward
        } else if d1 > d0 * (1.0 + SAME_WITHIN) {
            Movement::Away
        } else {
            Movement::Unmoved
        }
    }

    /// Whether the numbers support the suspected cause.
    pub fn supports(&self) -> bool {
        matches!(self.movement(), Movement::IntoAgreement | Movement::Toward)
    }

    /// The movement in words, with the share of the distance closed.
    pub fn movement_text(&self) -> String {
        let ((w0, d0), (w1, d1)) = (
            self.target.distance(self.base),
            self.target.distance(self.ablated),
        );
        let closed = if w0 == w1 && d0 > 0.0 && d0.is_finite() && d1.is_finite() {
            format!(
                " ({:.0} % of the distance to the paper closed)",
                100.0 * (d0 - d1) / d0
            )
        } else if w0 && !w1 {
            " (onto the paper's side)".to_string()
        } else if !w0 && w1 {
            " (onto the wrong side)".to_string()
        } else {
            String::new()
        };
        match self.movement() {
            Movement::IntoAgreement => format!(
                "the ablation brings the claim into agreement (verdict {})",
                self.ablated_verdict.short_text()
            ),
            Movement::Toward => format!("the ablation moves the claim toward the paper{closed}"),
            Movement::Unmoved => format!("the ablation leaves the claim where it is{closed}"),
            Movement::Away => format!("the ablation moves the claim away from the paper{closed}"),
        }
    }
}

/// A suspected cause and the ablation run that changes exactly it.
#[derive(Clone, Debug)]
pub struct Cause {
    /// `Setup` or `Model`: the class of the explanation if the numbers support it.
    pub class: CauseClass,
    /// The cause in words ("the database is 2 warehouses, the paper's 20 (§6.1)").
    pub what: String,
    /// The ablation's run label (a run of the reproduction).
    pub run: String,
    /// What the ablation changes against the claim's own run.
    pub changes: String,
    /// The claim's own run already has the paper's setting for this cause.
    pub matched_in_base: bool,
}

/// One candidate explanation of a claim: a cause, the claim judged on the ablation, and the
/// measured text (computed from the runs) shown with the ablation.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub cause: Cause,
    pub probe: Probe,
    pub measured: String,
}

/// The explanation of one cause, its class computed from the probe (module docs).
pub fn explain(c: &Candidate) -> Explanation {
    explain_first(std::slice::from_ref(c))
}

/// The first candidate whose probe supports its cause explains the claim with the cause's
/// class; if none does, a finding that names every cause refuted, with the first ablation
/// (without candidates: a finding that says no cause was tested).
pub fn explain_first(cands: &[Candidate]) -> Explanation {
    let ablation = |c: &Candidate| {
        Ablation::new(
            c.cause.run.clone(),
            c.cause.changes.clone(),
            format!("{}; {}", c.measured, c.probe.movement_text()),
        )
    };
    if let Some(c) = cands
        .iter()
        .find(|c| !c.cause.matched_in_base && c.probe.supports())
    {
        let partly = if c.probe.movement() == Movement::Toward {
            " — in part only: the ablation moves the claim toward the paper without bringing it into agreement"
        } else {
            ""
        };
        return Explanation {
            class: c.cause.class,
            cause: format!("{}{partly}.", c.cause.what.trim_end_matches('.')),
            ablation: Some(ablation(c)),
        };
    }
    let Some(first) = cands.first() else {
        return Explanation::finding("no cause was tested.", None);
    };
    let parts: Vec<String> = cands
        .iter()
        .map(|c| {
            if c.cause.matched_in_base {
                format!(
                    "this run already has the paper's setting for {} and still disagrees",
                    c.cause.what.trim_end_matches('.')
                )
            } else {
                format!(
                    "{} does not account for it ({} in `{}`)",
                    c.cause.what.trim_end_matches('.'),
                    c.probe.movement_text().trim_start_matches("the ablation "),
                    c.cause.run
                )
            }
        })
        .collect();
    Explanation::finding(format!("{}.", parts.join("; ")), Some(ablation(first)))
}

/// The headline of a claim's measured text (before its parenthesised detail, when that
/// holds a number) with its verdict in short: for an ablation's measured text.
pub fn headline(c: &Claim) -> String {
    let m = c.measured.as_str();
    let head = m.split(" (").next().unwrap_or(m);
    let m = if head.chars().any(|ch| ch.is_ascii_digit()) {
        head
    } else {
        m
    };
    format!("{m} [{}]", c.verdict.short_text())
}

/// For every claim of `base` that disagrees and that `ablated` (the same figure code run on
/// the ablation's points) also has: a candidate of `cause`, its measured text from
/// `text(base claim, ablated claim)`.
pub fn candidates(
    base: &[Claim],
    ablated: &[Claim],
    cause: &Cause,
    text: &dyn Fn(&Claim, &Claim) -> String,
) -> Vec<(String, Candidate)> {
    base.iter()
        .filter(|c| c.verdict.disagrees())
        .filter_map(|c| {
            let a = ablated.iter().find(|a| a.id == c.id)?;
            Some((
                c.id.clone(),
                Candidate {
                    cause: cause.clone(),
                    probe: probe_of(&c.verdict, &a.verdict),
                    measured: text(c, a),
                },
            ))
        })
        .collect()
}

/// Attaches one explanation per claim that has candidates (`explain_first` over its
/// candidates, in the order given).
pub fn attach(out: &mut Output, cands: &[(String, Candidate)]) {
    let mut ids: Vec<&String> = Vec::new();
    for (id, _) in cands {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    for id in ids {
        let cs: Vec<Candidate> = cands
            .iter()
            .filter(|(i, _)| i == id)
            .map(|(_, c)| c.clone())
            .collect();
        out.explain(id, explain_first(&cs));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(base: f64, ablated: f64, paper: f64, matched: bool) -> Candidate {
        Candidate {
            cause: Cause {
                class: CauseClass::Setup,
                what: "the database is smaller than the paper's".into(),
                run: "p big".into(),
                changes: "the paper's database".into(),
                matched_in_base: matched,
            },
            probe: Probe {
                target: Target::Value(paper),
                base,
                base_verdict: Verdict::change(paper, base),
                ablated,
                ablated_verdict: Verdict::change(paper, ablated),
            },
            measured: format!("{base} → {ablated}"),
        }
    }

    /// The class is computed from the numbers: an ablation that does not move the claim
    /// toward the paper yields a finding, never `setup`; one that does yields `setup`.
    #[test]
    fn the_class_follows_from_the_ablation_numbers() {
        // Paper +19.2 %; this run +1 %.
        let toward = explain(&cand(0.01, 0.08, 0.192, false));
        assert_eq!(toward.class, CauseClass::Setup);
        assert!(toward
            .ablation
            .as_ref()
            .unwrap()
            .measured
            .contains("toward the paper"));
        assert!(toward.cause.contains("in part only"), "{}", toward.cause);
        let into = explain(&cand(0.01, 0.15, 0.192, false));
        assert_eq!(into.class, CauseClass::Setup);
        assert!(into
            .ablation
            .as_ref()
            .unwrap()
            .measured
            .contains("into agreement"));
        assert!(!into.cause.contains("in part only"), "{}", into.cause);
        // Unmoved (within the sameness threshold of the distance) and away: refuted.
        for e in [
            explain(&cand(0.01, 0.012, 0.192, false)),
            explain(&cand(0.01, -0.05, 0.192, false)),
        ] {
            assert_eq!(e.class, CauseClass::Finding, "{e:?}");
            assert!(e.cause.contains("does not account for it"), "{}", e.cause);
            assert!(e.ablation.is_some());
        }
        // The paper's setting in the claim's own run: a finding whatever the ablation shows.
        assert_eq!(
            explain(&cand(0.01, 0.15, 0.192, true)).class,
            CauseClass::Finding
        );
        // The first supported cause wins; refuted ones are named in a finding.
        let e = explain_first(&[cand(0.01, 0.0, 0.192, false), cand(0.01, 0.1, 0.192, false)]);
        assert_eq!(e.class, CauseClass::Setup);
        let e = explain_first(&[
            cand(0.01, 0.0, 0.192, false),
            cand(0.01, 0.01, 0.192, false),
        ]);
        assert_eq!(e.class, CauseClass::Finding);
        assert_eq!(
            e.cause.matches("does not account").count(),
            2,
            "{}",
            e.cause
        );
    }

    /// Bounds: closeness is the distance to the side the statement needs.
    #[test]
    fn bounds_measure_the_distance_to_their_side() {
        let p = |base: f64, ablated: f64| Probe {
            target: Target::Above(0.0),
            base,
            base_verdict: Verdict::qualitative(base > 0.0),
            ablated,
            ablated_verdict: Verdict::qualitative(ablated > 0.0),
        };
        assert_eq!(p(-0.1, 0.05).movement(), Movement::IntoAgreement);
        assert_eq!(p(-0.1, -0.05).movement(), Movement::Toward);
        assert_eq!(p(-0.1, -0.2).movement(), Movement::Away);
        assert_eq!(p(-0.1, -0.1).movement(), Movement::Unmoved);
        assert_eq!(Target::Below(1.0).distance(0.5), (false, 0.0));
        // Ratios: the wrong side is farther than any ratio on the paper's side.
        let r = |base: f64, ablated: f64| Probe {
            target: Target::Ratio,
            base,
            base_verdict: Verdict::change(1.0, base),
            ablated,
            ablated_verdict: Verdict::change(1.0, ablated),
        };
        assert_eq!(r(-0.3, 0.05).movement(), Movement::Toward);
        assert_eq!(r(0.05, -0.3).movement(), Movement::Away);
        assert_eq!(r(-0.3, -0.1).movement(), Movement::Toward);
        // ×4 and ×0.25 are equally far.
        assert_eq!(r(4.0, 0.25).movement(), Movement::Unmoved);
        assert_eq!(r(4.0, 3.0).movement(), Movement::Toward);
        // An ablation without evidence (not modelled) does not move the claim.
        let mut p = r(0.1, 0.1);
        p.ablated_verdict = Verdict::not_modelled();
        assert_eq!(p.movement(), Movement::Unmoved);
        assert!(!p.supports());
    }
}
