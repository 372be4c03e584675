//! Every command line of README.md runs as written. The commands are the lines of its
//! fenced `sh` blocks (a line ending in `\` continues on the next); each runs under `bash`
//! in one scratch directory, in README order (later lines read the files earlier ones
//! wrote), with `commitlab` on the PATH as this build's binary. `cargo run --release --` is
//! the same binary (the README says so), so it runs as `commitlab`. Lines that build or
//! install (`cargo test`, `cargo build`, `pip install`) are what `.ci/run` runs, so they
//! must appear there verbatim; `python -c` lines are run by `python/tests/test_readme.py`
//! against the installed package. `text` blocks are synopses with placeholders, not
//! command lines.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The command lines of `sh` blocks, continuations joined.
fn commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in readme.lines() {
        let t = line.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            in_sh = !in_sh && matches!(info.trim(), "sh" | "shell" | "bash");
            continue;
        }
        if !in_sh || (pending.is_empty() && (t.is_empty() || t.starts_with('#'))) {
            continue;
        }
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line.trim());
                out.push(std::mem::take(&mut pending).trim().to_string());
            }
        }
    }
    out
}

#[test]
fn readme_commands_run_as_written() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let cmds = commands(&readme);
    assert!(cmds.len() >= 20, "too few README commands found: {cmds:?}");
    let dir = std::env::temp_dir().join(format!("commitlab-readme-{}", std::process::id()));
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("commitlab");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_commitlab"), &link).unwrap();
    // README paths are relative to the repository root (`examples/traces/...`).
    let examples = dir.join("examples");
    let _ = std::fs::remove_file(&examples);
    std::os::unix::fs::symlink(root().join("examples"), &examples).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for c in &cmds {
        let first: Vec<&str> = c.split_whitespace().take(2).collect();
        match first.as_slice() {
            ["cargo", "test" | "build"] | ["pip", "install"] => {
                // `pip install X` is run as `"$PYTHON" -m pip install X`.
                let runs = |l: &str| {
                    let l = l.split(" # ").next().unwrap_or(l).trim();
                    l == c.as_str() || l.ends_with(&format!(" -m {c}"))
                };
                assert!(
                    ci.lines().any(runs),
                    "README command not run by .ci/run: {c}"
                );
                continue;
            }
            ["python" | "python3", "-c"] => continue, // python/tests/test_readme.py
            _ => {}
        }
        let script = c.replace("cargo run --release --", "commitlab");
        assert!(
            script.starts_with("commitlab "),
            "a README command this test does not know how to run: {c}"
        );
        let o = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "README command failed ({:?}): {c}\nstdout: {}\nstderr: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 20, "{ran} commands ran");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn readme_blocks_are_extracted_with_continuations() {
    let md = "text\n```sh\n# a comment\ncommitlab run \\\n    --protocol tc   # note\n\ncommitlab protocols\n```\n```text\ncommitlab run [--x]\n```\n";
    assert_eq!(
        commands(md),
        vec![
            "commitlab run  --protocol tc   # note".to_string(),
            "commitlab protocols".to_string()
        ]
    );
}
