//! Explanations whose class is computed from an ablation's numbers, never asserted.
//!
//! A claim that disagrees with its paper is explained by a suspected cause and a second run
//! of the same reproduction that changes exactly that cause (`crate::Ablation`). Whether the
//! cause stands is decided here from the claim's quantity in both runs, against the paper's
//! value: the ablation supports the cause when it moves the quantity by more than the one
//! sameness band (`SAME_WITHIN`, relative to the claim's own run, so that noise cannot pass
//! for an effect) and closes most of the distance to the paper (`MOST`: more than half), so
//! that a cause that accounts for a sliver of a tenfold gap is not named as the reason. Then
//! the explanation carries the suspected class (`setup` or `model`) and says how much of the
//! gap the run closes. Otherwise the cause is refuted and is not claimed: the explanation is
//! a `finding` that says so (and how little the change moved the claim), with the run that
//! refuted it, so the report shows the result as measured instead of an excuse.

use crate::{pct, Ablation, CauseClass, Explanation, Output, SAME_WITHIN};

/// What the paper says of a claim's quantity, as a distance the ablation can shrink.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The paper's value (a change, factor, quantity): distance |x − value|.
    Near(f64),
    /// The paper's statement holds at or below this value (a bound, "as good or better"
    /// read as a ratio): distance max(0, x − value).
    AtMost(f64),
    /// The statement holds at or above this value: distance max(0, value − x).
    AtLeast(f64),
}

impl Target {
    /// How far `x` lies from what the paper says (0: the statement holds).
    pub fn gap(self, x: f64) -> f64 {
        match self {
            Target::Near(v) => (x - v).abs(),
            Target::AtMost(v) => (x - v).max(0.0),
            Target::AtLeast(v) => (v - x).max(0.0),
        }
    }
}

/// A suspected cause of one claim's disagreement, with its quantity measured in the claim's
/// own run and in the ablation run.
pub struct Suspect<'a> {
    /// `Setup` or `Model`: what the cause is if the ablation supports it.
    pub class: CauseClass,
    /// The cause, named (which part of the setting, which mechanism).
    pub cause: &'a str,
    /// The ablation run's label (a run of this reproduction).
    pub run: &'a str,
    /// What the ablation changes against the claim's run.
    pub changes: &'a str,
    pub target: Target,
    /// The claim's quantity in its own run and in the ablation.
    pub base: f64,
    pub ablated: f64,
    /// Formats a value of the quantity in the claim's terms ("+85.7 %", "0.93×").
    pub show: &'a dyn Fn(f64) -> String,
}

/// The share of the distance to the paper an ablation must close for its cause to be named.
pub const MOST: f64 = 0.5;

/// Whether the ablation moves the quantity by more than the sameness band and closes most
/// of its distance to the paper.
pub fn supports(target: Target, base: f64, ablated: f64) -> bool {
    let moved = (ablated - base).abs() > SAME_WITHIN * base.abs().max(f64::MIN_POSITIVE);
    let (g0, g1) = (target.gap(base), target.gap(ablated));
    moved && ablated.is_finite() && g0 > 0.0 && 1.0 - g1 / g0 > MOST
}

/// The explanation of one claim, its class computed from the numbers (module docs).
pub fn explain(s: &Suspect) -> Explanation {
    let (g0, g1) = (s.target.gap(s.base), s.target.gap(s.ablated));
    let measured = format!(
        "{} against {} in the claim's run",
        (s.show)(s.ablated),
        (s.show)(s.base)
    );
    let ablation = Ablation::new(s.run, s.changes, measured);
    if supports(s.target, s.base, s.ablated) {
        let how = if g1 == 0.0 {
            "into agreement with the paper".to_string()
        } else {
            format!(
                "toward the paper, closing {} of the gap",
                pct_plain(1.0 - g1 / g0)
            )
        };
        let e = Explanation {
            class: s.class,
            cause: format!("{} Changing it moves the claim {how}.", s.cause),
            ablation: Some(ablation),
        };
        return e;
    }
    let why = if (s.ablated - s.base).abs() <= SAME_WITHIN * s.base.abs() {
        format!(
            "changes the claim's quantity by {} only, within the {:.0} % sameness band",
            pct(s.ablated / s.base - 1.0),
            SAME_WITHIN * 100.0
        )
    } else if g1 < g0 {
        format!(
            "closes only {} of the gap to the paper (a cause must close more than {})",
            pct_plain(1.0 - g1 / g0),
            pct_plain(MOST)
        )
    } else {
        "moves the claim away from the paper".to_string()
    };
    Explanation::finding(
        format!(
            "The suspected cause is refuted: {} Changing it {why}, so the disagreement stands as measured.",
            s.cause
        ),
        Some(ablation),
    )
}

