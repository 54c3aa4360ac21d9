use std::io::{IsTerminal, Write};

use convo::store::Integrated;
use convo::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Fetch a remote and bring its conversations in, losing nothing
///
/// Fast-forwards when only the remote moved. When both sides changed, conversations changed
/// on one side take that side; a conversation appended to on both keeps the remote's line
/// under its id, and your local line becomes a fork (`forked_from` the common point), one line
/// of output per such conversation. A conversation removed there (`convo rm`) and left as it
/// was here is removed here too (`convo restore` brings it back); one you appended to stays.
/// When both sides renamed a conversation, the remote's title wins. The active conversation
/// is left as it is.
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let progress = std::io::stderr().is_terminal() && !ctx.ui.quiet;
    let outcome = sync::pull(&store, &args.remote, progress, &ctx.clock)?;
    let mut out = ctx.ui.stdout();
    match outcome {
        Integrated::UpToDate => writeln!(out, "Already up to date.")?,
        Integrated::FastForward { commit, conversations, removed } => {
            let plural = if conversations == 1 { "" } else { "s" };
            writeln!(out, "Fast-forward to {} ({conversations} conversation{plural})", super::short_hash(&commit))?;
            removed_lines(&mut out, &removed)?;
        }
        Integrated::Merged { commit, updated, diverged, kept_remote, kept_local, removed, revived, kept_removed } => {
            let plural = if updated == 1 { "" } else { "s" };
            writeln!(out, "Merged {} ({updated} conversation{plural} updated)", super::short_hash(&commit))?;
            for d in diverged {
                let title = d.title.map(|t| format!(" \"{}\"", convo::render::escape_line(&t))).unwrap_or_default();
                let rewritten = match d.rewritten {
                    0 => String::new(),
                    n => format!(" rewrites {n} of your events and"),
                };
                writeln!(
                    out,
                    "diverged: {}{title}: the remote's line{rewritten} keeps the id; your {} {} in fork {}",
                    d.id,
                    d.local_events,
                    if d.local_events == 1 { "event is" } else { "events are" },
                    d.fork
                )?;
            }
            for id in kept_local {
                writeln!(out, "kept: {id}: the remote's line removes this conversation; yours stays")?;
            }
            removed_lines(&mut out, &removed)?;
            for id in revived {
                writeln!(out, "restored: {id}: you removed it and the remote's line appended to it; it is back")?;
            }
            for id in kept_removed {
                writeln!(
                    out,
                    "kept removed: {id}: the remote's line rewrites events of this conversation you removed"
                )?;
            }
            for file in kept_remote {
                writeln!(
                    out,
                    "conflict: {file} changed on both sides; kept the remote's (yours is in the merge's first parent)"
                )?;
            }
        }
    }
    Ok(())
}

/// One line per conversation the remote's line removed, which history still holds.
fn removed_lines(out: &mut impl Write, removed: &[String]) -> std::io::Result<()> {
    for id in removed {
        writeln!(out, "removed: {id}: the remote's line removes it; `convo restore {id}` brings it back")?;
    }
    Ok(())
}
