//! Empty on purpose: it exists so that `[build-dependencies]` in Cargo.toml take part in
//! feature resolution (see the comment there).
fn main() {}
