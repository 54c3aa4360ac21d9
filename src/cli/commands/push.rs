use convo::ops::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Send this store's conversations to a remote
///
/// The events the remote does not have yet are scanned for secrets first (API keys, private
/// key blocks, bearer tokens, *_KEY/*_TOKEN/*_SECRET assignments); if any are found nothing
/// is pushed and each is listed (conversation, event, kind; never the secret), and `convo
/// status` says so until a push goes through. Says what went out (`Pushed to origin: 2
/// conversations (1 new, 1 updated), 5 events`). --dry-run says what would go out and what
/// the scan would refuse, and which conversations it leaves out, from the last fetch of the
/// remote, sending and writing nothing.
///
/// Conversations made private (`convo private ID`) never leave: not their events, titles,
/// paths nor ids. Which of the others a push publishes when the hub does not have them yet
/// is the `share.default` setting: "all" (the default), "project-with-remote" or "none".
/// Needs the `git` binary.
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
    /// Overwrite the remote's branch if it is still where this store last saw it
    #[arg(long)]
    force_with_lease: bool,
    /// Push even if secret-like strings were found
    #[arg(long)]
    allow_secrets: bool,
    /// Say what would be pushed and what the secret scan would refuse; send and write nothing
    #[arg(long, short = 'n')]
    dry_run: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    if args.dry_run {
        return super::dry_run(ctx, &store, &args.remote, args.allow_secrets, false);
    }
    let progress = ctx.ui.progress();
    let share = ctx.share_default()?;
    let push = sync::push(
        &store,
        &args.remote,
        args.force_with_lease,
        args.allow_secrets,
        progress,
        "push",
        share,
        &ctx.clock,
    );
    if matches!(push, Err(convo::sync::SyncError::Secrets { .. })) && ctx.ui.progress() {
        // Said here, at a terminal: the next command need not say it again.
        let _ = store.refused_push_told();
    }
    let report = push?;
    match report.pushed {
        convo::sync::Pushed::Updated => {
            ctx.note(&format!("Pushed to {}: {}", args.remote, convo::render::pull::moved(&report.outgoing)))
        }
        convo::sync::Pushed::UpToDate => ctx.note("Everything up-to-date"),
    }
    Ok(())
}
