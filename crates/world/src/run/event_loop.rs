//! The run loop: clients wake, ask their driver for the next step and issue it; requests
//! complete at the instant the device returned; barriers release when every client has
//! reached one and nothing is outstanding.

use super::*;

impl World {
    pub(super) fn report_progress(&mut self) {
        let p = if self.measuring {
            Progress::Measure {
                done: self.requests - self.measured_from_request,
                total: self.driver.total_requests(),
            }
        } else {
            Progress::Prefill {
                done: self.requests,
                total: self.prefill_total,
            }
        };
        if let Some(f) = self.progress.as_mut() {
            f(p);
        }
    }

    pub(super) fn dev_err(&self, at: SimTime, op: &Op, error: SsdError) -> WorldError {
        WorldError::Device {
            at,
            request: format!("request {} ({op})", self.requests),
            error,
        }
    }

    pub(super) fn record_cmd(&mut self, now: SimTime, cmd: TxCmd) -> Result<(), WorldError> {
        if let Some(w) = self.trace_out.as_mut() {
            workload::txtrace::write_line(
                w,
                &Timed {
                    time_ns: now.as_ns(),
                    cmd,
                },
            )
            .map_err(|e| WorldError::Io(e.to_string()))?;
        }
        Ok(())
    }

    /// Issues one request; returns (ack time, kind).
    pub(super) fn submit(&mut self, op: &Op, now: SimTime) -> Result<(SimTime, u8), WorldError> {
        if self.trace_out.is_some() {
            let cmd = match *op {
                Op::Read { lpn, pages } => TxCmd::Read { lpn, pages },
                // A recording has no sub-page writes: it records the whole pages.
                Op::Write { lpn, pages } | Op::PartialWrite { lpn, pages, .. } => TxCmd::Write {
                    tx: None,
                    lpn,
                    pages,
                },
                Op::Trim { lpn, pages } => TxCmd::Trim { lpn, pages },
                Op::Begin { tx } => TxCmd::Begin { tx },
                Op::TxWrite { tx, lpn, pages } => TxCmd::Write {
                    tx: Some(tx),
                    lpn,
                    pages,
                },
                Op::Commit { tx, write } => TxCmd::Commit { tx, write },
                Op::Abort { tx } => TxCmd::Abort { tx },
            };
            self.record_cmd(now, cmd)?;
        }
        let d = &mut self.device;
        let mut ack_lines = String::new();
        let r: Result<(SimTime, u8), SsdError> = (|| {
            Ok(match *op {
                Op::Read { lpn, pages } => {
                    let mut end = now;
                    for p in 0..pages {
                        let (_, t) = d.read(Lpn(lpn.0 + p), now)?;
                        end = end.max(t);
                    }
                    (end, K_READ)
                }
                Op::Write { lpn, pages } | Op::PartialWrite { lpn, pages, .. } => {
                    // Sub-page or unaligned block-trace writes: read-modify-write of the
                    // partly covered first and last pages, in the device.
                    let (head, tail) = match *op {
                        Op::PartialWrite {
                            head_partial,
                            tail_partial,
                            ..
                        } => (head_partial, tail_partial),
                        _ => (false, false),
                    };
                    let mut end = now;
                    for p in 0..pages {
                        let tag = self.next_tag;
                        self.next_tag += 1;
                        let l = Lpn(lpn.0 + p);
                        let partial = (p == 0 && head) || (p + 1 == pages && tail);
                        let t = if partial {
                            d.write_partial(l, tag, now)?
                        } else {
                            d.write_plain(l, tag, now)?
                        };
                        end = end.max(t);
                        if self.record {
                            self.host_log.push(HostEvent::Plain {
                                lpn: l,
                                tag,
                                issue: now,
                                ack: t,
                            });
                        }
                        if self.ack_log.is_some() {
                            ack_lines.push_str(&format!("{} {tag}\n", l.0));
                        }
                    }
                    (end, K_WRITE)
                }
                Op::Trim { lpn, pages } => {
                    let mut end = now;
                    for p in 0..pages {
                        let l = Lpn(lpn.0 + p);
                        let t = d.trim(l, now)?;
                        end = end.max(t);
                        if self.ack_log.is_some() {
                            ack_lines.push_str(&format!("{} -\n", l.0));
                        }
                        if self.record {
                            self.host_log.push(HostEvent::Trim {
                                lpn: l,
                                issue: now,
                                ack: t,
                            });
                        }
                    }
                    (end, K_OTHER)
                }
                Op::Begin { tx } => {
                    let t = d.begin(tx, now)?;
                    self.tx_inst.insert(tx, self.next_inst);
                    self.next_inst += 1;
                    self.tx_begin.insert(tx, now);
                    (t, K_OTHER)
                }
                Op::TxWrite { tx, lpn, pages } => {
                    let mut end = now;
                    for p in 0..pages {
                        let tag = self.next_tag;
                        self.next_tag += 1;
                        let l = Lpn(lpn.0 + p);
                        let t = d.write(tx, l, tag, now)?;
                        end = end.max(t);
                        if self.ack_log.is_some() {
                            self.ack_tx_pages.entry(tx).or_default().push((l, tag));
                        }
                        if self.record {
                            let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                            self.host_log.push(HostEvent::TxWrite {
                                inst,
                                lpn: l,
                                tag,
                                issue: now,
                            });
                        }
                    }
                    (end, K_WRITE)
                }
                Op::Commit { tx, write } => {
                    let t = match write {
                        None => d.commit(tx, now)?,
                        Some(l) => {
                            let tag = self.next_tag;
                            self.next_tag += 1;
                            if self.ack_log.is_some() {
                                self.ack_tx_pages.entry(tx).or_default().push((l, tag));
                            }
                            if self.record {
                                let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                                self.host_log.push(HostEvent::TxWrite {
                                    inst,
                                    lpn: l,
                                    tag,
                                    issue: now,
                                });
                            }
                            d.commit_write(tx, l, tag, now)?
                        }
                    };
                    if let Some(pages) = self.ack_tx_pages.remove(&tx) {
                        for (l, tag) in pages {
                            ack_lines.push_str(&format!("{} {tag}\n", l.0));
                        }
                    }
                    if self.record {
                        let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                        self.host_log.push(HostEvent::Commit {
                            inst,
                            issue: now,
                            ack: t,
                        });
                    }
                    (t, K_COMMIT)
                }
                Op::Abort { tx } => {
                    let t = d.abort(tx, now)?;
                    self.ack_tx_pages.remove(&tx);
                    if self.record {
                        let inst = self.tx_inst.get(&tx).copied().unwrap_or(0);
                        self.host_log.push(HostEvent::Abort {
                            inst,
                            issue: now,
                            ack: t,
                        });
                    }
                    (t, K_ABORT)
                }
            })
        })();
        if let Some(f) = self.ack_log.as_mut() {
            if !ack_lines.is_empty() {
                use std::io::Write;
                f.write_all(ack_lines.as_bytes())
                    .map_err(|e| WorldError::Io(format!("ack log: {e}")))?;
            }
        }
        self.requests += 1;
        if self.progress.is_some() && self.requests.is_multiple_of(PROGRESS_EVERY) {
            self.report_progress();
        }
        // Only while measuring: peaks reset when measurement starts, and some protocols'
        // sizes take time proportional to their tables to compute.
        if self.measuring && self.requests.is_multiple_of(DRAM_SAMPLE_EVERY) {
            self.sample_dram();
        }
        let every = self.cfg.run.check_invariants_every;
        if every > 0 && self.requests.is_multiple_of(every) {
            self.device.check_invariants().map_err(|e| {
                WorldError::Config(format!(
                    "invariant broken after request {}: {e}",
                    self.requests
                ))
            })?;
        }
        r.map_err(|e| self.dev_err(now, op, e))
    }

