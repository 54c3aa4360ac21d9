use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui::CommitReport;

/// Give a conversation a new title
///
/// One commit rewrites its meta.json; events are untouched. With one argument the active
/// conversation is renamed. When both sides of a pull renamed it, the remote's title wins.
#[derive(clap::Args)]
#[command(allow_missing_positional = true)]
pub struct Args {
    /// Conversation id, unique id prefix, or title (default: the active one)
    id: Option<String>,
    /// The new title
    title: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let lock = store.lock()?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    match store.rename(&lock, &id, &args.title, &ctx.clock)? {
        Some(fixed) => ctx.ui.commit(&CommitReport {
            conversation: Some(&id),
            commit: &fixed.commit,
            subject: &fixed.subject,
            landed: &fixed.landed,
        }),
        None => ctx.note(&format!("{id} is already titled \"{}\"; nothing to do", args.title)),
    }
    Ok(())
}
