//! The `txn` trace format: transactional command streams as text, for replay
//! (`commitlab run --trace F --trace-format txn`) and recording (`commitlab run --record F`).
//!
//! One command per line, six whitespace-separated fields:
//!
//! ```text
//! time_ns  txid  op       lpn  count  flags
//! 0        7     BEGIN    -    -      -
//! 0        7     W        120  2      -
//! 0        7     COMMIT   -    -      -
//! 15000    -     W        9    1      -
//! 15000    -     R        9    1      -
//! 20000    -     BARRIER  -    -      -
//! ```
//!
//! - `time_ns`: the command is not issued before this instant (0: as soon as its turn comes);
//! - `txid`: the transaction (a non-negative integer), or `-` for none;
//! - `op`: `BEGIN`, `W` (write), `R` (read), `T` (trim), `COMMIT`, `ABORT` or `BARRIER`;
//! - `lpn`, `count`: first logical page and number of pages for `W`, `R`, `T`; for `COMMIT`
//!   either `- -` or `lpn 1`: the transaction's last page, written with the COMMIT (Flag
//!   Commit §3.3's buffered last page); `-` otherwise;
//! - `flags`: reserved, `-`.
//!
//! `#` starts a comment line; blank lines are skipped. A `W` with a txid writes inside that
//! transaction; without one it is a plain write. `BEGIN`, `COMMIT` and `ABORT` need a txid;
//! `R`, `T` and `BARRIER` take none. Replay semantics are those of `txn::TxStream`.

use crate::txn::{Timed, TxCmd};
use crate::{werr, WorkloadError};
use sim::{Lpn, TxId};
use std::io::{BufRead, Write};

/// Parses a `txn` trace; the first malformed line is an error `name:line: problem`.
pub fn parse(name: &str, input: impl BufRead) -> Result<Vec<Timed>, WorkloadError> {
    parse_lines(name, input).map(|(cmds, _)| cmds)
}

/// `parse`, with each command's line in the file (from 1), so that what is found wrong
/// later (`txn::TxStream::with_lines`) names the line too.
pub fn parse_lines(
    name: &str,
    input: impl BufRead,
) -> Result<(Vec<Timed>, Vec<usize>), WorkloadError> {
    let mut out = Vec::new();
    let mut lines = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| werr(format!("{name}:{n}: {e}")))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let bad = |what: String| werr(format!("{name}:{n}: {what}"));
        if f.len() != 6 {
            return Err(bad(format!(
                "expected 6 fields (time_ns txid op lpn count flags), found {}",
                f.len()
            )));
        }
        let time_ns: u64 = f[0]
            .parse()
            .map_err(|_| bad(format!("time_ns '{}' is not a non-negative integer", f[0])))?;
        if time_ns > crate::MAX_TRACE_TIME_NS {
            return Err(bad(format!(
                "time_ns {time_ns} is beyond the simulator's time range (at most {})",
                crate::MAX_TRACE_TIME_NS
            )));
        }
        let tx = match f[1] {
            "-" => None,
            s => Some(TxId(s.parse().map_err(|_| {
                bad(format!(
                    "txid '{s}' is neither '-' nor a non-negative integer"
                ))
            })?)),
        };
        let num = |k: usize, what: &str| -> Result<u32, WorkloadError> {
            f[k].parse::<u32>()
                .map_err(|_| bad(format!("{what} '{}' is not a non-negative integer", f[k])))
        };
        let need_tx = |op: &str| tx.ok_or_else(|| bad(format!("{op} needs a txid")));
        let no_tx = |op: &str| {
            if tx.is_some() {
                Err(bad(format!("{op} takes no txid ('-')")))
            } else {
                Ok(())
            }
        };
        let cmd = match f[2] {
            "BEGIN" => TxCmd::Begin {
                tx: need_tx("BEGIN")?,
            },
            "COMMIT" => {
                let tx = need_tx("COMMIT")?;
                // `COMMIT lpn 1`: the transaction's last page, written with the COMMIT.
                let write = match (f[3], f[4]) {
                    ("-", "-") => None,
                    _ => {
                        if num(4, "count")? != 1 {
                            return Err(bad(
                                "a COMMIT carries at most one page (count 1, or '-' for none)"
                                    .into(),
                            ));
                        }
                        Some(Lpn(num(3, "lpn")?))
                    }
                };
                TxCmd::Commit { tx, write }
            }
            "ABORT" => TxCmd::Abort {
                tx: need_tx("ABORT")?,
            },
            "BARRIER" => {
                no_tx("BARRIER")?;
                TxCmd::Barrier
            }
            "W" | "R" | "T" => {
                let lpn = Lpn(num(3, "lpn")?);
                let pages = num(4, "count")?;
                if pages == 0 {
                    return Err(bad("count must be at least 1".into()));
                }
                match f[2] {
                    "W" => TxCmd::Write { tx, lpn, pages },
                    "R" => {
                        no_tx("R")?;
                        TxCmd::Read { lpn, pages }
                    }
                    _ => {
                        no_tx("T")?;
                        TxCmd::Trim { lpn, pages }
                    }
                }
            }
            other => {
                return Err(bad(format!(
                    "unknown op '{other}' (BEGIN, W, R, T, COMMIT, ABORT, BARRIER)"
                )))
            }
        };
        out.push(Timed { time_ns, cmd });
        lines.push(n);
    }
    Ok((out, lines))
}

