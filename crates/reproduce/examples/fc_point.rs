//! One Flag Commit reproduction point alone, as `reproduce --paper flagcommit` runs it
//! (`remote::run_point`: the point's device built and prepared, then the host engine on it),
//! for profiling and for comparing two builds on one point:
//! `cargo run --release -p commitlab-reproduce --example fc_point -- CONFIG.toml [--prep loaded|aged|fresh]`.
//! CONFIG is a point's configuration as REPORT.html lists it; without `--prep` the point's
//! own preparation (`flagcommit::prep_of`). Prints the point's result JSON on stdout (the
//! same bytes the report reads) and its CPU seconds on stderr.

/// The same global allocator as the `commitlab` binary (docs/TOOL.md, "Commands and output").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use commitlab_reproduce::flagcommit::Prep;
use commitlab_reproduce::remote::{config_json, run_point, PointTask};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        return Err("usage: fc_point CONFIG.toml [--prep loaded|aged|fresh]".into());
    };
    let task = match args.get(1).map(String::as_str) {
        None => PointTask::FlagCommit,
        Some("--prep") => {
            let prep = match args.get(2).map(String::as_str) {
                Some("loaded") => Prep::Loaded,
                Some("aged") => Prep::Aged,
                Some("fresh") => Prep::Fresh,
                other => {
                    return Err(format!(
                        "--prep: expected loaded, aged or fresh, got {other:?}"
                    ))
                }
            };
            PointTask::FlagCommitPrepared { prep }
        }
        Some(other) => return Err(format!("unknown argument '{other}'")),
    };
    let cfg = world::Config::load(&world::ConfigSource {
        preset: None,
        file: Some(file.into()),
        sets: Vec::new(),
    })
    .map_err(|e| e.to_string())?;
    let r = run_point(task, &config_json(&cfg)?)?;
    println!("{}", r.metrics);
    eprintln!(
        "cpu_s {:.3} wall_s {:.3} peak_rss_bytes {}",
        r.cpu_s, r.wall_s, r.peak_rss_bytes
    );
    Ok(())
}
