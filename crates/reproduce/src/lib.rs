//! `commitlab reproduce`: runs each paper's headline experiments on the common stack and
//! writes a report whose core is a table of claims: what the paper says, what commitlab
//! measured, and a two-axis verdict (`Verdict`): direction and magnitude, judged by one rule
//! for every claim. A claim is one statement: a paper sentence with several parts becomes
//! several claims, so one failing part cannot hide behind the others.
//!
//! Every experiment states which workload and scale stand in for the paper's traces. Nothing
//! is tuned toward the paper's numbers, and a disagreement is reported with its likely cause.
//!
//! Scales: `quick` shrinks devices and workloads so both papers finish in minutes on two
//! cores; `full` uses the papers' device sizes and workload lengths (hours).

pub mod flagcommit;
pub mod html;
pub mod ipa;
pub mod lighttx;
pub mod pcmlogging;
pub mod runner;
pub mod txflash;

pub use runner::Progress;

use serde::Serialize;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Quick,
    Full,
}

/// How a measured figure compares with the paper's, on two independent axes.
///
/// One rule for every claim (issue 9): *direction* asks whether the measured effect points
/// the same way as the paper's; *magnitude* divides the measured effect by the paper's and
/// calls a ratio within [0.5, 2] agreement, anything else a miss whose ratio is shown. A
/// paper statement without a number (an ordering, "flat", "zero") is tested exactly as
/// stated and has no magnitude. Where the simulator lacks the mechanism the paper's number
/// comes from (e.g. recovery CPU time), both axes say *not modelled* instead of pretending
/// to compare.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub direction: Direction,
    pub magnitude: Magnitude,
    /// measured ÷ paper, when the paper gives a number to divide by.
    pub ratio: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Agrees,
    Disagrees,
    NotModelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Magnitude {
    /// measured ÷ paper within [`MAGNITUDE_LOW`, `MAGNITUDE_HIGH`].
    Agrees,
    /// outside it; `Verdict::ratio` says by how much.
    Off,
    /// The paper states no number; only the statement itself (the direction) is tested.
    Qualitative,
    NotModelled,
}

/// Two figures the paper calls "about the same", "flat" or "stable" differ by at most this
/// fraction; a rise or a gain it calls significant exceeds it. The one threshold for every
/// qualitative statement of sameness (no per-claim tolerances).
pub const SAME_WITHIN: f64 = 0.02;

/// The magnitude band: measured ÷ paper in [0.5, 2] agrees. No per-claim tolerances.
pub const MAGNITUDE_LOW: f64 = 0.5;
pub const MAGNITUDE_HIGH: f64 = 2.0;

impl Verdict {
    /// A relative change (e.g. +95 % as 0.95) against the paper's: the direction is the sign
    /// (no change at all is not the paper's direction), the magnitude is the ratio of the
    /// changes.
    pub fn change(paper: f64, measured: f64) -> Verdict {
        Self::against(paper, measured, 0.0)
    }

    /// A quantity (e.g. a 3.70 % write ratio, a size in bytes) against the paper's: the same
    /// rule as a change, its neutral value being zero.
    pub fn value(paper: f64, measured: f64) -> Verdict {
        Self::against(paper, measured, 0.0)
    }

    /// A factor (e.g. 41.8×) against the paper's: the direction is which side of 1 it falls
    /// on, the magnitude is measured factor ÷ paper factor.
    pub fn factor(paper: f64, measured: f64) -> Verdict {
        Self::against(paper, measured, 1.0)
    }

    fn against(paper: f64, measured: f64, neutral: f64) -> Verdict {
        let (p, m) = (paper - neutral, measured - neutral);
        let same_way = p != 0.0 && m != 0.0 && p.signum() == m.signum() && measured.is_finite();
        let ratio = measured / paper;
        let ratio = ratio.is_finite().then_some(ratio);
        let magnitude = match ratio {
            Some(r) if (MAGNITUDE_LOW..=MAGNITUDE_HIGH).contains(&r) => Magnitude::Agrees,
            _ => Magnitude::Off,
        };
        Verdict {
            direction: if same_way {
                Direction::Agrees
            } else {
                Direction::Disagrees
            },
            magnitude,
            ratio,
        }
    }

