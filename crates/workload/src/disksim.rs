//! DiskSim / MQSim ASCII block traces.
//!
//! One request per line, five whitespace-separated fields:
//!
//! ```text
//! arrival_ns  device  lsn  size_sectors  op
//! ```
//!
//! `op` is 0 for a write and 1 for a read; sectors are 512 bytes. This is the format MQSim's
//! `ASCII trace` reader takes (and SSDSim's), so one trace file runs on all three simulators.
//! Blank lines and lines starting with `#` are skipped. Arrival times must not decrease.
//! Requests are replayed open-loop at their arrival times (scaled by `time_scale`, e.g. 1/70
//! to accelerate a trace 70 times as LightTx §4.1 does), counted from the start of
//! measurement (`Driver::set_origin`, after the prefill). Sector ranges map to the pages they
//! touch; addresses beyond the device fold modulo its logical pages when `fold` is set, and
//! are an error otherwise.

use crate::{werr, Driver, Op, Step, WorkloadError};
use sim::{Lpn, SimTime};
use std::io::BufRead;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRequest {
    pub arrival_ns: u64,
    pub device: u32,
    pub lsn: u64,
    pub sectors: u32,
    pub read: bool,
}

/// Parses a whole trace, reporting the first malformed line as `name:line: problem`.
pub fn parse(name: &str, input: impl BufRead) -> Result<Vec<TraceRequest>, WorkloadError> {
    let mut out = Vec::new();
    let mut last = 0u64;
    for (i, line) in input.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| werr(format!("{name}:{n}: {e}")))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        if f.len() != 5 {
            return Err(werr(format!(
                "{name}:{n}: expected 5 fields (arrival_ns device lsn size_sectors op), found {}",
                f.len()
            )));
        }
        let num = |k: usize, what: &str| -> Result<u64, WorkloadError> {
            f[k].parse::<u64>().map_err(|_| {
                werr(format!(
                    "{name}:{n}: {what} '{}' is not a non-negative integer",
                    f[k]
                ))
            })
        };
        let arrival_ns = num(0, "arrival_ns")?;
        let device = num(1, "device")?;
        let lsn = num(2, "lsn")?;
        let sectors = num(3, "size_sectors")?;
        let op = num(4, "op")?;
        if op > 1 {
            return Err(werr(format!(
                "{name}:{n}: op must be 0 (write) or 1 (read), found {op}"
            )));
        }
        if sectors == 0 || sectors > u64::from(u32::MAX) {
            return Err(werr(format!(
                "{name}:{n}: size_sectors must be in 1..={}, found {sectors}",
                u32::MAX
            )));
        }
        if arrival_ns > crate::MAX_TRACE_TIME_NS {
            return Err(werr(format!(
                "{name}:{n}: arrival_ns {arrival_ns} is beyond the simulator's time range (at most {})",
                crate::MAX_TRACE_TIME_NS
            )));
        }
        if arrival_ns < last {
            return Err(werr(format!(
                "{name}:{n}: arrival time {arrival_ns} is earlier than the previous line's {last}"
            )));
        }
        last = arrival_ns;
        out.push(TraceRequest {
            arrival_ns,
            device: device as u32,
            lsn,
            sectors: sectors as u32,
            read: op == 1,
        });
    }
    Ok(out)
}

/// Replays a parsed trace open-loop.
pub struct DiskSimReplay {
    reqs: Vec<(SimTime, Op)>,
    idx: usize,
    name: String,
    pub folded: u64,
    /// Where the trace's time 0 falls (the start of measurement).
    origin: SimTime,
    last_arrival: Option<SimTime>,
}

impl DiskSimReplay {
    /// `time_scale` multiplies arrival times; `fold` folds addresses beyond the device.
    pub fn new(
        name: &str,
        reqs: &[TraceRequest],
        page_bytes: u32,
        logical_pages: u32,
        time_scale: f64,
        fold: bool,
    ) -> Result<DiskSimReplay, WorkloadError> {
        if time_scale.is_nan() || time_scale <= 0.0 || !time_scale.is_finite() {
            return Err(werr(format!(
                "workload.trace.time_scale must be positive, got {time_scale}"
            )));
        }
        let spp = u64::from(page_bytes / 512).max(1);
        let lp = u64::from(logical_pages);
        let mut out = Vec::with_capacity(reqs.len());
        let mut folded = 0;
        for (i, r) in reqs.iter().enumerate() {
            let first = r.lsn / spp;
            let last = (r.lsn + u64::from(r.sectors) - 1) / spp;
            let pages = last - first + 1;
            if pages > lp {
                return Err(werr(format!(
                    "{name}: request {} spans {pages} pages, more than the device's {lp}",
                    i + 1
                )));
            }
            let mut start = first;
            if first + pages > lp {
                if !fold {
                    return Err(werr(format!(
                        "{name}: request {} addresses page {first}, beyond the device's {lp} logical pages (set workload.trace.fold = true to fold)",
                        i + 1
                    )));
                }
                start = first % (lp - pages + 1);
                folded += 1;
            }
            let t = SimTime((r.arrival_ns as f64 * time_scale).round() as u64);
            let lpn = Lpn(start as u32);
            let pages = pages as u32;
            let op = if r.read {
                Op::Read { lpn, pages }
            } else {
                Op::Write { lpn, pages }
            };
            out.push((t, op));
        }
        Ok(DiskSimReplay {
            reqs: out,
            idx: 0,
            name: name.into(),
            folded,
            origin: SimTime::ZERO,
            last_arrival: None,
        })
    }