/// Writes one command as a trace line.
pub fn write_line(w: &mut impl Write, t: &Timed) -> std::io::Result<()> {
    let tx = |x: Option<TxId>| x.map_or("-".to_string(), |t| t.0.to_string());
    match &t.cmd {
        TxCmd::Begin { tx: x } => writeln!(w, "{} {} BEGIN - - -", t.time_ns, x.0),
        TxCmd::Commit { tx: x, write: None } => {
            writeln!(w, "{} {} COMMIT - - -", t.time_ns, x.0)
        }
        TxCmd::Commit {
            tx: x,
            write: Some(l),
        } => writeln!(w, "{} {} COMMIT {} 1 -", t.time_ns, x.0, l.0),
        TxCmd::Abort { tx: x } => writeln!(w, "{} {} ABORT - - -", t.time_ns, x.0),
        TxCmd::Barrier => writeln!(w, "{} - BARRIER - - -", t.time_ns),
        TxCmd::Write { tx: x, lpn, pages } => {
            writeln!(w, "{} {} W {} {} -", t.time_ns, tx(*x), lpn.0, pages)
        }
        TxCmd::Read { lpn, pages } => writeln!(w, "{} - R {} {} -", t.time_ns, lpn.0, pages),
        TxCmd::Trim { lpn, pages } => writeln!(w, "{} - T {} {} -", t.time_ns, lpn.0, pages),
    }
}

/// The header line every written trace starts with.
pub const HEADER: &str = "# commitlab txn trace: time_ns txid op lpn count flags";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let text = "# c\n0 7 BEGIN - - -\n0 7 W 120 2 -\n5 7 COMMIT - - -\n\n9 - W 3 1 -\n9 - R 3 1 -\n9 - T 3 1 -\n10 - BARRIER - - -\n11 8 BEGIN - - -\n11 8 ABORT - - -\n";
        let cmds = parse("t", text.as_bytes()).unwrap();
        assert_eq!(cmds.len(), 9);
        let mut buf = Vec::new();
        for c in &cmds {
            write_line(&mut buf, c).unwrap();
        }
        assert_eq!(parse("t", &buf[..]).unwrap(), cmds);
    }

    #[test]
    fn malformed_lines_name_line_and_problem() {
        let cases = [
            ("0 1 BEGIN - -\n", ":1: expected 6 fields"),
            ("x 1 BEGIN - - -\n", ":1: time_ns 'x'"),
            (
                "9223372036854775807 1 BEGIN - - -\n",
                ":1: time_ns 9223372036854775807 is beyond",
            ),
            ("0 q BEGIN - - -\n", ":1: txid 'q'"),
            ("0 - BEGIN - - -\n", ":1: BEGIN needs a txid"),
            ("0 1 FROB - - -\n", ":1: unknown op 'FROB'"),
            ("0 1 W - 1 -\n", ":1: lpn '-'"),
            ("0 1 W 5 0 -\n", ":1: count must be at least 1"),
            ("0 1 R 5 1 -\n", ":1: R takes no txid"),
            ("0 - BEGIN - - -\n", "needs a txid"),
            (
                "0 - W 1 1 -\n0 3 BARRIER - - -\n",
                ":2: BARRIER takes no txid",
            ),
        ];
        for (text, want) in cases {
            let e = parse("f", text.as_bytes()).unwrap_err();
            assert!(e.what.contains(want), "{text:?}: {}", e.what);
        }
    }
}
