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
    let lock = store.lock()?;
    let created = store.create(&lock, args.title.as_deref(), &ctx.clock)?;
    store.set_active(&created.id)?;
    drop(lock);
    if !ctx.ui.quiet {
        writeln!(
            std::io::stdout(),
            "[{} {}] {}",
            created.id,
            super::short_hash(&created.commit),
            convo::render::escape_line(&created.subject)
        )?;
    }
    ctx.report_commit(created.gc, created.warning.as_deref());
    Ok(())
}