    /// A barrier releases when nothing is outstanding and every client has reached it (or is
    /// done): a rendezvous, so a client sleeping before its next command still holds it.
    pub(super) fn maybe_release_barrier(&mut self, now: SimTime) -> Result<(), WorldError> {
        if self.barrier_waiters.is_empty()
            || self.outstanding > 0
            || self.clients.contains(&ClientState::Running)
        {
            return Ok(());
        }
        self.record_cmd(now, TxCmd::Barrier)?;
        for c in std::mem::take(&mut self.barrier_waiters) {
            self.clients[c as usize] = ClientState::Running;
            self.queue.push(now, Ev::Wake(c));
        }
        Ok(())
    }

    pub(super) fn on_wake(&mut self, c: u32, now: SimTime) -> Result<(), WorldError> {
        if self.clients[c as usize] != ClientState::Running {
            return Ok(());
        }
        if self.cfg.workload.warmup_requests > 0
            && self.requests == self.cfg.workload.warmup_requests
            && self.measured_from_request == 0
        {
            self.start_measuring(now);
        }
        match self.driver.step(c, now) {
            Step::Issue(op) => {
                let tx = op_tx(&op);
                let arrival = self.note_arrival(c, &op, now);
                let (ack, kind) = self.submit(&op, now)?;
                if let Some(l) = self.driver.hint_next() {
                    if l.0 < self.device.logical_pages() {
                        self.device.core.prefetch_mapping(l);
                    }
                }
                self.outstanding += 1;
                self.queue.push(
                    ack,
                    Ev::Complete {
                        client: c,
                        blocking: true,
                        issued: now,
                        arrival,
                        kind,
                        tx,
                    },
                );
            }
            Step::IssueThen(op, next) => {
                let tx = op_tx(&op);
                let arrival = self.note_arrival(c, &op, now);
                let (ack, kind) = self.submit(&op, now)?;
                self.outstanding += 1;
                self.queue.push(
                    ack,
                    Ev::Complete {
                        client: c,
                        blocking: false,
                        issued: now,
                        arrival,
                        kind,
                        tx,
                    },
                );
                self.queue.push(next.max(now), Ev::Wake(c));
            }
            Step::Sleep(t) => self.queue.push(t.max(now), Ev::Wake(c)),
            Step::Barrier => {
                self.clients[c as usize] = ClientState::AtBarrier;
                self.barrier_waiters.push(c);
                self.maybe_release_barrier(now)?;
            }
            Step::Done => {
                self.clients[c as usize] = ClientState::Done;
                self.maybe_release_barrier(now)?;
            }
        }
        Ok(())
    }

