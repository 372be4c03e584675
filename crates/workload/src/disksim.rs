//! DiskSim / MQSim ASCII block traces, and the open-loop replay of every block trace.
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
//! The reader is `blocktrace::BlockTraceReader` with `BlockFormat::Disksim` (this module
//! parses one line); `parse` collects it for tests and small traces.
//!
//! `DiskSimReplay` replays any block trace (DiskSim, blkreplay, MSR, SPC) open-loop at its
//! arrival times (scaled by `time_scale`, e.g. 0.0142857 to accelerate a trace 70 times as
//! LightTx §4.1 does), counted from the start of measurement (`Driver::set_origin`, after
//! the prefill). It is **streamed**: it holds one request ahead, not the trace, so memory
//! does not grow with the trace. It reads the trace once, validating each line and address
//! as it replays it: a bad line ends the replay, and the run returns the error (naming the
//! file and line) instead of results, so `commitlab run` exits 2 and writes no results. A
//! first pass to validate before the run (as it once did) cost a whole second parse of the
//! trace, about 15 % of a replay's CPU; what it bought, an error before the prefill, is not
//! worth that on traces that are nearly always well-formed. The request count and the
//! folded and partial-write counts are therefore known only at the end (a streamed replay
//! reports no total to the progress bar, which then shows a count).
//!
//! Sector ranges map to the whole pages they touch. A write that covers its first or last
//! page only in part (smaller than a page, or not page-aligned) becomes `Op::PartialWrite`,
//! which the device serves by read-modify-write (`ssd::Device::write_partial`); a read is
//! a read of the whole pages. Addresses beyond the device fold modulo its logical pages
//! when `fold` is set, and are an error otherwise.

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
    /// The trace file's line this request came from (from 1; 0 when it did not come from a
    /// file), so that an error found after parsing names the line the user can open.
    pub line: u64,
}

/// Parses one non-blank, non-comment DiskSim line (the reader adds `name:line:` to errors
/// and checks the arrival order and range).
pub(crate) fn parse_line(t: &str) -> Result<TraceRequest, String> {
    let f: Vec<&str> = t.split_whitespace().collect();
    if f.len() != 5 {
        return Err(format!(
            "expected 5 fields (arrival_ns device lsn size_sectors op), found {}{}",
            f.len(),
            csv_hint(t)
        ));
    }
    let num = |k: usize, what: &str| -> Result<u64, String> {
        f[k].parse::<u64>()
            .map_err(|_| format!("{what} '{}' is not a non-negative integer", f[k]))
    };
    let arrival_ns = num(0, "arrival_ns")?;
    let device = num(1, "device")?;
    let lsn = num(2, "lsn")?;
    let sectors = num(3, "size_sectors")?;
    let op = num(4, "op")?;
    if op > 1 {
        return Err(format!("op must be 0 (write) or 1 (read), found {op}"));
    }
    if sectors == 0 || sectors > u64::from(u32::MAX) {
        return Err(format!(
            "size_sectors must be in 1..={}, found {sectors}",
            u32::MAX
        ));
    }
    if lsn.checked_add(sectors).is_none() {
        return Err("sector range overflows".into());
    }
    Ok(TraceRequest {
        arrival_ns,
        device: device.min(u64::from(u32::MAX)) as u32,
        lsn,
        sectors: sectors as u32,
        read: op == 1,
        line: 0,
    })
}

/// A comma-separated line is no DiskSim line: name the CSV format its field count matches
/// (MSR Cambridge: 7 fields, Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime;
/// SPC-1/UMass: 5 or more, ASU,LBA,Size,Opcode,Timestamp).
fn csv_hint(t: &str) -> &'static str {
    match t.split(',').count() {
        7 => "; this looks like an MSR Cambridge CSV line: add --trace-format msr (workload.trace.format = \"msr\")",
        n if n >= 5 => "; this looks like an SPC-1/UMass CSV line: add --trace-format spc (workload.trace.format = \"spc\")",
        _ => "",
    }
}

