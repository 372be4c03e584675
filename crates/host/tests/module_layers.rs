//! The host crate's modules form layers without import cycles (docs/ARCHITECTURE.md, "Host
//! core"): the engine core (data model, locks, buffer, state, hooks, event loop) names no
//! strategy, and each strategy names only the core below it.
//!
//! The graph is read from the source: a module depends on each module a `crate::…` or
//! `super::…` path in its code names (in `use` items and inline), and a parent on each child
//! it declares (`mod x;`, which its registry or re-exports name by relative paths). Left
//! out: unit tests (`#[cfg(test)] mod tests`, like the integration tests), comments, and
//! `pub use` items, which keep a moved item's old path alive (a name, not a use). Each
//! strategy folder (`strategy/flagcommit_ex/`) is one unit; the crate root, which
//! declares every module and holds the configuration types, is below everything.
//!
//! Edges inside a cycle that remain (the PCM family's, and the crash checker's, whose
//! modules other work restructures) are listed in `KNOWN`: the test fails when a cycle
//! has an edge not in it, and when an edge in it is no longer in a cycle (remove it: the
//! list may only shrink).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Edges (from, to) that are in a cycle today: the PCM family (`pcm_tier` is both the tier
/// its strategies use and the PCM checker that runs them; `external` and `wal_pcm` name each
/// other; the PCM strategies take the seam's types through `strategy`) and the checker
/// around it.
const KNOWN: &[(&str, &str)] = &[
    ("check", "external"),
    ("check", "pcm_tier"),
    ("check", "strategy"),
    ("external", "strategy::wal_pcm"),
    ("pcm_tier", "check"),
    ("pcm_tier", "external"),
    ("pcm_tier", "strategy"),
    ("pcm_tier", "strategy::pcmlogging_page"),
    ("pcm_tier", "strategy::wal_pcm"),
    ("strategy", "strategy::pcmlogging_engine"),
    ("strategy", "strategy::pcmlogging_page"),
    ("strategy", "strategy::scmlogging"),
    ("strategy", "strategy::wal_pcm"),
    ("strategy::pcmlogging_engine", "external"),
    ("strategy::pcmlogging_engine", "pcm_tier"),
    ("strategy::pcmlogging_engine", "strategy"),
    ("strategy::pcmlogging_page", "external"),
    ("strategy::pcmlogging_page", "pcm_tier"),
    ("strategy::pcmlogging_page", "strategy"),
    ("strategy::scmlogging", "strategy"),
    ("strategy::scmlogging", "strategy::wal_pcm"),
    ("strategy::wal_pcm", "external"),
    ("strategy::wal_pcm", "pcm_tier"),
    ("strategy::wal_pcm", "strategy"),
];

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        if in_str {
            if b[i] == b'\\' {
                out.push(' ');
                out.push(' ');
                i += 2;
                continue;
            }
            if b[i] == b'"' {
                in_str = false;
            }
            out.push(if b[i] == b'\n' { '\n' } else { ' ' });
            i += 1;
            continue;
        }
        if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'/' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'*' {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        if b[i] == b'"' && !(i > 0 && b[i - 1] == b'\'' && i + 1 < b.len() && b[i + 1] == b'\'') {
            in_str = true;
            out.push(' ');
            i += 1;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// The code of a module that counts: no comments or strings, no unit tests, no `pub use`.
fn code(src: &str) -> String {
    let mut s = strip_comments(src);
    if let Some(k) = s.find("#[cfg(test)]\nmod tests") {
        s.truncate(k);
    }
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(k) = rest.find("pub use ") {
        out.push_str(&rest[..k]);
        let end = rest[k..].find(';').map_or(rest.len(), |e| k + e + 1);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn modules(root: &Path) -> BTreeMap<Vec<String>, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                    parts.pop();
                }
                out.insert(parts, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// The unit a module belongs to: a top-level module, or a child of `strategy` or `update`
/// with everything below it.
fn unit(m: &[String]) -> String {
    let depth = if matches!(m.first().map(String::as_str), Some("strategy" | "update")) {
        2
    } else {
        1
    };
    m[..m.len().min(depth)].join("::")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path a `crate::`/`super::` reference at `s` names, as segments after its anchor
/// (braced groups expanded).
fn paths(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut cur = prefix;
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        let n: usize = rest
            .chars()
            .take_while(|&c| is_ident(c))
            .map(char::len_utf8)
            .sum();
        if n > 0 {
            cur.push(rest[..n].to_string());
            rest = &rest[n..];
        }
        let t = rest.trim_start();
        if let Some(r) = t.strip_prefix("::") {
            let r = r.trim_start();
            if let Some(g) = r.strip_prefix('{') {
                // Split the group at depth-0 commas.
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in g.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            paths(&g[start..i], cur.clone(), out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            paths(&g[start..i], cur.clone(), out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            rest = r;
            continue;
        }
        out.push(cur);
        return;
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&root);
    let names: BTreeSet<Vec<String>> = mods.keys().cloned().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, src) in &mods {
        if m.is_empty() {
            continue;
        }
        let from = unit(m);
        let code = code(src);
        let mut found = Vec::new();
        for (i, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            if i > 0 && is_ident(code[..i].chars().next_back().unwrap()) {
                continue;
            }
            let mut base: Vec<String> = Vec::new();
            let mut rest = &code[i..];
            if let Some(r) = rest.strip_prefix("crate::") {
                rest = r;
            } else {
                base = m.clone();
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            paths(rest, base, &mut found);
        }
        // `mod x;` declarations: the parent depends on its children.
        for line in code.lines() {
            let l = line.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            if let Some(x) = l.strip_prefix("mod ").and_then(|x| x.strip_suffix(';')) {
                let mut c = m.clone();
                c.push(x.trim().to_string());
                found.push(c);
            }
        }
        for p in found {
            let Some(k) = (1..=p.len()).rev().find(|&k| names.contains(&p[..k])) else {
                continue;
            };
            let to = unit(&p[..k]);
            if to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
        edges.entry(from).or_default();
    }
    edges
}

/// The edges that lie on a cycle: (a, b) with b reaching a.
fn cycle_edges(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<(String, String)> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(x) = stack.pop() {
            for y in edges.get(&x).into_iter().flatten() {
                if seen.insert(y.clone()) {
                    stack.push(y.clone());
                }
            }
        }
        seen
    };
    let mut out = BTreeSet::new();
    for (a, bs) in edges {
        for b in bs {
            if reach(b).contains(a) {
                out.insert((a.clone(), b.clone()));
            }
        }
    }
    out
}

#[test]
fn host_modules_have_no_new_import_cycle() {
    let edges = graph();
    let cyc = cycle_edges(&edges);
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|&(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = cyc.difference(&known).collect();
    let gone: Vec<_> = known.difference(&cyc).collect();
    assert!(
        new.is_empty(),
        "import edges that close a cycle between host modules (a lower module naming one above it): {new:?}"
    );
    assert!(
        gone.is_empty(),
        "no longer in a cycle, remove from KNOWN: {gone:?}"
    );
}

/// The engine core names no strategy, and no module of it reaches one.
#[test]
fn the_core_names_no_strategy() {
    let edges = graph();
    for core in [
        "data", "lock", "buffer", "lru", "deadlock", "state", "metrics",
    ] {
        let mut seen = BTreeSet::new();
        let mut stack = vec![core.to_string()];
        while let Some(x) = stack.pop() {
            for y in edges.get(&x).into_iter().flatten() {
                if seen.insert(y.clone()) {
                    stack.push(y.clone());
                }
            }
        }
        let up: Vec<_> = seen.iter().filter(|m| m.starts_with("strategy")).collect();
        assert!(up.is_empty(), "core module {core} reaches {up:?}");
    }
}

/// The reader sees what it should: a planted upward import closes a cycle.
#[test]
fn a_planted_upward_import_is_a_cycle() {
    let mut edges = graph();
    edges
        .entry("data".into())
        .or_default()
        .insert("strategy::wal".into());
    let cyc = cycle_edges(&edges);
    assert!(cyc.contains(&("data".to_string(), "strategy::wal".to_string())));
    // And the reader expands nested groups of a path.
    let mut f = Vec::new();
    paths(
        "strategy::{wal::{LogPageImage, X}, device_tx}",
        Vec::new(),
        &mut f,
    );
    assert!(f.contains(&vec![
        "strategy".into(),
        "wal".into(),
        "LogPageImage".into()
    ]));
    assert!(f.contains(&vec!["strategy".into(), "device_tx".into()]));
}

#[test]
#[ignore]
fn print_graph() {
    for (a, bs) in graph() {
        println!("{a} -> {bs:?}");
    }
    for (a, b) in cycle_edges(&graph()) {
        println!("(\"{a}\", \"{b}\"),");
    }
}
