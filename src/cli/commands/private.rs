use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Keep conversations out of every push and sync
///
/// Nothing of a private conversation reaches a remote: not its events, title, recorded
/// paths, nor its id; `convo push --dry-run` lists what is kept back. A conversation the
/// remote has already stays there as it was and receives no more updates. The choice is
/// this store's own (kept under `.git/convo/`, never committed or pushed); `convo share
/// ID` undoes it. Conversations no one chose for follow the `share.default` setting.
#[derive(clap::Args)]
pub struct Args {
    /// Conversation ids or titles, or unique prefixes of either
    #[arg(required = true)]
    ids: Vec<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    super::choose_sharing(ctx, &args.ids, true)
}
