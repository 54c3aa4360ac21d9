use convo::render;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Show the active conversation and the captures that failed
///
/// A hook (`convo hook`) or `convo watch` that cannot import an agent's session records why
/// in the store (locally, never pushed): its error is otherwise seen only inside the agent's
/// transcript. They are listed here, the newest first, until the same file is captured
/// again; the next command run at a terminal says when there are new ones.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(ctx: &Ctx, _args: Args) -> Result<(), CommandError> {
    let mut out = crate::cli::ui::Output::stdout();
    // Before its first write the default store is not there: nothing is active or failed.
    let Some(store) = ctx.open_store_if_made()? else {
        writeln!(out.writer(), "No active conversation.")?;
        out.finish()?;
        return Ok(());
    };
    match store.active()? {
        Some(id) => {
            let title = store.meta(&id).ok().and_then(|m| m.title);
            let name = convo::store::subject::name(&id, title.as_deref());
            writeln!(out.writer(), "On conversation {}", render::escape_line(&name))?;
        }
        None => writeln!(out.writer(), "No active conversation.")?,
    }
    let failures = store.failed_captures()?;
    render::failed_captures(out.writer(), &failures)?;
    out.finish()?;
    if failures.iter().any(|f| !f.told) {
        store.failed_captures_told()?;
    }
    Ok(())
}
