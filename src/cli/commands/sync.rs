use convo::ops::sync::{self, Options, Synced};
use convo::store::Moved;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Pull from a remote, then push to it
///
/// What a cron job or an agent's hook runs to keep a machine in step with a hub: `pull`
/// (nothing is lost; conversations appended to on both sides fork as there), then `push`
/// with its secret scan. A push the remote rejects because it moved after the pull is
/// retried after another pull, three pushes in all, then sync stops with exit status 6,
/// keeping what it pulled; a remote that refuses the push itself (a hook, permissions) is
/// not asked again. Says in one line on stderr what moved (`Synced with origin: 2
/// conversations in (5 events), 1 out (2 events)`), or `Already in sync with origin.`; -q
/// says nothing but errors. Never asks anything. Needs the `git` binary.
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
    /// Push even if secret-like strings were found
    #[arg(long)]
    allow_secrets: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let progress = ctx.ui.progress();
    let options = Options { allow_secrets: args.allow_secrets, progress, attempts: sync::ATTEMPTS };
    let synced = sync::sync(&store, &args.remote, options, &ctx.clock)?;
    ctx.note(&summary(&args.remote, &synced));
    for pull in &synced.pulls {
        let mut lines = Vec::new();
        convo::render::pull::details(&mut lines, pull)?;
        for line in String::from_utf8_lossy(&lines).lines() {
            ctx.note(line);
        }
        if let Some(landed) = pull.landed() {
            ctx.ui.landed(landed);
        }
    }
    Ok(())
}

/// `Synced with REMOTE: N conversations in (E events), M out (F events)`, and how many
/// pushes it took when more than one.
fn summary(remote: &str, synced: &Synced) -> String {
    if synced.nothing_moved() {
        return format!("Already in sync with {remote}.");
    }
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let events = |moved: &Moved| plural(moved.events, "event", "events");
    let incoming = match synced.incoming {
        moved if moved.is_empty() => "nothing in".to_owned(),
        moved => format!("{} in ({})", plural(moved.conversations, "conversation", "conversations"), events(&moved)),
    };
    let outgoing = match synced.outgoing {
        moved if moved.is_empty() => "nothing out".to_owned(),
        moved => format!("{} out ({})", moved.conversations, events(&moved)),
    };
    let retried = match synced.attempts {
        0 | 1 => String::new(),
        n => format!("; pushed {n} times, the remote moved in between"),
    };
    format!("Synced with {remote}: {incoming}, {outgoing}{retried}")
}
