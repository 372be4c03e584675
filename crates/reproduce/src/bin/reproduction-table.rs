//! `reproduction-table QUICK/claims.json [FULL/claims.json] [--note TEXT]`: prints
//! docs/REPRODUCTION.md, per-paper tables generated from the claims.json of a quick and
//! (optionally) a full `commitlab reproduce` (`reproduce::table`). `--note` is the
//! paragraph that says which commit and commands produced the inputs. Bad arguments or
//! unreadable input: a message naming it, exit 2.

use std::process::ExitCode;

const USAGE: &str = "usage: reproduction-table QUICK/claims.json [FULL/claims.json] [--note TEXT]";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(md) => {
            print!("{md}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<String, String> {
    let mut files = Vec::new();
    let mut note = String::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--note" => note = it.next().ok_or("--note needs a value")?,
            "-h" | "--help" => return Err(USAGE.into()),
            s if s.starts_with("--") => return Err(format!("unknown option '{s}'; {USAGE}")),
            _ => files.push(a),
        }
    }
    if files.is_empty() || files.len() > 2 {
        return Err(format!("expected one or two claims.json files; {USAGE}"));
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let quick = read(&files[0])?;
    let full = files.get(1).map(|p| read(p)).transpose()?;
    commitlab_reproduce::table::markdown(&quick, full.as_deref(), &note)
}