/// Parses a whole trace, reporting the first malformed line as `name:line: problem`.
pub fn parse(name: &str, input: impl BufRead) -> Result<Vec<TraceRequest>, WorkloadError> {
    crate::blocktrace::parse(name, crate::blocktrace::BlockFormat::Disksim, input)
}

/// A pass over a trace's requests, stopping at the first error.
pub type Requests = Box<dyn Iterator<Item = Result<TraceRequest, WorkloadError>>>;
/// Opens a pass over a trace (the replay opens one, validated as it is replayed).
pub type Opener = Box<dyn FnMut() -> Result<Requests, WorkloadError>>;

/// How requests become ops on this device.
struct Mapper {
    sectors_per_page: u64,
    logical_pages: u64,
    time_scale: f64,
    fold: bool,
}

impl Mapper {
    fn new(
        page_bytes: u32,
        logical_pages: u32,
        time_scale: f64,
        fold: bool,
    ) -> Result<Mapper, WorkloadError> {
        if time_scale.is_nan() || time_scale <= 0.0 || !time_scale.is_finite() {
            return Err(werr(format!(
                "workload.trace.time_scale must be positive, got {time_scale}"
            )));
        }
        Ok(Mapper {
            sectors_per_page: u64::from(page_bytes / 512).max(1),
            logical_pages: u64::from(logical_pages),
            time_scale,
            fold,
        })
    }

    /// The op of request number `i` (from 1), and whether its address was folded.
    fn map(
        &self,
        name: &str,
        i: u64,
        r: &TraceRequest,
    ) -> Result<(SimTime, Op, bool), WorkloadError> {
        let spp = self.sectors_per_page;
        let lp = self.logical_pages;
        let end = r.lsn + u64::from(r.sectors);
        let first = r.lsn / spp;
        let last = (end - 1) / spp;
        let pages = last - first + 1;
        // Where the request is: the file's line when known, else its number.
        let at = if r.line > 0 {
            format!("{name}:{}: request", r.line)
        } else {
            format!("{name}: request {i}")
        };
        if pages > lp {
            return Err(werr(format!(
                "{at} spans {pages} pages, more than the device's {lp}"
            )));
        }
        let mut start = first;
        let mut folded = false;
        if first + pages > lp {
            if !self.fold {
                return Err(werr(format!(
                    "{at} addresses page {first}, beyond the device's {lp} logical pages (set workload.trace.fold = true to fold)"
                )));
            }
            start = first % (lp - pages + 1);
            folded = true;
        }
        let t = SimTime((r.arrival_ns as f64 * self.time_scale).round() as u64);
        let lpn = Lpn(start as u32);
        let pages = pages as u32;
        let op = if r.read {
            Op::Read { lpn, pages }
        } else {
            let (head_partial, tail_partial) = partial_ends(r.lsn, r.sectors, spp);
            if head_partial || tail_partial {
                Op::PartialWrite {
                    lpn,
                    pages,
                    head_partial,
                    tail_partial,
                }
            } else {
                Op::Write { lpn, pages }
            }
        };
        Ok((t, op, folded))
    }
}

/// Whether a request of `sectors` sectors at `lsn` covers its first page only in part, and
/// (when it spans more than one page) its last. A one-page request reports only the first.
pub fn partial_ends(lsn: u64, sectors: u32, sectors_per_page: u64) -> (bool, bool) {
    let spp = sectors_per_page.max(1);
    let end = lsn + u64::from(sectors);
    let (first, last) = (lsn / spp, (end - 1) / spp);
    let head = lsn % spp != 0 || (first == last && end % spp != 0);
    let tail = last != first && end % spp != 0;
    (head, tail)
}

