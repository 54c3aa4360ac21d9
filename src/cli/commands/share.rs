use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Publish conversations with the next push again (undo `convo private`)
///
/// A shared conversation goes out with every push and sync, whatever the `share.default`
/// setting says for conversations no one chose for. The choice is this store's own (kept
/// under `.git/convo/`, never committed or pushed).
#[derive(clap::Args)]
pub struct Args {
    /// Conversation ids or titles, or unique prefixes of either
    #[arg(required = true)]
    ids: Vec<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    super::choose_sharing(ctx, &args.ids, false)
}