    /// Records the queueing delay of a unit of work that starts with `op` (a plain request or
    /// a BEGIN) and has an arrival time; returns the arrival to carry to a plain request's
    /// completion (a transaction's is kept until its COMMIT or ABORT completes).
    pub(super) fn note_arrival(&mut self, c: u32, op: &Op, now: SimTime) -> Option<SimTime> {
        let a = self.driver.arrival(c)?;
        self.lat_queue.record(now.since(a));
        match *op {
            Op::Begin { tx } => {
                self.tx_arrival.insert(tx, a);
                None
            }
            _ => Some(a),
        }
    }

    /// Prefills (and ages) the device, then runs the workload to completion.
    pub fn run(&mut self) -> Result<(), WorldError> {
        self.prefill()?;
        self.run_measured()
    }

    /// Runs the workload to completion on a device already prefilled (by `prefill`, or
    /// given to `from_prefilled`).
    pub fn run_measured(&mut self) -> Result<(), WorldError> {
        for c in 0..self.clients.len() as u32 {
            self.queue.push(self.now, Ev::Wake(c));
        }
        while let Some((t, ev)) = self.queue.pop() {
            self.now = t;
            match ev {
                Ev::Wake(c) => self.on_wake(c, t)?,
                Ev::Complete {
                    client,
                    blocking,
                    issued,
                    arrival,
                    kind,
                    tx,
                } => {
                    self.outstanding -= 1;
                    let lat = t.since(issued);
                    self.lat_all.record(lat);
                    if let Some(a) = arrival {
                        self.lat_response.record(t.since(a));
                    }
                    if matches!(kind, K_COMMIT | K_ABORT) {
                        if let Some(a) = self.tx_arrival.remove(&tx) {
                            self.lat_response.record(t.since(a));
                        }
                    }
                    match kind {
                        K_READ => self.lat_read.record(lat),
                        K_WRITE => self.lat_write.record(lat),
                        K_COMMIT => {
                            self.lat_commit.record(lat);
                            self.committed += 1;
                            if let Some(b) = self.tx_begin.remove(&tx) {
                                self.lat_tx.record(t.since(b));
                            }
                        }
                        K_ABORT => {
                            self.aborted += 1;
                            self.tx_begin.remove(&tx);
                        }
                        _ => {}
                    }
                    if blocking {
                        self.queue.push(t, Ev::Wake(client));
                    }
                    self.maybe_release_barrier(t)?;
                }
            }
        }
        if let Some(e) = self.driver.take_error() {
            return Err(WorldError::Workload(e.what));
        }
        if let Some(w) = self.trace_out.as_mut() {
            use std::io::Write;
            w.flush().map_err(|e| WorldError::Io(e.to_string()))?;
        }
        if let Some(c) = self
            .clients
            .iter()
            .position(|c| *c == ClientState::AtBarrier)
        {
            return Err(WorldError::Workload(format!(
                "client {c} is stuck at a barrier when the run ends"
            )));
        }
        Ok(())
    }
}

fn op_tx(op: &Op) -> TxId {
    match *op {
        Op::Begin { tx } | Op::TxWrite { tx, .. } | Op::Commit { tx, .. } | Op::Abort { tx } => tx,
        _ => NO_TX,
    }
}
