//! A disagreement's cause, tested: the one rule by which every paper's reproduction turns an
//! ablation run into an explanation's class (`RULE` states it for the reports).
//!
//! A claim that disagrees with its paper is explained by a suspected cause and a second
//! measured run of the same reproduction that changes exactly that cause (`crate::Ablation`).
//! The claim's figure is taken in its own run and in the ablation, and its distance to what
//! the paper says (`Target`) in both. Then, for each suspected cause:
//!
//! - the ablation brings the claim into agreement with the paper → the cause's class
//!   (`setup` or `model`);
//! - it moves the figure toward the paper, closing more than half (`MOST`) of the distance →
//!   the cause's class, the explanation saying how much it closed ("in part");
//! - it closes half or less, leaves the figure within the sameness band (`SAME_WITHIN` of
//!   the figure: noise is no effect), or moves it away → the cause is refuted, or accounts
//!   only for the share it closed: a `finding`, with the run;
//! - the claim's own run already has the paper's setting for the cause (e.g. full scale at
//!   the paper's warehouses) → a `finding`, whatever the ablation shows.
//!
//! Several causes of one claim are tried in the order given; the first that the numbers
//! support explains it, and if none does, the finding names every cause tried and what its
//! run showed. An explanation is attached only to a claim that disagrees in this run (at
//! the other scale the same claim may agree, and then there is nothing to explain).

use crate::{
    pct, Ablation, CauseClass, Claim, Direction, Explanation, Magnitude, Output, Verdict,
    SAME_WITHIN,
};

/// The share of the distance to the paper an ablation must close for its cause to be named
/// without bringing the claim into agreement.
pub const MOST: f64 = 0.5;

/// The rule, in words, for the reports' header (computed from the constants).
pub fn rule_text() -> String {
    format!(
        "A disagreement's cause is tested by an ablation run that changes exactly that cause, and the claim is judged again on it: into agreement, or toward the paper closing more than {most:.0} % of the distance, names the cause (`setup` or `model`, \"in part\" when short of agreement, with the share closed); closing {most:.0} % or less, a change within the {same:.0} % sameness band, a move away, or a cause whose setting the claim's own run already has, makes the disagreement a `finding`. The distance is to the paper's value or bound, or, for a ratio measured ÷ paper, |ln ratio| (linearly, |ratio − 1|, when a ratio lies on the wrong side of zero).",
        most = MOST * 100.0,
        same = SAME_WITHIN * 100.0
    )
}

/// What the paper says of a claim's figure, as a distance an ablation can shrink.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The figure is the claim's measured ÷ paper ratio (`Verdict::ratio`): on the paper's
    /// side of zero the distance is |ln ratio| (×2 and ×0.5 equally far); when either run's
    /// ratio lies on the wrong side it is |ratio − 1|, and a move from the paper's side onto
    /// the wrong side is a move away.
    Ratio,
    /// The paper's value (a change, factor, quantity): distance |x − value|.
    Near(f64),
    /// The statement holds at or below this value: distance max(0, x − value).
    AtMost(f64),
    /// The statement holds at or above this value: distance max(0, value − x).
    AtLeast(f64),
}

impl Target {
    /// How far `x` lies from what a quantity target says (0: the statement holds); for
    /// `Ratio`, |ln x| on the paper's side and |x − 1| on the wrong side.
    pub fn gap(self, x: f64) -> f64 {
        match self {
            Target::Ratio if x > 0.0 => x.ln().abs(),
            Target::Ratio => (x - 1.0).abs(),
            Target::Near(v) => (x - v).abs(),
            Target::AtMost(v) => (x - v).max(0.0),
            Target::AtLeast(v) => (v - x).max(0.0),
        }
    }

    /// The share of `base`'s distance that `ablated` closes (1: all of it; ≤ 0: none, or
    /// farther). `None` when `base` has no distance to close.
    pub fn closed(self, base: f64, ablated: f64) -> Option<f64> {
        let (g0, g1) = match self {
            Target::Ratio if base > 0.0 && ablated <= 0.0 => return Some(f64::NEG_INFINITY),
            Target::Ratio if base <= 0.0 => ((base - 1.0).abs(), (ablated - 1.0).abs()),
            t => (t.gap(base), t.gap(ablated)),
        };
        (g0 > 0.0 && g0.is_finite()).then(|| 1.0 - g1 / g0)
    }
}

