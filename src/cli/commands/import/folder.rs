//! `import DIR`: every session file under a folder in one commit ([`folder::import`]),
//! reported: each file that failed named, and what the whole did.

use convo::interop::Format;
use convo::ops::{folder, import};
use convo::render::plural;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui;

/// `import DIR`: every session file under the folder, in one commit ([`folder::import`]);
/// each file that failed is named, and the whole says what it did.
pub(super) fn run(ctx: &Ctx, dir: &std::path::Path, format: Option<Format>) -> Result<(), CommandError> {
    let files = import::session_files(dir)?;
    if files.is_empty() {
        return Err(CommandError::input(format!("{}: no .jsonl session files in it", dir.display()))
            .hint("a folder of sessions is, say, ~/.claude/projects or ~/.codex/sessions"));
    }
    let store = ctx.open_store_for_write()?;
    let bar = ui::progress_bar(ctx.ui.quiet, files.len() as u64, format!("importing {}", dir.display()));
    if let Some(bar) = &bar
        && let Ok(style) = indicatif::ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} files")
    {
        bar.set_style(style);
    }
    let done = folder::import(&store, dir, format, &ctx.clock, &mut || {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut done = done?;
    let failed = done.failed.len();
    for failure in std::mem::take(&mut done.failed) {
        match failure {
            folder::Failed::SameSession(path) => ctx.ui.warning(&format!(
                "{}: a file of the same session name was imported in this run (skipped)",
                path.display()
            )),
            folder::Failed::Import(_, e) => {
                let e = CommandError::from(e);
                ctx.ui.warning(&format!("{} (skipped)", e.message));
            }
        }
    }
    if let Some(committed) = &done.committed {
        ctx.ui.committed(None, committed);
    }
    ctx.ui.status(&format!(
        "{}: {}: {} new, {} continued, {} unchanged{}, {} not sessions, {failed} failed; {} imported",
        dir.display(),
        plural(done.files as u64, "file"),
        done.started,
        done.grew,
        done.unchanged,
        if done.taken > 0 { format!(", {} imported whole before and taken over", done.taken) } else { String::new() },
        done.skipped,
        plural(done.events, "event")
    ));
    if failed > 0 {
        return Err(CommandError::input(format!("{failed} of {} files could not be imported", done.files))
            .hint("each is named above; the others were imported"));
    }
    Ok(())
}