/// Replays a block trace open-loop, streamed.
pub struct DiskSimReplay {
    src: Requests,
    mapper: Mapper,
    /// The next request to issue (mapped), read one ahead.
    ahead: Option<(SimTime, Op)>,
    /// Requests read from `src` so far (for error messages, and the total at the end).
    read: u64,
    /// The number of requests when known before the replay (a replay from memory).
    known_total: Option<u64>,
    /// Whether `folded` and `partial_writes` were counted before the replay (from memory),
    /// so `advance` does not count them again.
    precounted: bool,
    name: String,
    pub folded: u64,
    /// Writes that cover a page only in part (read-modify-write in the device).
    pub partial_writes: u64,
    /// Where the trace's time 0 falls (the start of measurement).
    origin: SimTime,
    last_arrival: Option<SimTime>,
    error: Option<WorkloadError>,
}

impl DiskSimReplay {
    /// A replay of requests already in memory (tests, small traces).
    pub fn new(
        name: &str,
        reqs: &[TraceRequest],
        page_bytes: u32,
        logical_pages: u32,
        time_scale: f64,
        fold: bool,
    ) -> Result<DiskSimReplay, WorkloadError> {
        // In memory, checking every address and counting up front costs no parse: a bad
        // address is an error here, before anything runs.
        let mapper = Mapper::new(page_bytes, logical_pages, time_scale, fold)?;
        let (mut folded, mut partial_writes) = (0u64, 0u64);
        for (i, r) in reqs.iter().enumerate() {
            let (_, op, f) = mapper.map(name, i as u64 + 1, r)?;
            folded += u64::from(f);
            partial_writes += u64::from(matches!(op, Op::PartialWrite { .. }));
        }
        let v = reqs.to_vec();
        let mut r = DiskSimReplay::with_source(name, Box::new(v.into_iter().map(Ok)), mapper);
        r.known_total = Some(reqs.len() as u64);
        r.precounted = true;
        r.folded = folded;
        r.partial_writes = partial_writes;
        r.advance();
        Ok(r)
    }

    /// A streamed replay: `open` is called once, and each request is validated as it is
    /// replayed (an error ends the replay and is returned by `take_error`, which the run
    /// turns into its error). `time_scale` multiplies arrival times; `fold` folds addresses
    /// beyond the device.
    pub fn streamed(
        name: &str,
        mut open: Opener,
        page_bytes: u32,
        logical_pages: u32,
        time_scale: f64,
        fold: bool,
    ) -> Result<DiskSimReplay, WorkloadError> {
        let mapper = Mapper::new(page_bytes, logical_pages, time_scale, fold)?;
        let mut r = DiskSimReplay::with_source(name, open()?, mapper);
        r.advance();
        Ok(r)
    }

    fn with_source(name: &str, src: Requests, mapper: Mapper) -> DiskSimReplay {
        DiskSimReplay {
            src,
            mapper,
            ahead: None,
            read: 0,
            known_total: None,
            precounted: false,
            name: name.into(),
            folded: 0,
            partial_writes: 0,
            origin: SimTime::ZERO,
            last_arrival: None,
            error: None,
        }
    }

    /// Reads the next request into `ahead` (`None` at the end or on an error, kept).
    fn advance(&mut self) {
        self.ahead = None;
        if self.error.is_some() {
            return;
        }
        match self.src.next() {
            None => {}
            Some(Err(e)) => self.error = Some(e),
            Some(Ok(req)) => {
                self.read += 1;
                match self.mapper.map(&self.name, self.read, &req) {
                    Ok((t, op, folded)) => {
                        if !self.precounted {
                            self.folded += u64::from(folded);
                            self.partial_writes += u64::from(matches!(op, Op::PartialWrite { .. }));
                        }
                        self.ahead = Some((t, op));
                    }
                    Err(e) => self.error = Some(e),
                }
            }
        }
    }

    /// Requests in the trace: all of them for a replay from memory; for a streamed one,
    /// those read so far (all of them once the replay has ended without an error).
    pub fn len(&self) -> usize {
        self.known_total.unwrap_or(self.read) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let Some((t, _)) = &self.ahead else {
            return Step::Done;
        };
        let at = self.origin + t.as_ns();
        if at > now {
            return Step::Sleep(at);
        }
        let Some((_, op)) = self.ahead.take() else {
            return Step::Done;
        };
        self.advance();
        self.last_arrival = Some(at);
        let next = self
            .ahead
            .as_ref()
            .map_or(now, |(t, _)| (self.origin + t.as_ns()).max(now));
        Step::IssueThen(op, next)
    }