/// Attaches `e` to claim `id` if that claim disagrees with its paper in this run (at the
/// other scale the same claim may agree, and then there is nothing to explain).
pub fn attach(out: &mut Output, id: &str, e: Explanation) {
    if out
        .claims
        .iter()
        .any(|c| c.id == id && c.verdict.disagrees())
    {
        out.explain(id, e);
    }
}

/// A fraction as a percentage without a sign ("37 %").
fn pct_plain(f: f64) -> String {
    format!("{:.0} %", f * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suspect<'a>(
        target: Target,
        base: f64,
        ablated: f64,
        show: &'a dyn Fn(f64) -> String,
    ) -> Suspect<'a> {
        Suspect {
            class: CauseClass::Setup,
            cause: "The device is smaller than the paper's.",
            run: "p ablated",
            changes: "the paper's device size",
            target,
            base,
            ablated,
            show,
        }
    }

    /// The class follows the numbers: an ablation that moves the claim toward the paper keeps
    /// the suspected class; one that does not move it beyond the sameness band, or moves it
    /// away, yields a finding that says the cause is refuted, never `setup`.
    #[test]
    fn the_class_is_computed_from_the_ablation() {
        let show = |x: f64| format!("{x:.2}×");
        // 0.95× against the paper's 4.8×: the ablation reaches 2.90×, half the gap.
        let e = explain(&suspect(Target::Near(4.8), 0.95, 2.9, &show));
        assert_eq!(e.class, CauseClass::Setup);
        assert!(e.cause.contains("closing 51 % of the gap"), "{}", e.cause);
        let a = e.ablation.as_ref().unwrap();
        assert_eq!(a.measured, "2.90× against 0.95× in the claim's run");
        // Into agreement.
        let e = explain(&suspect(Target::AtMost(1.02), 1.40, 1.01, &show));
        assert_eq!(e.class, CauseClass::Setup);
        assert!(e.cause.contains("into agreement"), "{}", e.cause);
        // Within the band: no effect, so no cause.
        let e = explain(&suspect(Target::Near(4.8), 0.95, 0.96, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(e.cause.contains("refuted"), "{}", e.cause);
        assert!(e.cause.contains("sameness band"), "{}", e.cause);
        assert!(e.ablation.is_some());
        // Away from the paper.
        let e = explain(&suspect(Target::Near(4.8), 0.95, 0.5, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(e.cause.contains("away from the paper"), "{}", e.cause);
        // Toward the paper, but a sliver of the gap: not the cause.
        let e = explain(&suspect(Target::Near(4.8), 0.95, 1.5, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(
            e.cause.contains("closes only 14 % of the gap"),
            "{}",
            e.cause
        );
        // Past the paper by more than it was short: no closer, so not supported.
        let e = explain(&suspect(Target::Near(1.0), 0.8, 1.3, &show));
        assert_eq!(e.class, CauseClass::Finding);
        // A bound already met by both runs cannot be explained by the change.
        let e = explain(&suspect(Target::AtLeast(1.0), 0.5, 0.5, &show));
        assert_eq!(e.class, CauseClass::Finding);
    }

    #[test]
    fn targets_measure_their_gap() {
        assert_eq!(Target::Near(2.0).gap(3.0), 1.0);
        assert_eq!(Target::AtMost(2.0).gap(1.0), 0.0);
        assert_eq!(Target::AtMost(2.0).gap(3.0), 1.0);
        assert_eq!(Target::AtLeast(2.0).gap(3.0), 0.0);
        assert_eq!(Target::AtLeast(2.0).gap(1.5), 0.5);
        assert!(!supports(Target::Near(1.0), 0.5, f64::NAN));
        // Already agreeing: nothing to close.
        assert!(!supports(Target::AtMost(1.0), 0.5, 0.2));
    }
}
