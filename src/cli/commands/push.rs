use convo::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Send this store's conversations to a remote
///
/// The events the remote does not have yet are scanned for secrets first (API keys, private
/// key blocks, bearer tokens, *_KEY/*_TOKEN/*_SECRET assignments); if any are found nothing
/// is pushed and each is listed (conversation, event, kind; never the secret). Needs the
/// `git` binary.
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
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let progress = ctx.ui.progress();
    match sync::push(&store, &args.remote, args.force_with_lease, args.allow_secrets, progress)? {
        sync::Pushed::Updated => ctx.note(&format!("Pushed to {}", args.remote)),
        sync::Pushed::UpToDate => ctx.note("Everything up-to-date"),
    }
    Ok(())
}