    fn describe(&self) -> String {
        let mut s = format!("block trace {}: {} requests", self.name, self.len());
        if self.partial_writes > 0 {
            s.push_str(&format!(
                ", {} sub-page or unaligned writes (read-modify-write)",
                self.partial_writes
            ));
        }
        if self.folded > 0 {
            s.push_str(&format!(", {} folded into the device", self.folded));
        }
        s
    }

    fn total_requests(&self) -> Option<u64> {
        self.known_total
    }

    fn take_error(&mut self) -> Option<WorkloadError> {
        self.error.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_line_names_the_format_it_looks_like() {
        let e = parse_line("128166372003061629,hm,1,Read,7014609920,24576,41286").unwrap_err();
        assert!(e.contains("--trace-format msr"), "{e}");
        let e = parse_line("0,20941264,8192,W,0.551706").unwrap_err();
        assert!(e.contains("--trace-format spc"), "{e}");
        let e = parse_line("1 2 3").unwrap_err();
        assert!(!e.contains("--trace-format"), "{e}");
    }

    /// Every op the replay issues, with its issue instant (stepping as the world does).
    pub(crate) fn ops(r: &mut DiskSimReplay) -> Vec<(SimTime, Op)> {
        let mut out = Vec::new();
        let mut now = SimTime(0);
        loop {
            match r.step(0, now) {
                Step::IssueThen(op, next) => {
                    out.push((now, op));
                    now = next;
                }
                Step::Sleep(t) => now = t,
                Step::Done => break,
                s => panic!("{s:?}"),
            }
        }
        out
    }

    #[test]
    fn parses_and_maps_sectors_to_pages() {
        let text = "# comment\n0 0 0 8 0\n\n1000 0 12 16 1\n";
        let reqs = parse("t", text.as_bytes()).unwrap();
        assert_eq!(reqs.len(), 2);
        let mut r = DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, false).unwrap();
        let ops = ops(&mut r);
        assert_eq!(
            ops[0].1,
            Op::Write {
                lpn: Lpn(0),
                pages: 1
            }
        );
        // sectors 12..28 touch pages 1, 2 and 3.
        assert_eq!(
            ops[1].1,
            Op::Read {
                lpn: Lpn(1),
                pages: 3
            }
        );
        assert_eq!(ops[1].0, SimTime(1000));
    }

