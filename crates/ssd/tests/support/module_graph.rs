//! The module dependency graph of a crate, read from its source text, and its cycles.
//!
//! Standard library only, so any crate's test can include it
//! (`#[path = "../../ssd/tests/support/module_graph.rs"] mod module_graph;`) and call
//! `module_graph::cycles_in(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")))`.
//!
//! What counts:
//! - a node is a module that has its own file (`mod x;`, `#[path = ...]` honoured), named by
//!   its path from the crate root (`gc`, `protocols::tc`; the root is `crate`);
//! - an edge `a -> b` is a `crate::…`, `super::…` or `self::…` path in `a`'s non-test code
//!   (in `use` or inline) whose longest module prefix is `b`; `crate::Item` re-exported by
//!   the root (`pub use x::Item;` in lib.rs) counts as naming `x`;
//! - a module naming one of its own descendants is composition, not an edge (`gc` naming
//!   `gc::greedy`, the root naming everything); a descendant naming its ancestor is;
//! - `#[cfg(test)]` items are left out: a test may reach anywhere.
//!
//! A cycle is a strongly connected component of more than one module.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Modules (path → file) and edges of a crate.
#[derive(Debug, Default)]
pub struct Graph {
    pub modules: BTreeMap<String, PathBuf>,
    pub edges: BTreeSet<(String, String)>,
}

/// Reads the crate whose `lib.rs` (or `main.rs`) is in `src`.
pub fn graph(src: &Path) -> Result<Graph, String> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{}: no lib.rs or main.rs", src.display()))?;
    let mut g = Graph::default();
    let mut code = BTreeMap::new();
    let mut todo = vec![("crate".to_string(), root, true)];
    while let Some((name, file, mod_rs)) = todo.pop() {
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let child_dir = if mod_rs {
            dir.clone()
        } else {
            dir.join(file.file_stem().unwrap_or_default())
        };
        for (child, path_attr) in mod_decls(&text) {
            let f = match path_attr {
                Some(p) => dir.join(p),
                None => {
                    let a = child_dir.join(format!("{child}.rs"));
                    if a.is_file() {
                        a
                    } else {
                        child_dir.join(&child).join("mod.rs")
                    }
                }
            };
            let is_mod_rs = f.file_name().is_some_and(|n| n == "mod.rs");
            todo.push((format!("{name}::{child}"), f, is_mod_rs));
        }
        code.insert(name.clone(), strip_tests(&clean(&text)));
        g.modules.insert(name, file);
    }
    let root_items = reexports(code.get("crate").map(String::as_str).unwrap_or(""));
    for (name, text) in &code {
        for path in paths(text) {
            let Some(target) = resolve(&g.modules, &root_items, name, &path) else {
                continue;
            };
            if target != *name && !is_descendant(&target, name) {
                g.edges.insert((name.clone(), target));
            }
        }
    }
    Ok(g)
}

/// The cycles of the crate in `src`, each as its modules and the edges among them
/// (`a -> b`); empty when the graph is acyclic.
pub fn cycles_in(src: &Path) -> Result<Vec<(Vec<String>, Vec<String>)>, String> {
    let g = graph(src)?;
    Ok(cycles(&g)
        .into_iter()
        .map(|c| {
            let set: BTreeSet<&String> = c.iter().collect();
            let edges = g
                .edges
                .iter()
                .filter(|(a, b)| set.contains(a) && set.contains(b))
                .map(|(a, b)| format!("{a} -> {b}"))
                .collect();
            (c, edges)
        })
        .collect())
}

