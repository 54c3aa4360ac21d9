use std::io::Write;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Bring back a conversation `convo rm` removed
///
/// Like `git restore --source`: the conversation's folder comes back as it was in the
/// newest commit that still had it, in one new commit. `--list` shows what can be restored.
#[derive(clap::Args)]
pub struct Args {
    /// A removed conversation's id, unique id prefix, or title
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    id: Option<String>,
    /// List the removed conversations history still holds (id, last commit, title)
    #[arg(long)]
    list: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let Some(query) = args.id else {
        let mut out = ctx.ui.stdout();
        for removed in store.removed()? {
            let title = removed.title.map(|t| format!(" \"{}\"", convo::render::escape_line(&t))).unwrap_or_default();
            writeln!(out, "{} {}{title}", removed.id, super::short_hash(&removed.last_seen))?;
        }
        return Ok(());
    };
    let tx = store.transaction()?;
    let removed = store.resolve_removed(&query)?;
    let fixed = store.restore(tx, &removed, &ctx.clock)?;
    ctx.ui.committed(Some(&removed.id), &fixed);
    Ok(())
}
