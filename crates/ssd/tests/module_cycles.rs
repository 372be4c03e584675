//! No module of the crate names, through `crate::`/`super::` paths, a module that names it
//! back (docs/ARCHITECTURE.md, "Device crate (ssd): layers and shared protocol machinery").
//! The reader is `support/module_graph.rs`, which other crates' tests can include for their
//! own `src`.

#[path = "support/module_graph.rs"]
mod module_graph;

use std::fs;
use std::path::Path;

#[test]
fn ssd_modules_import_each_other_in_no_circle() {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let g = module_graph::graph(src).unwrap();
    assert!(
        g.modules.len() > 30,
        "read only {} modules",
        g.modules.len()
    );
    assert!(g
        .edges
        .contains(&("crate::protocols::tc".into(), "crate::core".into())));
    let cycles = module_graph::cycles_in(src).unwrap();
    let text: Vec<String> = cycles
        .iter()
        .map(|(mods, edges)| format!("{}\n    {}", mods.join(", "), edges.join("\n    ")))
        .collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", text.join("\n"));
}

/// Writes a small crate and returns its `src`.
fn tiny_crate(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(name)
        .join("src");
    let _ = fs::remove_dir_all(&src);
    for (f, text) in files {
        let p = src.join(f);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    src
}

#[test]
fn the_reader_finds_a_planted_cycle_and_ignores_tests_comments_and_composition() {
    let lib =
        "pub mod a;\npub mod b;\npub mod c;\n#[path = \"d_file.rs\"]\nmod d;\npub use c::Thing;\n";
    let a =
        "use crate::{b::{self, X}};\n// crate::c::nothing\nfn f() { let _ = \"crate::c::x\"; }\n\
             #[cfg(test)]\nmod tests { use crate::c::Y; }\n";
    let b = "pub mod inner;\npub fn g() { inner::h(); crate::d::z(); }\n";
    let inner = "use super::super::d::Z;\n";
    let c = "fn k() { let _ = crate::Thing; let _c = '{'; }\n";
    let d = "use crate::a::F;\n";
    let files = [
        ("lib.rs", lib),
        ("a.rs", a),
        ("b.rs", b),
        ("b/inner.rs", inner),
        ("c.rs", c),
        ("d_file.rs", d),
    ];
    let src = tiny_crate("cycle", &files);
    let g = module_graph::graph(&src).unwrap();
    let edges: Vec<String> = g.edges.iter().map(|(x, y)| format!("{x}->{y}")).collect();
    assert_eq!(
        edges,
        [
            "crate::a->crate::b",
            "crate::b->crate::d",
            "crate::b::inner->crate::d",
            "crate::d->crate::a",
        ]
    );
    let cycles = module_graph::cycles(&g);
    assert_eq!(cycles, [["crate::a", "crate::b", "crate::d"]]);
    // Without the edge back, no cycle.
    let src = tiny_crate(
        "acyclic",
        &[
            files[0],
            files[1],
            files[2],
            files[3],
            files[4],
            ("d_file.rs", "\n"),
        ],
    );
    assert!(module_graph::cycles_in(&src).unwrap().is_empty());
}
