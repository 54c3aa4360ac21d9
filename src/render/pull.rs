//! What a pull did, in words: the headline (`Already up to date.`, `Fast-forward to …`,
//! `Merged …`) and one line per conversation that needs a person's attention (forked,
//! removed, kept, restored, renamed on both sides, a conflict). Here so that `pull` and `sync` say the same.

use std::io::{self, Write};

use crate::store::Integrated;

/// The headline, then [`details`].
pub fn integrated(out: &mut dyn Write, outcome: &Integrated) -> io::Result<()> {
    let short = |commit: &gix::ObjectId| commit.to_hex_with_len(7).to_string();
    match outcome {
        Integrated::UpToDate => writeln!(out, "Already up to date.")?,
        Integrated::FastForward { commit, conversations, .. } => {
            let plural = if *conversations == 1 { "" } else { "s" };
            writeln!(out, "Fast-forward to {} ({conversations} conversation{plural})", short(commit))?;
        }
        Integrated::Merged { commit, updated, .. } => {
            let plural = if *updated == 1 { "" } else { "s" };
            writeln!(out, "Merged {} ({updated} conversation{plural} updated)", short(commit))?;
        }
    }
    details(out, outcome)
}

/// One line per conversation a pull forked, removed, kept, restored or kept removed, and
/// per file changed on both sides; nothing for a plain fast-forward or merge.
pub fn details(out: &mut dyn Write, outcome: &Integrated) -> io::Result<()> {
    match outcome {
        Integrated::UpToDate => Ok(()),
        Integrated::FastForward { removed, .. } => removed_lines(out, removed),
        Integrated::Merged { diverged, kept_remote, kept_local, removed, revived, kept_removed, retitled, .. } => {
            for d in diverged {
                let title = d.title.as_ref().map(|t| format!(" \"{}\"", super::escape_line(t))).unwrap_or_default();
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
            removed_lines(out, removed)?;
            for id in revived {
                writeln!(out, "restored: {id}: you removed it and the remote's line appended to it; it is back")?;
            }
            for id in kept_removed {
                writeln!(
                    out,
                    "kept removed: {id}: the remote's line rewrites events of this conversation you removed"
                )?;
            }
            for r in retitled {
                let quoted = |t: &Option<String>| match t {
                    Some(t) => format!("\"{}\"", super::escape_line(t)),
                    None => "none".to_owned(),
                };
                writeln!(
                    out,
                    "renamed: {}: both sides renamed it; the remote's title {} replaced yours, {}",
                    r.id,
                    quoted(&r.theirs),
                    quoted(&r.ours)
                )?;
            }
            for file in kept_remote {
                writeln!(
                    out,
                    "conflict: {file} changed on both sides; kept the remote's (yours is in the merge's first parent)"
                )?;
            }
            Ok(())
        }
    }
}

/// One line per conversation the remote's line removed, which history still holds.
fn removed_lines(out: &mut dyn Write, removed: &[String]) -> io::Result<()> {
    for id in removed {
        writeln!(out, "removed: {id}: the remote's line removes it; `convo restore {id}` brings it back")?;
    }
    Ok(())
}
