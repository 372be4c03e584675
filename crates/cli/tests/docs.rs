//! The documentation stays navigable and speaks of the code and the papers only.
//!
//! - README.md and docs/*.md hold no words about how the work on them was organised
//!   (numbered stops, leads, worktrees, helpers, issue numbers, the main branch's binary).
//! - Every relative link of README.md and docs/*.md names a file that exists and, with a
//!   `#anchor`, a heading of that file (anchors as GitHub derives them from headings).
//! - Every `docs/NAME.md` that the documentation, the sources, the scripts or CI name exists.
//! - A section named in quotes after a document's name (`docs/FTL.md, "The FTL"`) is a
//!   heading or a bold paragraph label of that document (the quoted text may be its start).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, sorted.
fn markdown_files() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

/// Source, script and documentation files under the repository, `target/` left out.
fn all_text_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    walk(&p, out);
                }
            } else if ["rs", "md", "py", "pyi", "sh", "toml"]
                .iter()
                .any(|e| name.ends_with(&format!(".{e}")))
            {
                out.push(p);
            }
        }
    }
    let r = root();
    let mut out = vec![r.join("README.md"), r.join("Cargo.toml"), r.join(".ci/run")];
    for d in ["docs", "crates", "scripts", "python"] {
        walk(&r.join(d), &mut out);
    }
    // This file's own examples name documents that do not exist.
    out.retain(|p| !p.ends_with("crates/cli/tests/docs.rs"));
    out
}

/// Lines outside fenced code blocks, with their numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `needle` occurs in `hay` (both lower case) starting and ending at word
/// boundaries, followed by `then` (a predicate on the next character, if any).
fn occurs(hay: &str, needle: &str, then: impl Fn(Option<char>) -> bool) -> bool {
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let first = needle.chars().next().unwrap();
        let bounded_before = !is_word_char(first) || !before.is_some_and(is_word_char);
        bounded_before && then(hay[i + needle.len()..].chars().next())
    })
}

/// The words about how the work was organised that `line` holds.
fn process_words(line: &str) -> Vec<&'static str> {
    let l = line.to_lowercase();
    let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
    let end = |c: Option<char>| !c.is_some_and(is_word_char);
    let mut found = Vec::new();
    if occurs(&l, "stop ", digit) || occurs(&l, "stop-", digit) {
        found.push("stop N");
    }
    if occurs(&l, "(lead", end) || occurs(&l, "lead,", |_| true) {
        found.push("lead");
    }
    if l.contains("worktree") {
        found.push("worktree");
    }
    if occurs(&l, "helper", |c| end(c) || c == Some('s')) {
        found.push("helper");
    }
    if occurs(&l, "issue ", digit) {
        found.push("issue N");
    }
    if ["main's binary", "main's code", "main's run", "main's count"]
        .iter()
        .any(|w| occurs(&l, w, end))
        || occurs(&l, "on main", end)
    {
        found.push("main (the branch)");
    }
    found
}

/// GitHub's anchor of a heading: lower case, punctuation removed, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A document's headings, as written (outside code blocks).
fn headings(text: &str) -> Vec<String> {
    prose_lines(text)
        .into_iter()
        .filter_map(|(_, l)| {
            let t = l.trim_start_matches('#');
            (t.len() < l.len() && t.starts_with(' ')).then(|| t.trim().to_string())
        })
        .collect()
}

/// A document's anchors, with GitHub's `-1`, `-2` … for repeated headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for h in headings(text) {
        let s = slug(&h);
        let mut a = s.clone();
        let mut n = 1;
        while out.contains(&a) {
            a = format!("{s}-{n}");
            n += 1;
        }
        out.insert(a);
    }
    out
}

/// Bold labels that open a paragraph or a list item (`**Label.**`, `- **Label**: …`,
/// `1. **Label.**`) of a document.
fn bold_labels(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (_, line) in prose_lines(text) {
        let t = line.trim_start();
        let t = t.strip_prefix("- ").unwrap_or(t);
        let t = match t.split_once(". ") {
            Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => rest,
            _ => t,
        };
        if let Some(after) = t.strip_prefix("**") {
            if let Some(j) = after.find("**") {
                out.push(after[..j].to_string());
            }
        }
    }
    out
}

/// The relative link targets of a Markdown text: (line, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(j) = after.find(')') else { break };
            let target = &after[..j];
            if !target.contains("://") && !target.starts_with("mailto:") && !target.contains(' ') {
                out.push((n, target.to_string()));
            }
            rest = &after[j + 1..];
        }
    }
    out
}

