use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Make another conversation the active one
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    // In a lazy store, one the catalog lists is fetched first: switching is to carry it on.
    ctx.fetch_if_lazy(&store, Some(&args.id))?;
    let id = store.resolve(&args.id)?;
    store.set_active(&id)?;
    let title = store.meta(&id)?.title.map(|t| format!(" \"{t}\"")).unwrap_or_default();
    ctx.note(&format!("Switched to conversation {id}{title}"));
    Ok(())
}