/// A claim's figure in its own run and in an ablation; the ablation's verdict when the
/// claim's own rule judged it there (then "into agreement" is that verdict, otherwise a
/// zero distance to a quantity target).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    pub target: Target,
    pub base: f64,
    pub ablated: f64,
    pub ablated_verdict: Option<Verdict>,
}

/// A probe on two verdicts of one claim, its own run's and the ablation's, compared by their
/// ratios (`Target::Ratio`; a verdict without a ratio can only move by flipping).
pub fn probe_of(base: &Verdict, ablated: &Verdict) -> Probe {
    Probe {
        target: Target::Ratio,
        base: base.ratio.unwrap_or(f64::NAN),
        ablated: ablated.ratio.unwrap_or(f64::NAN),
        ablated_verdict: Some(*ablated),
    }
}

/// What the ablation does to the claim, judged by the rule (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Movement {
    /// The claim's own run already has the paper's setting for the cause.
    Matched,
    /// The ablation gives no figure to compare (not modelled, or missing).
    NoEvidence,
    /// The figure moves by no more than the sameness band.
    Unmoved,
    /// The claim agrees with the paper in the ablation.
    IntoAgreement,
    /// Toward the paper, closing this share (> `MOST`) of the distance.
    Toward(f64),
    /// Toward the paper, closing only this share (≤ `MOST`).
    Partial(f64),
    /// No closer to the paper (or onto the wrong side of zero).
    Away,
    /// The claim's figure already meets the paper's statement: nothing to close.
    NoDistance,
}

impl Movement {
    /// Whether the numbers name the cause.
    pub fn supports(self) -> bool {
        matches!(self, Movement::IntoAgreement | Movement::Toward(_))
    }
}

impl Probe {
    pub fn movement(&self, matched_in_base: bool) -> Movement {
        if matched_in_base {
            return Movement::Matched;
        }
        if let Some(v) = self.ablated_verdict {
            if v.direction == Direction::NotModelled {
                return Movement::NoEvidence;
            }
            // The claim's own rule judges the ablation: agreement needs no ratio (a range
            // claim inside its range has none).
            if v.direction == Direction::Agrees && v.magnitude != Magnitude::Off {
                return Movement::IntoAgreement;
            }
        }
        if !self.base.is_finite() || !self.ablated.is_finite() {
            // A statement without a number moves only by flipping: judged and unflipped, it
            // did not move; a quantity without a figure is no evidence.
            return match self.ablated_verdict {
                Some(_) => Movement::Unmoved,
                None => Movement::NoEvidence,
            };
        }
        if (self.ablated - self.base).abs() <= SAME_WITHIN * self.base.abs() {
            return Movement::Unmoved;
        }
        let Some(closed) = self.target.closed(self.base, self.ablated) else {
            return Movement::NoDistance;
        };
        if self.ablated_verdict.is_none() && self.target.gap(self.ablated) == 0.0 {
            return Movement::IntoAgreement;
        }
        match closed {
            s if s > MOST => Movement::Toward(s),
            s if s > 0.0 => Movement::Partial(s),
            _ => Movement::Away,
        }
    }
}

/// A suspected cause and the ablation run that changes exactly it.
#[derive(Clone, Debug)]
pub struct Cause {
    /// `Setup` or `Model`: the class of the explanation if the numbers support it.
    pub class: CauseClass,
    /// The cause in words: which part of the setting, which mechanism.
    pub what: String,
    /// The ablation's run label (a run of the reproduction).
    pub run: String,
    /// What the ablation changes against the claim's own run.
    pub changes: String,
    /// The claim's own run already has the paper's setting for this cause.
    pub matched_in_base: bool,
}

impl Cause {
    /// This cause's candidate for a claim whose own rule judged the claim's figure in its own
    /// run (`base`) and the same figure computed from the ablation (`ablated`): agreement is
    /// the rule's (`probe_of`). `measured` is the ablation's figure in the claim's terms.
    pub fn judged(self, base: &Verdict, ablated: &Verdict, measured: String) -> Candidate {
        Candidate {
            cause: self,
            probe: probe_of(base, ablated),
            measured,
        }
    }
}