    /// A statement without a number, tested exactly as the paper states it.
    pub fn qualitative(holds: bool) -> Verdict {
        Verdict {
            direction: if holds {
                Direction::Agrees
            } else {
                Direction::Disagrees
            },
            magnitude: Magnitude::Qualitative,
            ratio: None,
        }
    }

    /// A bound the paper states with a number ("more than 70 %", "more than 1.5×"): the
    /// direction is whether the bound holds (`holds`, tested by the caller on the side the
    /// paper states), the magnitude is measured ÷ the bound by the one band.
    pub fn bound(paper: f64, measured: f64, holds: bool) -> Verdict {
        let ratio = measured / paper;
        let ratio = ratio.is_finite().then_some(ratio);
        Verdict {
            direction: if holds {
                Direction::Agrees
            } else {
                Direction::Disagrees
            },
            magnitude: match ratio {
                Some(r) if (MAGNITUDE_LOW..=MAGNITUDE_HIGH).contains(&r) => Magnitude::Agrees,
                _ => Magnitude::Off,
            },
            ratio,
        }
    }

    /// The simulator lacks the mechanism the paper's figure comes from.
    pub fn not_modelled() -> Verdict {
        Verdict {
            direction: Direction::NotModelled,
            magnitude: Magnitude::NotModelled,
            ratio: None,
        }
    }

    fn direction_text(&self) -> &'static str {
        match self.direction {
            Direction::Agrees => "agrees",
            Direction::Disagrees => "disagrees",
            Direction::NotModelled => "not modelled",
        }
    }

    fn magnitude_text(&self) -> String {
        match (self.magnitude, self.ratio) {
            (Magnitude::Agrees, Some(r)) => format!("agrees (×{})", ratio_text(r)),
            (Magnitude::Off, Some(r)) => format!("×{}", ratio_text(r)),
            (Magnitude::Off, None) => "no ratio".into(),
            (Magnitude::Agrees, None) => "agrees".into(),
            (Magnitude::Qualitative, _) => "n/a (no number in the paper)".into(),
            (Magnitude::NotModelled, _) => "not modelled".into(),
        }
    }
}

/// A ratio to three significant figures, without exponent noise.
fn ratio_text(r: f64) -> String {
    let a = r.abs();
    if a >= 100.0 {
        format!("{r:.0}")
    } else if a >= 10.0 {
        format!("{r:.1}")
    } else if a >= 0.1 {
        format!("{r:.2}")
    } else {
        format!("{r:.3}")
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "direction {}, magnitude {}",
            self.direction_text(),
            self.magnitude_text()
        )
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Claim {
    pub paper: String,
    pub id: String,
    pub claim: String,
    pub paper_value: String,
    pub measured: String,
    pub verdict: Verdict,
    pub note: String,
}

impl Claim {
    /// A claim of `paper` (the host-engine papers' one constructor).
    pub fn of(
        paper: &str,
        id: &str,
        claim: String,
        paper_value: &str,
        measured: String,
        verdict: Verdict,
        note: &str,
    ) -> Claim {
        Claim {
            paper: paper.into(),
            id: id.into(),
            claim,
            paper_value: paper_value.into(),
            measured,
            verdict,
            note: note.into(),
        }
    }
}

/// What one paper's reproduction produced.
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub claims: Vec<Claim>,
    /// (file name, contents)
    pub csvs: Vec<(String, String)>,
    pub svgs: Vec<(String, String)>,
    /// Paragraphs for the report: setup, stand-ins, scale.
    pub notes: Vec<String>,
    /// (the runs that used it, configuration as TOML): every distinct configuration run,
    /// collected by `runner::run_all` (for REPORT.html).
    pub configs: Vec<(String, String)>,
}

