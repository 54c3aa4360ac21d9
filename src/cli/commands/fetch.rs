use convo::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Download a remote's commits without changing any conversation
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    if sync::lazy::lazy_remote(&store)?.is_some() {
        // A lazy store takes the hub's catalog, never its branch.
        let catalog = sync::lazy::fetch_catalog(&store, &args.remote)?;
        let listed = store.catalog_len(&catalog)?;
        ctx.note(&format!("Fetched the catalog of {} ({listed} conversations listed)", args.remote));
        return Ok(());
    }
    let fetched = sync::fetch(&store, &args.remote, ctx.ui.progress())?;
    let short = |c: &gix::ObjectId| c.to_hex_with_len(7).to_string();
    let t = &fetched.tracking;
    ctx.note(&match (fetched.before, fetched.after) {
        (_, None) => {
            format!("{} has no {} branch yet: nothing to fetch", args.remote, t.rsplit('/').next().unwrap_or(t))
        }
        (Some(a), Some(b)) if a == b => format!("{t} is up to date ({})", short(&b)),
        (Some(a), Some(b)) => format!("{t}: {}..{}", short(&a), short(&b)),
        (None, Some(b)) => format!("{t}: new at {}", short(&b)),
    });
    Ok(())
}