/// One suspected cause of a claim's disagreement with the claim judged on its ablation, and
/// the measured text (computed from the runs) shown with the ablation.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub cause: Cause,
    pub probe: Probe,
    pub measured: String,
}

/// A cause tested on one quantity of a claim, measured in the claim's own run (`base`) and
/// in the ablation (`ablated`) against a quantity target: the form for claims whose figure
/// is computed from several runs.
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
    pub base: f64,
    pub ablated: f64,
    /// Formats a value of the quantity in the claim's terms ("+85.7 %", "0.93×").
    pub show: &'a dyn Fn(f64) -> String,
}

impl Suspect<'_> {
    pub fn candidate(&self) -> Candidate {
        Candidate {
            cause: Cause {
                class: self.class,
                what: self.cause.to_string(),
                run: self.run.to_string(),
                changes: self.changes.to_string(),
                matched_in_base: false,
            },
            probe: Probe {
                target: self.target,
                base: self.base,
                ablated: self.ablated,
                ablated_verdict: None,
            },
            measured: format!(
                "{} against {} in the claim's run",
                (self.show)(self.ablated),
                (self.show)(self.base)
            ),
        }
    }
}

/// A share as a percentage without a sign ("37 %").
fn share(f: f64) -> String {
    format!("{:.0} %", f * 100.0)
}

/// The movement in words, for the ablation's measured text.
fn movement_text(c: &Candidate, m: Movement) -> String {
    let p = &c.probe;
    match m {
        Movement::Matched => "the claim's own run already has this setting".into(),
        Movement::NoEvidence => "no figure to compare".into(),
        Movement::Unmoved if !(p.base.is_finite() && p.ablated.is_finite()) => {
            "the statement still fails (it has no number: it moves only by flipping)".into()
        }
        Movement::Unmoved => format!(
            "the figure changes by {} only, within the {:.0} % sameness band",
            pct(p.ablated / p.base - 1.0),
            SAME_WITHIN * 100.0
        ),
        Movement::IntoAgreement => match p.ablated_verdict {
            Some(v) => format!("into agreement with the paper (verdict {})", v.short_text()),
            None => "into agreement with the paper".into(),
        },
        Movement::Toward(s) | Movement::Partial(s) => {
            format!("toward the paper, closing {} of the distance", share(s))
        }
        Movement::Away => match p.target.closed(p.base, p.ablated) {
            Some(s) if s.is_finite() => format!(
                "no closer to the paper ({} of the distance closed)",
                share(s)
            ),
            _ => "onto the wrong side of zero, away from the paper".into(),
        },
        Movement::NoDistance => "the claim's figure already meets the paper's statement".into(),
    }
}

/// "the database …" → "The database …", without a closing full stop.
fn sentence(s: &str) -> String {
    let s = s.trim().trim_end_matches('.');
    let mut ch = s.chars();
    match ch.next() {
        Some(f) => f.to_uppercase().chain(ch).collect(),
        None => String::new(),
    }
}

/// What a refuted cause's run showed, one sentence.
fn refuted(c: &Candidate, m: Movement) -> String {
    let what = sentence(&c.cause.what);
    let run = &c.cause.run;
    match m {
        Movement::Matched => format!(
            "{what}: this run already has the paper's setting for it and still disagrees."
        ),
        Movement::Partial(s) => format!(
            "{what}: this accounts only for {} of the distance to the paper (`{run}`; a cause must close more than {}).",
            share(s),
            share(MOST)
        ),
        Movement::NoEvidence => format!("{what}: untested, `{run}` gives no figure to compare."),
        Movement::NoDistance => format!(
            "{what}: not the cause, the claim's figure already meets the paper's statement and `{run}` cannot close a distance."
        ),
        _ => format!(
            "{what}: refuted, changing it (`{run}`) leaves {}.",
            match m {
                Movement::Unmoved if !(c.probe.base.is_finite() && c.probe.ablated.is_finite()) => {
                    "the statement failing (it moves only by flipping)".into()
                }
                Movement::Unmoved => format!("the figure within the {:.0} % sameness band", SAME_WITHIN * 100.0),
                _ => "the claim no closer to the paper".into(),
            }
        ),
    }
}