    pub fn len(&self) -> usize {
        self.reqs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }
}

impl Driver for DiskSimReplay {
    fn clients(&self) -> u32 {
        1
    }

    fn set_origin(&mut self, origin: SimTime) {
        self.origin = origin;
    }

    fn arrival(&self, _client: u32) -> Option<SimTime> {
        self.last_arrival
    }

    fn step(&mut self, _client: u32, now: SimTime) -> Step {
        self.last_arrival = None;
        let Some((t, op)) = self.reqs.get(self.idx) else {
            return Step::Done;
        };
        let at = self.origin + t.as_ns();
        if at > now {
            return Step::Sleep(at);
        }
        let op = op.clone();
        self.idx += 1;
        self.last_arrival = Some(at);
        let next = self
            .reqs
            .get(self.idx)
            .map_or(now, |(t, _)| (self.origin + t.as_ns()).max(now));
        Step::IssueThen(op, next)
    }

    fn describe(&self) -> String {
        format!("disksim trace {}: {} requests", self.name, self.reqs.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_maps_sectors_to_pages() {
        let text = "# comment\n0 0 0 8 0\n\n1000 0 12 16 1\n";
        let reqs = parse("t", text.as_bytes()).unwrap();
        assert_eq!(reqs.len(), 2);
        let r = DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, false).unwrap();
        assert_eq!(
            r.reqs[0].1,
            Op::Write {
                lpn: Lpn(0),
                pages: 1
            }
        );
        // sectors 12..28 touch pages 1, 2 and 3.
        assert_eq!(
            r.reqs[1].1,
            Op::Read {
                lpn: Lpn(1),
                pages: 3
            }
        );
        assert_eq!(r.reqs[1].0, SimTime(1000));
    }

    #[test]
    fn malformed_lines_name_the_line_and_problem() {
        let cases = [
            ("0 0 0 8\n", ":1: expected 5 fields"),
            ("0 0 x 8 0\n", ":1: lsn 'x'"),
            ("0 0 0 8 2\n", ":1: op must be 0"),
            ("0 0 0 0 0\n", ":1: size_sectors"),
            ("5 0 0 8 0\n4 0 0 8 0\n", ":2: arrival time 4"),
            ("-1 0 0 8 0\n", ":1: arrival_ns"),
            (
                "18446744073709551000 0 0 8 0\n",
                ":1: arrival_ns 18446744073709551000 is beyond",
            ),
            (
                "0 0 0 18446744073709551615 0\n",
                ":1: size_sectors must be in 1..=",
            ),
        ];
        for (text, want) in cases {
            let e = parse("f", text.as_bytes()).unwrap_err();
            assert!(e.what.contains(want), "{text:?}: {}", e.what);
        }
    }

    #[test]
    fn out_of_range_addresses_fold_or_fail() {
        let reqs = parse("t", "0 0 8000 8 0\n".as_bytes()).unwrap();
        assert!(DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, false).is_err());
        let r = DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, true).unwrap();
        assert_eq!(r.folded, 1);
        assert!(matches!(r.reqs[0].1, Op::Write { lpn: Lpn(l), .. } if l < 100));
    }

    #[test]
    fn replay_is_open_loop_at_trace_times() {
        let reqs = parse("t", "100 0 0 8 0\n300 0 8 8 0\n".as_bytes()).unwrap();
        let mut r = DiskSimReplay::new("t", &reqs, 4096, 100, 0.5, false).unwrap();
        assert_eq!(r.step(0, SimTime(0)), Step::Sleep(SimTime(50)));
        assert!(matches!(
            r.step(0, SimTime(50)),
            Step::IssueThen(_, SimTime(150))
        ));
        assert!(matches!(
            r.step(0, SimTime(150)),
            Step::IssueThen(_, SimTime(150))
        ));
        assert_eq!(r.step(0, SimTime(150)), Step::Done);
    }
}
