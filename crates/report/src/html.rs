//! A self-contained HTML report (`REPORT.html`): claims table with verdicts, notes, every
//! figure inline as SVG, links to the data files, and the configuration of each experiment.
//! One file, no scripts, no external resources: it reads the same offline as online.
//!
//! It takes plain data (`HtmlReport`), not the reproduce crate's types, so the reproduce
//! crate can change its claims and verdicts without touching this writer.

/// One claim row.
#[derive(Clone, Debug, Default)]
pub struct HtmlClaim {
    pub paper: String,
    pub id: String,
    pub claim: String,
    pub paper_value: String,
    pub measured: String,
    /// The verdict as a word ("agrees", "partly", "disagrees", ...); it is also the row's
    /// CSS class, so known words get colours.
    pub verdict: String,
    pub note: String,
}

/// One paper's (or experiment group's) section.
#[derive(Clone, Debug, Default)]
pub struct HtmlSection {
    pub title: String,
    /// Paragraphs (plain text).
    pub notes: Vec<String>,
    /// (file name, SVG markup), shown inline.
    pub figures: Vec<(String, String)>,
    /// Data file names (relative links).
    pub data_files: Vec<String>,
    /// (runs using it, configuration as TOML).
    pub configs: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default)]
pub struct HtmlReport {
    pub title: String,
    /// One paragraph under the title (plain text).
    pub summary: String,
    pub claims: Vec<HtmlClaim>,
    pub sections: Vec<HtmlSection>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Keeps a class name to `[a-z0-9-]`.
fn class(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// SVG markup ready to inline: without an XML declaration or doctype.
fn inline_svg(svg: &str) -> &str {
    let mut s = svg.trim_start();
    while s.starts_with("<?") || s.starts_with("<!") {
        match s.find('>') {
            Some(i) => s = s[i + 1..].trim_start(),
            None => break,
        }
    }
    s
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;width:100%;font-size:14px}th,td{border:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}\
th{background:#f0f0f0}tr.agrees td.v{background:#d9f2d9}tr.partly td.v{background:#fff2cc}tr.disagrees td.v{background:#f8d0d0}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:13px;color:#555}\
pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}details{margin:.5em 0}";

/// The report as one HTML document.
pub fn render(r: &HtmlReport) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>{}</title>\n", esc(&r.title)));
    h.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
    h.push_str(&format!(
        "<h1>{}</h1>\n<p>{}</p>\n",
        esc(&r.title),
        esc(&r.summary)
    ));
    h.push_str("<h2>Claims</h2>\n<table id=\"claims\">\n<thead><tr><th>paper</th><th>id</th><th>claim</th><th>paper says</th><th>measured</th><th>verdict</th></tr></thead>\n<tbody>\n");
    for c in &r.claims {
        h.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"v\">{}</td></tr>\n",
            class(&c.verdict),
            esc(&c.paper),
            esc(&c.id),
            esc(&c.claim),
            esc(&c.paper_value),
            esc(&c.measured),
            esc(&c.verdict)
        ));
    }
    h.push_str("</tbody>\n</table>\n<h2>Notes on each claim</h2>\n<ul>\n");
    for c in &r.claims {
        h.push_str(&format!(
            "<li><b>{}</b> ({}): {}</li>\n",
            esc(&c.id),
            esc(&c.verdict),
            esc(&c.note)
        ));
    }
    h.push_str("</ul>\n");
    for s in &r.sections {
        h.push_str(&format!("<h2>{}</h2>\n", esc(&s.title)));
        for n in &s.notes {
            h.push_str(&format!("<p>{}</p>\n", esc(n)));
        }
        for (name, svg) in &s.figures {
            h.push_str(&format!(
                "<figure class=\"figure\" id=\"fig-{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                class(name),
                inline_svg(svg),
                esc(name)
            ));
        }
        if !s.data_files.is_empty() {
            let links: Vec<String> = s
                .data_files
                .iter()
                .map(|f| format!("<a href=\"{}\">{}</a>", esc(f), esc(f)))
                .collect();
            h.push_str(&format!("<p>Data: {}</p>\n", links.join(", ")));
        }
        if !s.configs.is_empty() {
            h.push_str("<h3>Configurations</h3>\n");
            for (runs, toml) in &s.configs {
                h.push_str(&format!(
                    "<details><summary>{}</summary>\n<pre>{}</pre>\n</details>\n",
                    esc(runs),
                    esc(toml)
                ));
            }
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{line_chart, Chart, Series};

    pub(crate) fn sample() -> HtmlReport {
        let chart = Chart {
            title: "t <1>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            ..Default::default()
        };
        let svg = line_chart(
            &chart,
            &[Series {
                name: "a".into(),
                points: vec![(1.0, 2.0), (2.0, 3.0)],
            }],
        );
        HtmlReport {
            title: "commitlab reproduction report".into(),
            summary: "Scale: quick.".into(),
            claims: vec![HtmlClaim {
                paper: "txflash".into(),
                id: "T1".into(),
                claim: "a < b & c".into(),
                paper_value: "1".into(),
                measured: "2".into(),
                verdict: "agrees".into(),
                note: "n".into(),
            }],
            sections: vec![HtmlSection {
                title: "txflash".into(),
                notes: vec!["setup".into()],
                figures: vec![("fig6.svg".into(), format!("<?xml version=\"1.0\"?>\n{svg}"))],
                data_files: vec!["fig6.csv".into()],
                configs: vec![("fig6: tc, scc".into(), "[nand]\nchannels = 2\n".into())],
            }],
        }
    }

    #[test]
    fn self_contained_escaped_and_every_figure_inline() {
        let h = render(&sample());
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.contains("a &lt; b &amp; c"));
        assert!(!h.contains("<?xml"), "XML declarations cannot be inlined");
        assert_eq!(h.matches("<figure").count(), 1);
        assert!(h.contains("<svg"));
        assert!(h.contains("<tr class=\"agrees\">"));
        assert!(h.contains("channels = 2"));
        for external in ["<script", "<link", "http://", "https://", "src="] {
            // The SVG namespace URI is an identifier, not a fetched resource.
            let n = h.matches(external).count();
            let ns = h.matches("http://www.w3.org/2000/svg").count();
            let allowed = if external == "http://" { ns } else { 0 };
            assert_eq!(n, allowed, "external reference {external}");
        }
    }
}
