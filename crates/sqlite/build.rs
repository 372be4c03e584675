//! Passes the directory of the bundled SQLite's headers (`sqlite3.h`, `sqlite3ext.h`;
//! libsqlite3-sys announces it as `DEP_SQLITE3_INCLUDE`) to the crate, which embeds them to
//! compile SQLite's speedtest1 against the very library it links (`speedtest1.rs`).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_SQLITE3_INCLUDE");
    println!("cargo:rustc-check-cfg=cfg(commitlab_sqlite_headers)");
    if let Ok(dir) = std::env::var("DEP_SQLITE3_INCLUDE") {
        if std::path::Path::new(&dir).join("sqlite3ext.h").is_file() {
            println!("cargo:rustc-env=COMMITLAB_SQLITE3_INCLUDE={dir}");
            println!("cargo:rustc-cfg=commitlab_sqlite_headers");
        }
    }
}
