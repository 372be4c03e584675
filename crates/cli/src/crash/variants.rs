//! `crash --variants`: the crash check over every safety variant of
//! `check::variants::VARIANTS` (the non-default position of each option that switches a
//! protocol's safety mechanism), in parallel, as `--all` checks every protocol in its
//! default configuration. Each variant runs as `crash --protocol P --set ...` with the
//! variant's overrides after the user's own, so a failure's replay command names them.

use super::{check_protocol, recordings, say, Bar, CrashArgs, CLOSED_STDOUT};
use crate::Fail;
use check::variants::VARIANTS;
use rayon::prelude::*;

/// The arguments that check variant `v`: the user's, with the variant's protocol and its
/// overrides appended.
pub(super) fn args_of(a: &CrashArgs, v: &check::variants::Variant) -> CrashArgs {
    let mut b = a.clone();
    b.variants = false;
    b.protocol = Some(v.protocol.to_string());
    b.cfg.sets.extend(v.sets.iter().map(|s| s.to_string()));
    b
}

pub(super) fn cmd_variants(a: &CrashArgs, quiet: bool) -> Result<(), Fail> {
    let chosen: Vec<&check::variants::Variant> = match &a.protocol {
        None => VARIANTS.iter().collect(),
        Some(p) => {
            ssd::protocol::lookup(p).map_err(crate::bad)?;
            VARIANTS.iter().filter(|v| v.protocol == p).collect()
        }
    };
    if chosen.is_empty() {
        return Err(Fail(
            2,
            format!(
                "--protocol {}: no safety variant concerns this protocol (check::variants)",
                a.protocol.as_deref().unwrap_or_default()
            ),
        ));
    }
    let bar = Bar::new(
        quiet,
        chosen.len() as u64 * recordings(a, true, a.schedules),
    );
    let results: Vec<_> = chosen
        .par_iter()
        .map(|v| {
            let b = args_of(a, v);
            (v, check_protocol(&b, v.protocol, true, a.schedules, &bar))
        })
        .collect();
    bar.finish();
    let mut t = report::Table::new(vec![
        "protocol",
        "variant",
        "exhaustive",
        "random",
        "inside recovery",
        "total",
        "violations",
        "seconds",
    ]);
    let mut failed = Vec::new();
    let mut total = 0u64;
    let mut fewest: Option<(u64, String)> = None;
    for (v, r) in results {
        let label = format!("{} ({})", v.protocol, v.name);
        match r {
            Ok(o) => {
                for l in &o.lines {
                    if o.violations > 0 {
                        say(&format!("{label}: {l}"))?;
                    }
                }
                let states = o.exhaustive_states + o.random_states;
                total += states;
                if fewest.as_ref().map_or(true, |(n, _)| states < *n) {
                    fewest = Some((states, label.clone()));
                }
                t.row(vec![
                    v.protocol.to_string(),
                    format!("{}: {}", v.name, v.sets.join(" ")),
                    o.exhaustive_states.to_string(),
                    o.random_states.to_string(),
                    o.nested_states.to_string(),
                    states.to_string(),
                    o.violations.to_string(),
                    format!("{:.1}", o.wall_s),
                ]);
                if o.violations > 0 {
                    failed.push(label);
                }
            }
            // A variant the user's overrides make invalid is bad input for all of them.
            Err(Fail(2, m)) => return Err(Fail(2, format!("{label}: {m}"))),
            Err(Fail(c, m)) => {
                say(&format!("{label}: {m}"))?;
                if c == CLOSED_STDOUT {
                    return Err(Fail(c, m));
                }
                failed.push(label);
            }
        }
    }
    say(t.render().trim_end())?;
    let checked = format!(
        "crash states checked: {total} over {} safety variants, variants failing: {}",
        chosen.len(),
        failed.len()
    );
    super::summary_end(&checked, "variant", fewest, a.min_states, failed)
}
