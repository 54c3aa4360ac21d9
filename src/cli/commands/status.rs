use convo::ops::status::{self, Status};
use convo::render::escape_line;

use super::Format;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Show unpushed and unpulled work, followed sessions and failures
///
/// Like `git status`: the active conversation; for each remote, the conversations with
/// commits not pushed and remote commits not pulled, counted against what the last fetch
/// brought (no network; --fetch fetches every remote first); the sessions hooks and `convo
/// watch` follow, and whether a capture of one is failing or lags (its file grew since); the captures that failed (a hook
/// or `watch` that cannot import a session records why, locally, never pushed: its error is
/// otherwise seen only inside the agent's transcript), the newest first, until the same
/// file is captured again; and a push the secret scan refused (a hook's `sync`), until a
/// push goes through. The next command run at a terminal says when there are new failures
/// or a new refusal.
#[derive(clap::Args)]
pub struct Args {
    /// Fetch every remote first (the remote-tracking refs move; no conversation changes)
    #[arg(long)]
    fetch: bool,
    /// Output format; `json` has one object with every field
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    // Before its first write the default store is not there: nothing is active, followed or
    // failed, and looking makes none.
    let Some(store) = ctx.open_store_if_made()? else {
        let mut out = crate::cli::ui::Output::stdout();
        match args.format {
            Format::Json => {
                serde_json::to_writer_pretty(out.writer(), &Status::default()).map_err(std::io::Error::from)?;
                writeln!(out.writer())?;
            }
            Format::Text => writeln!(out.writer(), "No active conversation.")?,
        }
        out.finish()?;
        return Ok(());
    };
    if args.fetch {
        for (name, _) in convo::sync::remotes(&store)? {
            convo::sync::fetch(&store, &name, ctx.ui.progress())?;
        }
    }
    let status = status::status(&store)?;
    let mut out = crate::cli::ui::Output::stdout();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(out.writer(), &status).map_err(std::io::Error::from)?;
            writeln!(out.writer())?;
        }
        Format::Text => text(out.writer(), &store, &status)?,
    }
    out.finish()?;
    if status.failed_captures.iter().any(|f| !f.told) {
        store.failed_captures_told()?;
    }
    if status.refused_push.as_ref().is_some_and(|r| !r.told) {
        store.refused_push_told()?;
    }
    Ok(())
}

fn text(out: &mut dyn std::io::Write, store: &convo::store::Store, status: &Status) -> std::io::Result<()> {
    let name = |id: &str| {
        let title = store.meta(id).ok().and_then(|m| m.title);
        escape_line(&convo::store::subject::name(id, title.as_deref())).into_owned()
    };
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    match &status.active {
        Some(id) => writeln!(out, "On conversation {}", name(id))?,
        None => writeln!(out, "No active conversation.")?,
    }
    for remote in &status.remotes {
        let remote_name = escape_line(&remote.name);
        let fetched = match (&remote.fetched, remote.lazy) {
            (Some(tip), false) => format!("as last fetched: {}", &tip[..7.min(tip.len())]),
            (Some(tip), true) => format!("a lazy clone; its catalog as last fetched: {}", &tip[..7.min(tip.len())]),
            (None, _) => "never fetched, or empty".to_owned(),
        };
        if remote.conversations.is_empty() {
            writeln!(out, "Up to date with {remote_name} ({fetched}).")?;
            continue;
        }
        writeln!(out, "Against {remote_name} ({fetched}):")?;
        if remote.lazy {
            for (id, b) in &remote.conversations {
                let mut parts = Vec::new();
                if b.unpushed_events > 0 {
                    parts.push(format!("{} here since fetched", plural(b.unpushed_events, "event")));
                }
                if b.unpulled_events > 0 {
                    parts.push(format!("{} on {remote_name} not pulled", plural(b.unpulled_events, "event")));
                }
                writeln!(out, "  {}: {}", name(id), parts.join("; "))?;
            }
            writeln!(out, "  (`convo pull` brings in; `convo push` sends what was added here)")?;
            continue;
        }
        for (id, b) in &remote.conversations {
            let mut parts = Vec::new();
            if b.unpushed_commits + b.unpushed_events > 0 {
                let (c, e) = (plural(b.unpushed_commits, "commit"), plural(b.unpushed_events, "event"));
                parts.push(format!("{c} ({e}) not pushed"));
            }
            if b.unpulled_commits + b.unpulled_events > 0 {
                let (c, e) = (plural(b.unpulled_commits, "commit"), plural(b.unpulled_events, "event"));
                parts.push(format!("{c} ({e}) not pulled"));
            }
            writeln!(out, "  {}: {}", name(id), parts.join("; "))?;
        }
        writeln!(out, "  (`convo push` sends, `convo pull` brings in; `convo status --fetch` looks again)")?;
    }
    if !status.followed.is_empty() {
        writeln!(out, "Followed sessions:")?;
        for f in &status.followed {
            let format = f.format.as_deref().unwrap_or("session");
            let file = f.file.as_deref().unwrap_or(&f.session);
            let (format, file, updated) = (escape_line(format), escape_line(file), escape_line(&f.updated));
            write!(out, "  {}: {format} {file}, captured up to {updated}", name(&f.conversation))?;
            if let Some(bytes) = f.behind_bytes {
                write!(out, "; lags: {bytes} bytes of its file not captured")?;
            }
            match &f.failing {
                Some(error) => writeln!(out, "; failing: {}", escape_line(error))?,
                None => writeln!(out)?,
            }
        }
    }
    convo::render::failed_captures(out, &status.failed_captures)?;
    if let Some(refused) = &status.refused_push {
        writeln!(
            out,
            "A push to {} was refused at {} ({}): {} in what it would publish:",
            escape_line(&refused.remote),
            escape_line(&refused.at),
            escape_line(&refused.by),
            plural(refused.secrets, "secret")
        )?;
        for place in &refused.places {
            writeln!(out, "  {}", escape_line(place))?;
        }
        writeln!(
            out,
            "  (`convo redact --secrets` replaces them in the unpushed commits, then push again; --allow-secrets pushes anyway)"
        )?;
    }
    Ok(())
}
