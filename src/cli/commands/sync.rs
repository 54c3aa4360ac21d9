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
/// not asked again. Says in one line on stderr what moved (`Synced with origin: in 2
/// conversations (1 new, 1 updated), 5 events; out 1 conversation (1 updated), 2 events; 1
/// fork made`), or `Already in sync with origin.`; -q says nothing but errors. A push the
/// secret scan refuses is recorded: `convo status` and the next command run at a terminal
/// say it. --dry-run says what would come in and go out, from the last fetch, and what the
/// scan would refuse, sending and writing nothing. Never asks anything. Needs the `git`
/// binary.
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
    /// Push even if secret-like strings were found
    #[arg(long)]
    allow_secrets: bool,
    /// Say what would come in and go out and what the secret scan would refuse; fetch, send and write nothing
    #[arg(long, short = 'n')]
    dry_run: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    if args.dry_run {
        return super::dry_run(ctx, &store, &args.remote, args.allow_secrets, true);
    }
    let progress = ctx.ui.progress();
    let options =
        Options { allow_secrets: args.allow_secrets, progress, attempts: sync::ATTEMPTS, share: ctx.share_default()? };
    let synced = sync::sync(&store, &args.remote, options, &ctx.clock);
    if matches!(synced, Err(sync::SyncFailed::Sync(convo::sync::SyncError::Secrets { .. }))) && ctx.ui.progress() {
        // Said here, at a terminal: the next command need not say it again.
        let _ = store.refused_push_told();
    }
    let synced = synced?;
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

/// `Synced with REMOTE: in N conversations (A new, B updated), E events; out …; F forks
/// made`, and how many pushes it took when more than one.
fn summary(remote: &str, synced: &Synced) -> String {
    if synced.nothing_moved() {
        return format!("Already in sync with {remote}.");
    }
    let side = |word: &str, moved: &Moved| match moved.is_empty() {
        true => format!("nothing {word}"),
        false => format!("{word} {}", convo::render::pull::moved(moved)),
    };
    let forks = convo::render::pull::forks(synced.pulls.iter().map(|p| p.forks()).sum());
    let retried = match synced.attempts {
        0 | 1 => String::new(),
        n => format!("; pushed {n} times, the remote moved in between"),
    };
    format!("Synced with {remote}: {}; {}{forks}{retried}", side("in", &synced.incoming), side("out", &synced.outgoing))
}