/// Strongly connected components of more than one node (Tarjan), each sorted.
pub fn cycles(g: &Graph) -> Vec<Vec<String>> {
    let names: Vec<&String> = g.modules.keys().collect();
    let index: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut adj = vec![Vec::new(); names.len()];
    for (a, b) in &g.edges {
        if let (Some(&i), Some(&j)) = (index.get(a), index.get(b)) {
            adj[i].push(j);
        }
    }
    struct T<'a> {
        adj: &'a [Vec<usize>],
        idx: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.idx[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for k in 0..t.adj[v].len() {
            let w = t.adj[v][k];
            match t.idx[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(t.low[v]) == t.idx[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let n = names.len();
    let mut t = T {
        adj: &adj,
        idx: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.idx[v].is_none() {
            visit(&mut t, v);
        }
    }
    let mut out: Vec<Vec<String>> = t
        .out
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|i| names[i].clone()).collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

fn is_descendant(a: &str, of: &str) -> bool {
    a.len() > of.len() && a.starts_with(of) && a[of.len()..].starts_with("::")
}

/// `mod x;` declarations (not inline modules) with their `#[path = "…"]`, from raw text.
fn mod_decls(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut path_attr = None;
    let mut test_attr = false;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("#[path") {
            path_attr = rest.split('"').nth(1).map(str::to_string);
            continue;
        }
        if l.starts_with("#[cfg(test)]") {
            test_attr = true;
            continue;
        }
        if l.starts_with("#[") || l.starts_with("//") || l.is_empty() {
            continue;
        }
        let decl = l
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            if !test_attr {
                out.push((name.trim().to_string(), path_attr.clone()));
            }
        }
        path_attr = None;
        test_attr = false;
    }
    out
}

/// The text with comments, string and char literals blanked (lifetimes kept).
fn clean(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F}'), else a lifetime.
            let end = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.push_str("' '");
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// The cleaned text without the items under `#[cfg(test)]`.
fn strip_tests(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let pat: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(&pat) {
            // Skip the item: up to its `;` or through its matching braces.
            let mut j = i + pat.len();
            let mut depth = 0usize;
            while j < b.len() {
                match b[j] {
                    '{' => depth += 1,
                    '}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    ';' if depth == 0 => {
                        j += 1;
                        break;
                    }
                    _ => {}
                }
                j += 1;
            }
            i = j;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Every path beginning `crate::`, `super::` or `self::`, use-tree groups expanded.
fn paths(text: &str) -> Vec<Vec<String>> {
    let b: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if (b[i].is_alphabetic() || b[i] == '_') && !ident_before(&b, i) {
            let (word, j) = ident(&b, i);
            if matches!(word.as_str(), "crate" | "super" | "self")
                && b.get(j) == Some(&':')
                && b.get(j + 1) == Some(&':')
            {
                let mut k = j;
                tree(&b, &mut k, vec![word], &mut out);
                i = k.max(j);
                continue;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn ident(b: &[char], mut i: usize) -> (String, usize) {
    let s = i;
    while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
        i += 1;
    }
    (b[s..i].iter().collect(), i)
}

fn skip_ws(b: &[char], i: &mut usize) {
    while *i < b.len() && b[*i].is_whitespace() {
        *i += 1;
    }
}

/// Reads `::a::b::{c, d::e}` after `prefix`, pushing each full path.
fn tree(b: &[char], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        skip_ws(b, i);
        if b.get(*i) == Some(&':') && b.get(*i + 1) == Some(&':') {
            *i += 2;
            skip_ws(b, i);
            if b.get(*i) == Some(&'{') {
                *i += 1;
                loop {
                    skip_ws(b, i);
                    match b.get(*i) {
                        None => return,
                        Some('}') => {
                            *i += 1;
                            return;
                        }
                        Some(',') => *i += 1,
                        Some(c) if c.is_alphabetic() || *c == '_' => {
                            let (w, j) = ident(b, *i);
                            *i = j;
                            let mut p = path.clone();
                            if w != "self" {
                                p.push(w);
                            }
                            let before = out.len();
                            tree(b, i, p.clone(), out);
                            if out.len() == before {
                                out.push(p);
                            }
                        }
                        Some(_) => *i += 1,
                    }
                }
            }
            if b.get(*i) == Some(&'*') {
                *i += 1;
                out.push(path);
                return;
            }
            let (w, j) = ident(b, *i);
            if w.is_empty() {
                out.push(path);
                return;
            }
            *i = j;
            if w != "self" {
                path.push(w);
            }
        } else {
            out.push(path);
            return;
        }
    }
}

/// Root items re-exported from a module: `pub use a::b::{X, Y};` gives X → a::b, Y → a::b.
fn reexports(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut m = BTreeMap::new();
    for stmt in root.split(';') {
        let s = stmt.trim();
        let Some(rest) = s.strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest
            .trim_start_matches("crate::")
            .trim_start_matches("self::");
        let (module, items) = match rest.split_once("::{") {
            Some((m, items)) => (m, items.trim_end_matches('}').to_string()),
            None => match rest.rsplit_once("::") {
                Some((m, item)) => (m, item.to_string()),
                None => continue,
            },
        };
        let module: Vec<String> = module.split("::").map(|s| s.trim().to_string()).collect();
        for item in items.split(',') {
            let item = item.split(" as ").last().unwrap_or("").trim();
            if !item.is_empty() && !item.contains("::") {
                m.insert(item.to_string(), module.clone());
            }
        }
    }
    m
}

/// The module a path names: its longest prefix that is a module.
fn resolve(
    modules: &BTreeMap<String, PathBuf>,
    root_items: &BTreeMap<String, Vec<String>>,
    from: &str,
    path: &[String],
) -> Option<String> {
    let mut base: Vec<String> = from.split("::").map(str::to_string).collect();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base = vec!["crate".into()];
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    if base == ["crate"] {
        if let Some(first) = rest.first() {
            if !modules.contains_key(&format!("crate::{first}")) {
                if let Some(m) = root_items.get(first) {
                    let mut p = vec!["crate".to_string()];
                    p.extend(m.iter().cloned());
                    p.push(first.clone());
                    return longest(modules, &p);
                }
            }
        }
    }
    let mut full = base;
    full.extend(rest.iter().cloned());
    longest(modules, &full)
}

fn longest(modules: &BTreeMap<String, PathBuf>, full: &[String]) -> Option<String> {
    (1..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|p| modules.contains_key(p))
}
