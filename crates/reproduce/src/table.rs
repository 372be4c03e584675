//! docs/REPRODUCTION.md: the results of a quick and (where run) a full reproduction, per
//! paper, as tables generated from their claims.json files, never written by hand
//! (`reproduction-table`, a binary of this crate).
//!
//! Each paper gets a summary row per scale (claims, direction and magnitude counts, the
//! disagreeing claims without an explanation) and a table with one row per claim id: the
//! paper's value, the measured value at each scale, and each scale's direction, magnitude
//! (with the ratio measured ÷ paper) and explanation class. Claims are listed in the quick
//! run's order, then those only the full run has. A scale that was not run shows "—".
//!
//! Reads only the fields it shows; an unknown field in claims.json is ignored, a missing
//! one is an error naming the file, the claim and the field.

use serde::Deserialize;

/// One claim of claims.json, as far as the table needs it.
#[derive(Clone, Debug, Deserialize)]
struct Row {
    paper: String,
    id: String,
    paper_value: String,
    measured: String,
    verdict: VerdictIn,
    explanation: Option<ExplanationIn>,
}

#[derive(Clone, Debug, Deserialize)]
struct VerdictIn {
    direction: String,
    magnitude: String,
    ratio: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
struct ExplanationIn {
    class: String,
}

impl Row {
    /// Disagrees on either axis (`Verdict::disagrees`).
    fn disagrees(&self) -> bool {
        self.verdict.direction == "disagrees" || self.verdict.magnitude == "off"
    }

    fn magnitude_cell(&self) -> String {
        let v = &self.verdict;
        let m = match v.magnitude.as_str() {
            "agrees" => "within 2×",
            "off" => "off",
            "qualitative" => "qualitative",
            "not-modelled" => "not modelled",
            other => other,
        };
        match v.ratio {
            Some(r) => format!("{m} ×{}", crate::ratio_text(r)),
            None => m.to_string(),
        }
    }

    fn explanation_cell(&self) -> String {
        match &self.explanation {
            Some(e) => e.class.clone(),
            None if self.disagrees() => "unexplained".into(),
            None => String::new(),
        }
    }
}

/// Parses one claims.json (`name` names it in errors).
fn parse(name: &str, text: &str) -> Result<Vec<Row>, String> {
    serde_json::from_str(text).map_err(|e| format!("{name}: not a claims.json file: {e}"))
}

/// A table cell: no line breaks, no column separators.
fn cell(s: &str) -> String {
    s.replace('|', "/").replace('\n', " ")
}

/// The counts of one paper at one scale.
#[derive(Default)]
struct Counts {
    claims: usize,
    dir_agrees: usize,
    dir_disagrees: usize,
    mag_agrees: usize,
    mag_off: usize,
    unexplained: usize,
}

fn counts<'a>(rows: impl Iterator<Item = &'a Row>) -> Counts {
    let mut c = Counts::default();
    for r in rows {
        c.claims += 1;
        match r.verdict.direction.as_str() {
            "agrees" => c.dir_agrees += 1,
            "disagrees" => c.dir_disagrees += 1,
            _ => {}
        }
        match r.verdict.magnitude.as_str() {
            "agrees" => c.mag_agrees += 1,
            "off" => c.mag_off += 1,
            _ => {}
        }
        if r.disagrees() && r.explanation.is_none() {
            c.unexplained += 1;
        }
    }
    c
}