/// Runs one paper's experiments.
pub fn run_paper(paper: &str, scale: Scale, progress: &Progress) -> Result<Output, String> {
    progress.take_configs();
    let r = match paper {
        "txflash" => txflash::run(scale, progress),
        "lighttx" => lighttx::run(scale, progress),
        "flagcommit" => flagcommit::run(scale, progress),
        "ipa" => ipa::run(scale, progress),
        "pcmlogging" => pcmlogging::run(scale, progress),
        other => Err(format!(
            "unknown paper '{other}' (known: txflash, lighttx, flagcommit, ipa, pcmlogging)"
        )),
    };
    r.map(|mut o| {
        o.configs = progress.take_configs();
        o
    })
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// The report's summary line: how many claims fall on each side of each axis.
pub fn summary(claims: &[&Claim]) -> String {
    let d = |x: Direction| claims.iter().filter(|c| c.verdict.direction == x).count();
    let m = |x: Magnitude| claims.iter().filter(|c| c.verdict.magnitude == x).count();
    format!(
        "{} claims. Direction: {} agree, {} disagree, {} not modelled. Magnitude: {} within [{MAGNITUDE_LOW}, {MAGNITUDE_HIGH}] of the paper, {} outside it, {} qualitative (the paper gives no number), {} not modelled.\n\n",
        claims.len(),
        d(Direction::Agrees),
        d(Direction::Disagrees),
        d(Direction::NotModelled),
        m(Magnitude::Agrees),
        m(Magnitude::Off),
        m(Magnitude::Qualitative),
        m(Magnitude::NotModelled),
    )
}

/// Writes `claims.json`, `REPORT.md`, the CSV files and the SVG plots into `dir`.
pub fn write(
    dir: &Path,
    outputs: &[(String, Output)],
    scale: Scale,
    wall_s: f64,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let w = |name: &str, body: &str| -> Result<(), String> {
        std::fs::write(dir.join(name), body)
            .map_err(|e| format!("{}: {e}", dir.join(name).display()))
    };
    let claims: Vec<&Claim> = outputs.iter().flat_map(|(_, o)| o.claims.iter()).collect();
    w(
        "claims.json",
        &(serde_json::to_string_pretty(&claims).map_err(|e| e.to_string())? + "\n"),
    )?;
    for (_, o) in outputs {
        for (n, c) in &o.csvs {
            w(n, c)?;
        }
        for (n, s) in &o.svgs {
            w(n, s)?;
        }
    }
    let mut md = String::new();
    md.push_str("# commitlab reproduction report\n\n");
    md.push_str(&format!(
        "Scale: **{}**. Generated by `commitlab reproduce` in {:.0} s of wall time. Every number below was measured in this run; verdicts follow one rule for every claim, not tuning: *direction* says whether the measured effect points the way the paper's does; *magnitude* is measured ÷ paper, agreeing within [{MAGNITUDE_LOW}, {MAGNITUDE_HIGH}] and otherwise shown as the ratio; a statement without a number is tested as stated (magnitude n/a); *not modelled* marks figures that come from a mechanism the simulator does not have.\n\n",
        if scale == Scale::Quick { "quick" } else { "full" },
        wall_s
    ));
    md.push_str(&summary(&claims));
    md.push_str("| paper | id | claim | paper | measured | direction | magnitude (measured ÷ paper) |\n|---|---|---|---|---|---|---|\n");
    for c in &claims {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            c.paper,
            c.id,
            c.claim.replace('|', "/"),
            c.paper_value.replace('|', "/"),
            c.measured.replace('|', "/"),
            c.verdict.direction_text(),
            c.verdict.magnitude_text()
        ));
    }
    md.push_str("\n## Notes on each claim\n\n");
    for c in &claims {
        md.push_str(&format!("- **{}** ({}): {}\n", c.id, c.verdict, c.note));
    }
    for (paper, o) in outputs {
        md.push_str(&format!("\n## {paper}: setup and stand-ins\n\n"));
        for n in &o.notes {
            md.push_str(n);
            md.push_str("\n\n");
        }
        if !o.svgs.is_empty() {
            md.push_str("Plots: ");
            md.push_str(
                &o.svgs
                    .iter()
                    .map(|(n, _)| format!("[{n}]({n})"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            md.push_str(". Data: ");
            md.push_str(
                &o.csvs
                    .iter()
                    .map(|(n, _)| format!("[{n}]({n})"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            md.push_str(".\n");
        }
    }
    w("REPORT.md", &md)?;
    w("REPORT.html", &html::render(outputs, scale, wall_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_judges_direction_and_magnitude_apart() {
        // The case the issue found: +185.9 % against the paper's +1.5 % used to be "partly".
        let v = Verdict::change(0.015, 1.859);
        assert_eq!(v.direction, Direction::Agrees);
        assert_eq!(v.magnitude, Magnitude::Off);
        assert!((v.ratio.unwrap() - 123.93).abs() < 0.01);
        assert!(v.to_string().contains("×124"), "{v}");
        // Within [0.5, 2] agrees, at both ends.
        assert_eq!(Verdict::change(0.95, 0.90).magnitude, Magnitude::Agrees);
        assert_eq!(Verdict::change(0.20, 0.10).magnitude, Magnitude::Agrees);
        assert_eq!(Verdict::change(0.20, 0.40).magnitude, Magnitude::Agrees);
        assert_eq!(Verdict::change(0.20, 0.41).magnitude, Magnitude::Off);
        assert_eq!(Verdict::change(0.95, 0.30).magnitude, Magnitude::Off);
        // Opposite sign, or no effect at all, is the other direction.
        let v = Verdict::change(0.95, -0.10);
        assert_eq!(v.direction, Direction::Disagrees);
        assert_eq!(Verdict::change(0.95, 0.0).direction, Direction::Disagrees);
        // Factors turn on 1, not 0.
        let v = Verdict::factor(41.8, 2.0);
        assert_eq!(v.direction, Direction::Agrees);
        assert_eq!(v.magnitude, Magnitude::Off);
        assert_eq!(Verdict::factor(4.8, 0.9).direction, Direction::Disagrees);
        assert_eq!(Verdict::factor(4.8, 5.0).magnitude, Magnitude::Agrees);
        // A bound: the direction is the bound, the magnitude the ratio to it.
        let v = Verdict::bound(1.5, 1.2, 1.2 > 1.5);
        assert_eq!(v.direction, Direction::Disagrees);
        assert_eq!(v.magnitude, Magnitude::Agrees);
        assert_eq!(Verdict::bound(0.7, 0.99, true).direction, Direction::Agrees);
        assert_eq!(Verdict::bound(80.0, 400.0, true).magnitude, Magnitude::Off);
        // A statement without a number has no magnitude; a missing mechanism has neither.
        assert_eq!(Verdict::qualitative(true).magnitude, Magnitude::Qualitative);
        assert_eq!(Verdict::qualitative(false).direction, Direction::Disagrees);
        assert_eq!(Verdict::not_modelled().direction, Direction::NotModelled);
    }

    #[test]
    fn report_counts_each_axis_and_shows_the_ratio() {
        let claim = |id: &str, v: Verdict| Claim {
            paper: "p".into(),
            id: id.into(),
            claim: "c".into(),
            paper_value: "+1.5 %".into(),
            measured: "+185.9 %".into(),
            verdict: v,
            note: "n".into(),
        };
        let out = Output {
            claims: vec![
                claim("a", Verdict::change(0.015, 1.859)),
                claim("b", Verdict::change(0.2, 0.25)),
                claim("c", Verdict::qualitative(false)),
                claim("d", Verdict::not_modelled()),
            ],
            ..Output::default()
        };
        let dir = std::env::temp_dir().join(format!("commitlab-verdict-{}", std::process::id()));
        write(&dir, &[("p".into(), out)], Scale::Quick, 0.0).unwrap();
        let md = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
        assert!(
            md.contains("4 claims. Direction: 2 agree, 1 disagree, 1 not modelled. Magnitude: 1 within [0.5, 2] of the paper, 1 outside it, 1 qualitative"),
            "{md}"
        );
        assert!(md.contains("| ×124 |"), "{md}");
        assert!(md.contains("| agrees (×1.25) |"), "{md}");
        let json = std::fs::read_to_string(dir.join("claims.json")).unwrap();
        assert!(json.contains("\"magnitude\": \"off\""), "{json}");
        assert!(json.contains("\"direction\": \"not-modelled\""), "{json}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