#[test]
fn the_docs_hold_no_words_about_how_the_work_was_organised() {
    let mut bad = Vec::new();
    for f in markdown_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            for w in process_words(line) {
                bad.push(format!("{}:{}: {w}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "process words in the docs:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_process_word_check_sees_what_it_should() {
    for line in [
        "hostperf (stop 15)",
        "lead (stop 17)",
        "alloc (lead, stop 18)",
        "made in a worktree",
        "a helper found it",
        "as issue 7 asked",
        "main's binary against this one",
        "measured on main, then",
    ] {
        assert!(!process_words(line).is_empty(), "missed: {line}");
    }
    for line in [
        "a lead time of 3 ms",
        "the loop stops when",
        "issued at once",
        "TPC-B's branch balance",
        "the main job",
        "a main-memory table",
    ] {
        assert!(process_words(line).is_empty(), "false alarm: {line}");
    }
}

#[test]
fn every_relative_link_names_a_file_and_heading_that_exist() {
    let mut bad = Vec::new();
    let mut n_links = 0;
    for f in markdown_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, target) in links(&text) {
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                f.clone()
            } else {
                f.parent().unwrap().join(path)
            };
            n_links += 1;
            if !file.exists() {
                bad.push(format!("{}:{n}: {target}: no such file", f.display()));
                continue;
            }
            if anchor.is_empty() || file.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let doc = std::fs::read_to_string(&file).unwrap();
            if !anchors(&doc).contains(anchor) {
                bad.push(format!(
                    "{}:{n}: {target}: no heading with that anchor",
                    f.display()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
    assert!(n_links >= 30, "found only {n_links} links");
}

#[test]
fn every_named_doc_and_quoted_section_exists() {
    let r = root();
    let mut bad = Vec::new();
    let mut n_sections = 0;
    for f in all_text_files() {
        let Ok(raw) = std::fs::read_to_string(&f) else {
            continue;
        };
        let text = raw.replace("\\\"", "\"");
        for (n, line) in text.lines().enumerate() {
            // `docs/NAME.md` must exist.
            for (i, _) in line.match_indices("docs/") {
                let tail = &line[i + 5..];
                let name: String = tail
                    .chars()
                    .take_while(|c| {
                        c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '-' || *c == '_'
                    })
                    .collect();
                if !name.is_empty() && tail[name.len()..].starts_with(".md") {
                    if !r.join("docs").join(format!("{name}.md")).exists() {
                        bad.push(format!(
                            "{}:{}: docs/{name}.md does not exist",
                            f.display(),
                            n + 1
                        ));
                    }
                }
            }
            // `NAME.md, "Section"` must name a heading or a bold label of NAME.md.
            for (i, _) in line.match_indices(".md") {
                let name: String = line[..i]
                    .chars()
                    .rev()
                    .take_while(|c| {
                        c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '-' || *c == '_'
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                if name.is_empty() {
                    continue;
                }
                let doc = if name == "README" {
                    r.join("README.md")
                } else {
                    r.join("docs").join(format!("{name}.md"))
                };
                let Ok(doc_text) = std::fs::read_to_string(&doc) else {
                    continue;
                };
                // The name, then `,` or a space, then the quoted section: `FTL.md, "X"`,
                // `FTL.md "X"`, `FTL.md, section "X"` (not a string literal's end, `FTL.md"`).
                let rest = line[i + 3..].trim_start_matches([')', '`']);
                let rest = rest.strip_prefix(',').unwrap_or(rest);
                let Some(rest) = rest.strip_prefix(' ') else {
                    continue;
                };
                let rest = rest.strip_prefix("section ").unwrap_or(rest);
                let Some(quoted) = rest.strip_prefix('"') else {
                    continue;
                };
                let Some(end) = quoted.find('"') else {
                    continue; // the name goes on past the line
                };
                let section = quoted[..end].replace('`', "");
                n_sections += 1;
                let known = headings(&doc_text)
                    .into_iter()
                    .chain(bold_labels(&doc_text))
                    .any(|h| h.replace('`', "").starts_with(&section));
                if !known {
                    bad.push(format!(
                        "{}:{}: {name}.md has no section \"{section}\"",
                        f.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "references to missing docs or sections:\n{}",
        bad.join("\n")
    );
    assert!(n_sections >= 20, "found only {n_sections} quoted sections");
}

#[test]
fn anchors_follow_githubs_rule() {
    assert_eq!(slug("Time and the crash model"), "time-and-the-crash-model");
    assert_eq!(
        slug("Crash checking on fresh seeds: `soak --draw-seed` in CI"),
        "crash-checking-on-fresh-seeds-soak---draw-seed-in-ci"
    );
    assert_eq!(
        slug("CFC_ex / AFC_ex: version slots follow max_c, and fetches merge"),
        "cfc_ex--afc_ex-version-slots-follow-max_c-and-fetches-merge"
    );
    let a = anchors("# A\n\n## Notes\n\n```\n# not a heading\n```\n\n## Notes\n");
    assert_eq!(
        a,
        ["a", "notes", "notes-1"]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
    );
}