    #[test]
    fn sub_page_and_unaligned_writes_are_partial_writes() {
        // 4 KiB pages = 8 sectors: aligned, one sector, unaligned across two pages, tail only.
        let text = "0 0 8 8 0\n0 0 9 1 0\n0 0 4 16 0\n0 0 8 12 0\n0 0 9 1 1\n";
        let reqs = parse("t", text.as_bytes()).unwrap();
        let mut r = DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, false).unwrap();
        assert_eq!(r.partial_writes, 3);
        let ops: Vec<Op> = ops(&mut r).into_iter().map(|x| x.1).collect();
        let pw = |lpn, pages, head_partial, tail_partial| Op::PartialWrite {
            lpn: Lpn(lpn),
            pages,
            head_partial,
            tail_partial,
        };
        assert_eq!(
            ops,
            vec![
                Op::Write {
                    lpn: Lpn(1),
                    pages: 1
                },
                pw(1, 1, true, false),
                pw(0, 3, true, true),
                pw(1, 2, false, true),
                Op::Read {
                    lpn: Lpn(1),
                    pages: 1
                },
            ]
        );
        assert_eq!(partial_ends(8, 1, 8), (true, false), "head of a page");
        assert_eq!(partial_ends(8, 8, 1), (false, false), "512-byte pages");
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
                ":1: arrival time 18446744073709551000 ns is beyond",
            ),
            (
                "0 0 0 18446744073709551615 0\n",
                ":1: size_sectors must be in 1..=",
            ),
            (
                "0 0 18446744073709551615 8 0\n",
                ":1: sector range overflows",
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
        let mut r = DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, true).unwrap();
        assert_eq!(r.folded, 1);
        let ops = ops(&mut r);
        assert!(matches!(ops[0].1, Op::Write { lpn: Lpn(l), .. } if l < 100));
    }

    #[test]
    fn replay_is_open_loop_at_trace_times() {
        let reqs = parse("t", "100 0 0 8 0\n300 0 8 8 0\n".as_bytes()).unwrap();
        let mut r = DiskSimReplay::new("t", &reqs, 4096, 100, 0.5, false).unwrap();
        assert_eq!(r.total_requests(), Some(2));
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
        assert!(r.take_error().is_none());
    }

    #[test]
    fn a_streamed_trace_is_read_once_and_a_bad_line_ends_the_replay_with_its_error() {
        let opened = std::rc::Rc::new(std::cell::Cell::new(0));
        let o = opened.clone();
        // Two good requests (the second folded), then a bad line, then a good one.
        let open: Opener = Box::new(move || {
            o.set(o.get() + 1);
            let text = "0 0 0 8 0\n10 0 8000 8 0\n20 0 8 8 7\n30 0 16 8 0\n";
            let v: Vec<_> = crate::blocktrace::BlockTraceReader::new(
                "t",
                crate::blocktrace::BlockFormat::Disksim,
                std::io::Cursor::new(text.to_string()),
            )
            .collect();
            Ok(Box::new(v.into_iter()) as Requests)
        });
        let mut r = DiskSimReplay::streamed("t", open, 4096, 100, 1.0, true).unwrap();
        assert_eq!(
            r.total_requests(),
            None,
            "a streamed replay knows no total ahead"
        );
        assert_eq!(ops(&mut r).len(), 2, "the requests before the bad line ran");
        assert_eq!(opened.get(), 1, "the trace is read once");
        assert_eq!((r.len(), r.folded), (2, 1));
        let e = r.take_error().expect("an error");
        assert!(e.what.contains("t:3: op must be"), "{}", e.what);
        // An address beyond the device (no folding) is found as it is replayed, too.
        let open: Opener = Box::new(|| {
            let v: Vec<_> = crate::blocktrace::BlockTraceReader::new(
                "u",
                crate::blocktrace::BlockFormat::Disksim,
                std::io::Cursor::new("0 0 0 8 0\n10 0 8000 8 0\n".to_string()),
            )
            .collect();
            Ok(Box::new(v.into_iter()) as Requests)
        });
        let mut r = DiskSimReplay::streamed("u", open, 4096, 100, 1.0, false).unwrap();
        assert_eq!(ops(&mut r).len(), 1);
        let e = r.take_error().expect("an error");
        assert!(
            e.what.contains("u:2: request addresses page 1000"),
            "{}",
            e.what
        );
    }

    #[test]
    fn a_streamed_replay_counts_what_a_replay_from_memory_counts() {
        let text = "0 0 8 8 0\n0 0 9 1 0\n0 0 4 16 0\n5 0 8000 12 0\n9 0 9 1 1\n";
        let reqs = parse("t", text.as_bytes()).unwrap();
        let mut mem = DiskSimReplay::new("t", &reqs, 4096, 100, 1.0, true).unwrap();
        let v = reqs.clone();
        let open: Opener =
            Box::new(move || Ok(Box::new(v.clone().into_iter().map(Ok)) as Requests));
        let mut st = DiskSimReplay::streamed("t", open, 4096, 100, 1.0, true).unwrap();
        assert_eq!(ops(&mut mem), ops(&mut st));
        assert_eq!(
            (mem.len(), mem.folded, mem.partial_writes),
            (st.len(), st.folded, st.partial_writes)
        );
        assert_eq!(mem.describe(), st.describe());
        assert!(st.take_error().is_none());
    }
}
