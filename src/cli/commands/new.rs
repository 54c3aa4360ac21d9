use std::io::Write;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Start a conversation and make it the active one
#[derive(clap::Args)]
pub struct Args {
    /// A title to name it by (ids are generated)
    #[arg(long, short)]
    title: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    if let Some(title) = &args.title
        && title.trim().is_empty()
    {
        return Err(
            CommandError::input("--title: must not be empty").hint("leave --title out for an untitled conversation")
        );
    }
    let store = ctx.open_store_for_write()?;
    let tx = store.transaction()?;
    let created = store.create(tx, args.title.as_deref(), &ctx.clock)?;
    store.set_active(&created.id)?;
    // The new id is data (scripts take it from stdout); the commit line is status.
    writeln!(ctx.ui.stdout(), "{}", created.id)?;
    ctx.ui.committed(Some(&created.id), &created);
    Ok(())
}