/// The explanation of one claim from its candidates, tried in order (module docs); without
/// candidates, a finding that says no cause was tested.
pub fn explain(cands: &[Candidate]) -> Explanation {
    let ablation = |c: &Candidate, m: Movement| {
        Ablation::new(
            c.cause.run.clone(),
            c.cause.changes.clone(),
            format!(
                "{}; {}",
                c.measured.trim_end_matches('.'),
                movement_text(c, m)
            ),
        )
    };
    let judged: Vec<(&Candidate, Movement)> = cands
        .iter()
        .map(|c| (c, c.probe.movement(c.cause.matched_in_base)))
        .collect();
    if let Some((c, m)) = judged.iter().find(|(_, m)| m.supports()) {
        let how = match m {
            Movement::Toward(s) => format!(
                "Changing it closes {} of the distance to the paper, so it accounts for the disagreement in part.",
                share(*s)
            ),
            _ => "Changing it brings the claim into agreement with the paper.".into(),
        };
        return Explanation {
            class: c.cause.class,
            cause: format!("{}. {how}", sentence(&c.cause.what)),
            ablation: Some(ablation(c, *m)),
        };
    }
    let Some((first, m0)) = judged.first() else {
        return Explanation::finding("no cause was tested.", None);
    };
    let parts: Vec<String> = judged.iter().map(|(c, m)| refuted(c, *m)).collect();
    Explanation::finding(
        format!(
            "The disagreement stands as measured; no tested cause accounts for it. {}",
            parts.join(" ")
        ),
        Some(ablation(first, *m0)),
    )
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
/// the ablation's points) also has: a candidate of `cause` judged on the two verdicts, its
/// measured text from `text(base claim, ablated claim)`.
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

/// Attaches one explanation (`explain` over its candidates, in the order given) to each
/// claim that has candidates and disagrees with its paper in this run.
pub fn attach(out: &mut Output, cands: &[(String, Candidate)]) {
    let mut ids: Vec<&String> = Vec::new();
    for (id, _) in cands {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    for id in ids {
        if !out
            .claims
            .iter()
            .any(|c| &c.id == id && c.verdict.disagrees())
        {
            continue;
        }
        let cs: Vec<Candidate> = cands
            .iter()
            .filter(|(i, _)| i == id)
            .map(|(_, c)| c.clone())
            .collect();
        out.explain(id, explain(&cs));
    }
}

/// `attach` for one candidate of one claim.
pub fn attach_one(out: &mut Output, id: &str, c: Candidate) {
    attach(out, &[(id.to_string(), c)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suspect<'a>(
        target: Target,
        base: f64,
        ablated: f64,
        show: &'a dyn Fn(f64) -> String,
    ) -> Candidate {
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
        .candidate()
    }

    fn one(c: Candidate) -> Explanation {
        explain(&[c])
    }

    /// A quantity target (the paper's value or bound): the class follows the numbers.
    #[test]
    fn the_class_is_computed_from_a_quantity() {
        let show = |x: f64| format!("{x:.2}×");
        // 0.95× against the paper's 4.8×: the ablation reaches 2.90×, 51 % of the distance.
        let e = one(suspect(Target::Near(4.8), 0.95, 2.9, &show));
        assert_eq!(e.class, CauseClass::Setup);
        assert!(
            e.cause.contains("closes 51 % of the distance"),
            "{}",
            e.cause
        );
        assert!(e.cause.contains("in part"), "{}", e.cause);
        let a = e.ablation.as_ref().unwrap();
        assert!(
            a.measured
                .starts_with("2.90× against 0.95× in the claim's run; toward the paper"),
            "{}",
            a.measured
        );
        // Into agreement: a bound met.
        let e = one(suspect(Target::AtMost(1.02), 1.40, 1.01, &show));
        assert_eq!(e.class, CauseClass::Setup);
        assert!(e.cause.contains("into agreement"), "{}", e.cause);
        assert!(!e.cause.contains("in part"), "{}", e.cause);
        // Within the band: no effect, so no cause.
        let e = one(suspect(Target::Near(4.8), 0.95, 0.96, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(e.cause.contains("refuted"), "{}", e.cause);
        assert!(e.cause.contains("sameness band"), "{}", e.cause);
        assert!(e.ablation.is_some());
        // Away from the paper.
        let e = one(suspect(Target::Near(4.8), 0.95, 0.5, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(e.cause.contains("no closer"), "{}", e.cause);
        // Toward the paper, but a sliver of the distance: not the cause.
        let e = one(suspect(Target::Near(4.8), 0.95, 1.5, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(e.cause.contains("accounts only for 14 %"), "{}", e.cause);
        assert!(e.cause.contains("`p ablated`"), "{}", e.cause);
        // Past the paper by more than it was short: no closer.
        assert_eq!(
            one(suspect(Target::Near(1.0), 0.8, 1.3, &show)).class,
            CauseClass::Finding
        );
        // A bound already met by the claim's run: nothing for the change to close.
        let e = one(suspect(Target::AtLeast(1.0), 1.5, 2.0, &show));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(e.cause.contains("already meets"), "{}", e.cause);
    }

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
                target: Target::Near(paper),
                base,
                ablated,
                ablated_verdict: Some(Verdict::change(paper, ablated)),
            },
            measured: format!("{base} → {ablated}"),
        }
    }

    /// A claim re-judged on the ablation's verdict.
    #[test]
    fn the_class_follows_from_the_ablation_verdict() {
        // Paper +19.2 %; this run +1 %. Into agreement (+12 %: ×0.63).
        let into = one(cand(0.01, 0.12, 0.192, false));
        assert_eq!(into.class, CauseClass::Setup);
        assert!(into
            .ablation
            .as_ref()
            .unwrap()
            .measured
            .contains("into agreement"));
        // Toward, 38 % of the distance (+8 %): the cause accounts only for that share.
        let part = one(cand(0.01, 0.08, 0.192, false));
        assert_eq!(part.class, CauseClass::Finding, "{part:?}");
        assert!(
            part.cause.contains("accounts only for 38 %"),
            "{}",
            part.cause
        );
        // Unmoved and away: refuted.
        for e in [
            one(cand(0.01, 0.0101, 0.192, false)),
            one(cand(0.01, -0.05, 0.192, false)),
        ] {
            assert_eq!(e.class, CauseClass::Finding, "{e:?}");
            assert!(e.cause.contains("refuted"), "{}", e.cause);
            assert!(e.ablation.is_some());
        }
        // The paper's setting in the claim's own run: a finding whatever the ablation shows.
        let e = one(cand(0.01, 0.15, 0.192, true));
        assert_eq!(e.class, CauseClass::Finding);
        assert!(
            e.cause.contains("already has the paper's setting"),
            "{}",
            e.cause
        );
        // The first supported cause wins; refuted ones are named in a finding.
        let e = explain(&[cand(0.01, 0.0, 0.192, false), cand(0.01, 0.1, 0.192, false)]);
        assert_eq!(e.class, CauseClass::Setup);
        let e = explain(&[
            cand(0.01, 0.0, 0.192, false),
            cand(0.01, 0.0101, 0.192, false),
        ]);
        assert_eq!(e.class, CauseClass::Finding);
        assert_eq!(e.cause.matches("refuted").count(), 2, "{}", e.cause);
        assert_eq!(explain(&[]).class, CauseClass::Finding);
    }

    /// Bounds and ratios: the distance to the side the statement needs; exactly half of it
    /// closed is not enough.
    #[test]
    fn distances_of_bounds_and_ratios() {
        let p = |base: f64, ablated: f64| {
            Probe {
                target: Target::AtLeast(0.0),
                base,
                ablated,
                ablated_verdict: Some(Verdict::qualitative(ablated > 0.0)),
            }
            .movement(false)
        };
        assert_eq!(p(-0.1, 0.05), Movement::IntoAgreement);
        assert_eq!(p(-0.1, -0.05), Movement::Partial(0.5));
        assert!(matches!(p(-0.1, -0.04), Movement::Toward(_)));
        assert_eq!(p(-0.1, -0.2), Movement::Away);
        assert_eq!(p(-0.1, -0.1), Movement::Unmoved);
        assert_eq!(Target::AtMost(1.0).gap(0.5), 0.0);
        assert_eq!(Target::AtMost(2.0).gap(3.0), 1.0);
        assert_eq!(Target::AtLeast(2.0).gap(1.5), 0.5);
        assert_eq!(Target::Near(2.0).gap(3.0), 1.0);
        let r = |base: f64, ablated: f64| {
            Probe {
                target: Target::Ratio,
                base,
                ablated,
                ablated_verdict: Some(Verdict::change(1.0, ablated)),
            }
            .movement(false)
        };
        // On the wrong side the distance is linear: −0.3 → 0.05 closes 27 %, → 0.4 54 %.
        assert!(matches!(r(-0.3, 0.05), Movement::Partial(s) if (s - 0.2692).abs() < 1e-3));
        assert!(matches!(r(-0.3, 0.4), Movement::Toward(s) if (s - 0.5385).abs() < 1e-3));
        // Onto the wrong side: away, however close the ratio was.
        assert_eq!(r(0.05, -0.3), Movement::Away);
        // ×4 and ×0.25 are equally far: no closer.
        assert_eq!(r(4.0, 0.25), Movement::Away);
        assert!(matches!(r(4.0, 3.0), Movement::Partial(_)));
        assert!(matches!(r(10.0, 2.5), Movement::Toward(_)));
        assert_eq!(r(4.0, 1.5), Movement::IntoAgreement);
        // A range claim brought inside its range has no ratio, and agrees: found by the
        // IPA reproduction (`commitlab reproduce --paper ipa --quick`, IPA against IPL with
        // IPL through the FTL), whose agreeing ablations read as "no figure to compare".
        let inside = Verdict::range(-0.5, -0.2, -0.359, 0.0);
        assert_eq!(inside.ratio, None);
        let q = probe_of(&Verdict::range(-0.5, -0.2, 0.142, 0.0), &inside);
        assert_eq!(q.movement(false), Movement::IntoAgreement);
        // A statement without a number that still fails in the ablation did not move.
        let q = probe_of(&Verdict::qualitative(false), &Verdict::qualitative(false));
        assert_eq!(q.movement(false), Movement::Unmoved);
        assert!(one(Candidate {
            cause: cand(0.0, 0.0, 1.0, false).cause,
            probe: q,
            measured: "still fails".into(),
        })
        .cause
        .contains("moves only by flipping"));
        // An ablation without evidence (not modelled, no figure) does not move the claim.
        let mut q = probe_of(&Verdict::change(1.0, 0.1), &Verdict::not_modelled());
        assert_eq!(q.movement(false), Movement::NoEvidence);
        q.ablated = f64::NAN;
        assert!(!q.movement(false).supports());
    }

    /// Over a grid of figures and targets: a `setup`/`model` class only where the numbers
    /// support the cause (into agreement, or more than half the distance closed), and a
    /// move that closes half the distance or less is always a `finding`.
    #[test]
    fn a_non_supporting_ablation_never_names_the_cause() {
        let show = |x: f64| format!("{x}");
        let xs: Vec<f64> = (-20..=60).map(|i| i as f64 * 0.05).collect();
        let targets = [
            Target::Near(1.0),
            Target::AtMost(0.5),
            Target::AtLeast(1.5),
            Target::Ratio,
        ];
        let (mut named, mut partial) = (0, 0);
        for t in targets {
            for &b in &xs {
                for &a in &xs {
                    let c = suspect(t, b, a, &show);
                    let m = c.probe.movement(false);
                    let e = one(c);
                    let closed = t.closed(b, a);
                    let into = closed.is_some()
                        && t.gap(a) == 0.0
                        && (a - b).abs() > SAME_WITHIN * b.abs();
                    if into
                        || closed.is_some_and(|s| s > MOST) && (a - b).abs() > SAME_WITHIN * b.abs()
                    {
                        assert_ne!(e.class, CauseClass::Finding, "{t:?} {b} → {a}: {m:?}");
                        named += 1;
                    } else {
                        assert_eq!(e.class, CauseClass::Finding, "{t:?} {b} → {a}: {m:?}");
                        if closed.is_some_and(|s| s > 0.0 && s <= MOST) {
                            partial += 1;
                        }
                    }
                }
            }
        }
        assert!(named > 100 && partial > 100, "{named} {partial}");
    }

    /// The rule the reports state is the one applied: it quotes the constants.
    #[test]
    fn the_rule_text_quotes_the_constants() {
        let t = rule_text();
        assert!(
            t.contains(&format!("more than {:.0} %", MOST * 100.0)),
            "{t}"
        );
        assert!(
            t.contains(&format!("{:.0} % sameness band", SAME_WITHIN * 100.0)),
            "{t}"
        );
    }
}
