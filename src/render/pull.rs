//! What a pull did, in words: the headline (`Already up to date.`, `Fast-forward to …`,
//! `Merged …`) and one line per conversation that needs a person's attention (forked,
//! removed, kept, restored, renamed on both sides, a conflict). Here so that `pull` and `sync` say the same.

use std::io::{self, Write};

use std::collections::BTreeMap;

use crate::store::{ConversationMoved, Integrated, Moved};

/// `N conversations (A new, B updated), E events`: what moved between two stores.
pub fn moved(moved: &Moved) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let updated = moved.conversations - moved.new.min(moved.conversations);
    let parts: Vec<String> = [(moved.new, "new"), (updated, "updated")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, word)| format!("{n} {word}"))
        .collect();
    let which = if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) };
    format!(
        "{}{which}, {}",
        plural(moved.conversations, "conversation", "conversations"),
        plural(moved.events, "event", "events")
    )
}

/// `, N forks made` when a pull made any.
pub fn forks(forks: usize) -> String {
    match forks {
        0 => String::new(),
        1 => "; 1 fork made".to_owned(),
        n => format!("; {n} forks made"),
    }
}

/// What a dry run found (`ops::sync::Plan`): what would go out to `remote` beyond its tip
/// as last fetched (`theirs`), conversation by conversation (`titles` by id), and what its
/// line holds that this store lacks (`incoming`), which `pull` (or `sync`, when `syncing`)
/// would bring in first.
pub fn plan(
    out: &mut dyn Write,
    remote: &str,
    (theirs, outgoing, incoming): (Option<gix::ObjectId>, &BTreeMap<String, ConversationMoved>, &Moved),
    titles: &dyn Fn(&str) -> Option<String>,
    syncing: bool,
) -> io::Result<()> {
    let fetched = match theirs {
        Some(tip) => format!("as last fetched: {}", tip.to_hex_with_len(7)),
        None => "never fetched, or empty".to_owned(),
    };
    let total = Moved {
        conversations: outgoing.len(),
        new: outgoing.values().filter(|m| m.new).count(),
        events: outgoing.values().map(|m| m.events).sum(),
    };
    if total.is_empty() {
        writeln!(out, "Nothing to push to {remote} ({fetched}).")?;
    } else {
        writeln!(out, "Would push to {remote} ({fetched}): {}", moved(&total))?;
        for (id, m) in outgoing {
            let title = titles(id).map(|t| format!(" \"{}\"", super::escape_line(&t))).unwrap_or_default();
            let events = if m.events == 1 { "event" } else { "events" };
            let new = if m.new { ", new" } else { "" };
            writeln!(out, "  {id}{title}: {} {events}{new}", m.events)?;
        }
    }
    if !incoming.is_empty() {
        let then = if syncing {
            "sync would pull them in first"
        } else {
            "a push would be rejected until `convo pull` brings them in"
        };
        writeln!(out, "{remote} has what this store lacks: {}; {then}", moved(incoming))?;
    }
    Ok(())
}

/// The conversations a push leaves out (`convo private`, `share.default`), each with
/// whether the remote has it already (then it stays there as it was).
pub fn private(
    out: &mut dyn Write,
    remote: &str,
    private: &[(String, bool)],
    titles: &dyn Fn(&str) -> Option<String>,
) -> io::Result<()> {
    if private.is_empty() {
        return Ok(());
    }
    let n = private.len();
    writeln!(out, "Kept private, not pushed: {n} conversation{}", if n == 1 { "" } else { "s" })?;
    for (id, on_remote) in private {
        let title = titles(id).map(|t| format!(" \"{}\"", super::escape_line(&t))).unwrap_or_default();
        let stays =
            if *on_remote { format!(": {remote} keeps it as it was, no longer updated") } else { String::new() };
        writeln!(out, "  {id}{title}{stays}")?;
    }
    Ok(())
}

/// The headline with what the remote's line brought (`incoming`), then [`details`].
pub fn integrated(out: &mut dyn Write, outcome: &Integrated, incoming: &Moved) -> io::Result<()> {
    let short = |commit: &gix::ObjectId| commit.to_hex_with_len(7).to_string();
    match outcome {
        Integrated::UpToDate => writeln!(out, "Already up to date.")?,
        // Only removals came: the lines below say them.
        Integrated::FastForward { commit, .. } if incoming.is_empty() => {
            writeln!(out, "Fast-forward to {}", short(commit))?
        }
        Integrated::FastForward { commit, .. } => {
            writeln!(out, "Fast-forward to {}: {}", short(commit), moved(incoming))?;
        }
        Integrated::Merged { commit, .. } if incoming.is_empty() && outcome.forks() == 0 => {
            writeln!(out, "Merged {}", short(commit))?
        }
        Integrated::Merged { commit, .. } => {
            writeln!(out, "Merged {}: {}{}", short(commit), moved(incoming), forks(outcome.forks()))?;
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