/// The markdown document: `provenance` (which commit and command produced the inputs) in
/// its opening paragraph, then per paper a summary and a claim table. `quick` and `full`
/// are the texts of claims.json files (`full` optional).
pub fn markdown(quick: &str, full: Option<&str>, provenance: &str) -> Result<String, String> {
    let q = parse("the quick claims.json", quick)?;
    let f = match full {
        Some(t) => Some(parse("the full claims.json", t)?),
        None => None,
    };
    let mut papers: Vec<&str> = Vec::new();
    for r in q.iter().chain(f.iter().flatten()) {
        if !papers.contains(&r.paper.as_str()) {
            papers.push(&r.paper);
        }
    }
    let mut md = String::from("# Reproduction results\n\n");
    md.push_str(
        "Generated from claims.json by `reproduction-table`; do not edit by hand. Verdicts follow \
         the one rule of `commitlab reproduce` (REPORT.md): *direction* says whether the measured \
         effect points the paper's way, *magnitude* compares measured ÷ paper with [0.5, 2] \
         (shown with the ratio); *explanation* is the class of the measured cause attached to a \
         disagreeing claim (setup, model, finding) or *unexplained*. \"—\" marks a scale not run.\n\n",
    );
    md.push_str(&cell(provenance));
    md.push_str("\n\n");
    for paper in papers {
        let qp: Vec<&Row> = q.iter().filter(|r| r.paper == paper).collect();
        let fp: Vec<&Row> = f.iter().flatten().filter(|r| r.paper == paper).collect();
        // A full run of some papers only (`--paper P`) leaves the others' full scale not run.
        let full_ran = f.is_some() && !fp.is_empty();
        md.push_str(&format!("## {paper}\n\n"));
        md.push_str("| scale | claims | direction agrees | direction disagrees | magnitude within 2× | magnitude off | unexplained |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (scale, rows, ran) in [("quick", &qp, true), ("full", &fp, full_ran)] {
            if !ran {
                md.push_str(&format!("| {scale} | — | — | — | — | — | — |\n"));
                continue;
            }
            let c = counts(rows.iter().copied());
            md.push_str(&format!(
                "| {scale} | {} | {} | {} | {} | {} | {} |\n",
                c.claims, c.dir_agrees, c.dir_disagrees, c.mag_agrees, c.mag_off, c.unexplained
            ));
        }
        md.push_str("\n| claim | paper | measured (quick) | measured (full) | direction (quick / full) | magnitude (quick / full) | explanation (quick / full) |\n|---|---|---|---|---|---|---|\n");
        let mut ids: Vec<&str> = qp.iter().map(|r| r.id.as_str()).collect();
        for r in &fp {
            if !ids.contains(&r.id.as_str()) {
                ids.push(&r.id);
            }
        }
        for id in ids {
            let a = qp.iter().find(|r| r.id == id);
            let b = fp.iter().find(|r| r.id == id);
            let both = |g: &dyn Fn(&Row) -> String| -> String {
                let x = a.map_or("—".to_string(), |r| g(r));
                let y = if !full_ran {
                    "—".to_string()
                } else {
                    b.map_or("—".to_string(), |r| g(r))
                };
                format!("{} / {}", cell(&x), cell(&y))
            };
            let paper_value = a.or(b).map_or(String::new(), |r| cell(&r.paper_value));
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                cell(id),
                paper_value,
                a.map_or("—".to_string(), |r| cell(&r.measured)),
                b.map_or("—".to_string(), |r| cell(&r.measured)),
                both(&|r| r.verdict.direction.replace('-', " ")),
                both(&|r| r.magnitude_cell()),
                both(&|r| {
                    let e = r.explanation_cell();
                    if e.is_empty() {
                        "·".into()
                    } else {
                        e
                    }
                }),
            ));
        }
        md.push('\n');
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: &str = r#"[
      {"paper": "p", "id": "p-a", "claim": "A beats B by 35 %", "paper_value": "+35.0%",
       "measured": "-20.2% (529.7 vs 664.0 tx/s)",
       "verdict": {"direction": "disagrees", "magnitude": "off", "ratio": -0.5777},
       "note": "n", "explanation": null},
      {"paper": "p", "id": "p-b", "claim": "flat", "paper_value": "flat", "measured": "1 | 2",
       "verdict": {"direction": "agrees", "magnitude": "qualitative", "ratio": null},
       "note": "n", "explanation": null},
      {"paper": "q", "id": "q-c", "claim": "C", "paper_value": "×4.8", "measured": "×1.1",
       "verdict": {"direction": "agrees", "magnitude": "off", "ratio": 0.229},
       "note": "n", "explanation": {"class": "setup", "cause": "c",
       "ablation": {"run": "r", "changes": "x", "measured": "y"}}}
    ]"#;

    const FULL: &str = r#"[
      {"paper": "p", "id": "p-a", "claim": "A beats B by 35 %", "paper_value": "+35.0%",
       "measured": "+30.0%",
       "verdict": {"direction": "agrees", "magnitude": "agrees", "ratio": 0.857},
       "note": "n", "explanation": null},
      {"paper": "p", "id": "p-full-only", "claim": "D", "paper_value": "0", "measured": "0",
       "verdict": {"direction": "not-modelled", "magnitude": "not-modelled", "ratio": null},
       "note": "n", "explanation": null}
    ]"#;

    #[test]
    fn tables_per_paper_show_both_scales_from_claims_json() {
        let md = markdown(QUICK, Some(FULL), "From commit abc.").unwrap();
        assert!(md.contains("From commit abc."), "{md}");
        // One section per paper, in first-seen order.
        let (p, q) = (md.find("## p\n").unwrap(), md.find("## q\n").unwrap());
        assert!(p < q);
        // Summary rows: p quick has 2 claims, 1 disagreeing unexplained; p full 2 claims.
        assert!(md.contains("| quick | 2 | 1 | 1 | 0 | 1 | 1 |"), "{md}");
        assert!(md.contains("| full | 2 | 1 | 0 | 1 | 0 | 0 |"), "{md}");
        // The claim row carries both scales, the ratio and the explanation class.
        assert!(
            md.contains("| p-a | +35.0% | -20.2% (529.7 vs 664.0 tx/s) | +30.0% | disagrees / agrees | off ×-0.58 / within 2× ×0.86 | unexplained / · |"),
            "{md}"
        );
        // A pipe in a value cannot break the table; a claim only the full run has is listed.
        assert!(md.contains("| 1 / 2 |"), "{md}");
        assert!(
            md.contains("| p-full-only | 0 | — | 0 | — / not modelled |"),
            "{md}"
        );
        // q has no full claims (a full run of other papers only): its full cells are "—",
        // its summary row too.
        let q_part = &md[md.find("## q").unwrap()..];
        assert!(q_part.contains("| full | — | — | — | — | — | — |"), "{md}");
        assert!(
            md.contains("| q-c | ×4.8 | ×1.1 | — | agrees / — | off ×0.23 / — | setup / — |"),
            "{md}"
        );
    }

    #[test]
    fn without_a_full_run_every_full_cell_is_a_dash() {
        let md = markdown(QUICK, None, "x").unwrap();
        assert!(md.contains("| full | — | — | — | — | — | — |"), "{md}");
        assert!(md.contains("| disagrees / — |"), "{md}");
    }

    #[test]
    fn bad_input_names_the_file() {
        let e = markdown("{", None, "x").unwrap_err();
        assert!(e.contains("the quick claims.json"), "{e}");
        let e = markdown(QUICK, Some(r#"[{"paper": "p"}]"#), "x").unwrap_err();
        assert!(
            e.contains("the full claims.json") && e.contains("id"),
            "{e}"
        );
    }
}
