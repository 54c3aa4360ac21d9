//! `import DB`: every session of an opencode database ([`opencode::import`]), reported as
//! one import: the conversations made and continued, events by type, what was skipped.

use std::io::Write;
use std::path::Path;

use convo::ops::opencode;
use convo::render::plural;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui;

pub(super) fn run(ctx: &Ctx, path: &Path) -> Result<(), CommandError> {
    // Before the store is opened (and, on a fresh machine, created): a file that is not
    // opencode's leaves no trace at all.
    let prepared = opencode::prepare(path)?;
    let store = ctx.open_store_for_write()?;
    let spinner = ui::spinner(ctx.ui.quiet, format!("importing {}", prepared.name()));
    let done = opencode::import(&store, prepared, &ctx.clock, &mut || {});
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let done = done?;
    for (id, ..) in done.started.iter().chain(&done.grew) {
        writeln!(ctx.ui.stdout(), "{id}")?;
    }
    if let Some(committed) = &done.committed {
        ctx.ui.committed(None, committed);
    }
    let r = &done.report;
    ctx.ui.status(&format!(
        "Imported {} as opencode: {}, {} new, {} continued, {} unchanged; {} read",
        done.name,
        plural(done.sessions as u64, "session"),
        done.started.len(),
        done.grew.len(),
        done.unchanged,
        plural(r.records as u64, "record"),
    ));
    if !r.events.is_empty() {
        let counts: Vec<String> = r.events.iter().map(|(k, v)| format!("{v} {k}")).collect();
        ctx.ui.status(&format!("  events: {}", counts.join(", ")));
    }
    if r.compactions > 0 {
        ctx.ui.status(&format!("  compactions from the source: {}", r.compactions));
    }
    for (why, n) in &r.skipped {
        ctx.ui.status(&format!("  skipped {n}: {why}"));
    }
    Ok(())
}
