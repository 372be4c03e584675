//! Set-up the host tests share: the tiny TPC-C database most of them run on, and printing
//! a check report's first violations. A test file takes them with `mod common;`.

#![allow(dead_code)]

use commitlab_host as host;
use host::check::CheckReport;
use host::HostConfig;

/// Makes `h` run the tiny TPC-C database: one warehouse, 20 customers per district, 50
/// items, inserts sized for at most 200 transactions, `tpcc.delta_abort` 0.1. The caller
/// sets the transactions, the buffer and the device around it.
pub fn tiny_tpcc(h: &mut HostConfig) {
    h.workload = "tpcc".into();
    h.tpcc.warehouses = 1;
    h.tpcc.customers_per_district = 20;
    h.tpcc.items = 50;
    h.tpcc.max_txns = 200;
    h.tpcc.delta_abort = 0.1;
}

/// Prints the first `at_most` violations of `rep` (state and findings) and its totals.
pub fn show(rep: &CheckReport, at_most: usize) {
    for v in rep.first.iter().take(at_most) {
        eprintln!("{:?}\n{:#?}", v.state, v.findings);
    }
    eprintln!("{} states, {} violations", rep.states, rep.violations);
}
