use convo::ops::config_edit;

use super::{Layer, Target, user_path};
use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Remove KEY from one layer [default: your own file], so the layers below decide again
#[derive(clap::Args)]
pub struct Args {
    /// The key, e.g. compaction.keep_last
    key: String,
    #[command(flatten)]
    layer: Layer,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let key = args.key.as_str();
    let not_set = |place: &str| {
        CommandError::new(Kind::NotFound, format!("`{key}` is not set in {place}"))
            .hint("`convo config list` shows every setting and the layer it comes from")
    };
    match args.layer.target() {
        Target::User => {
            let path = user_path(ctx)?;
            if !config_edit::unset_in_user_file(&path, key)? {
                return Err(not_set(&path.display().to_string()));
            }
            ctx.note(&format!("{key} removed from {}", path.display()));
        }
        Target::Store => {
            let store = ctx.open_store()?;
            let tx = store.transaction()?;
            let fixed = config_edit::unset_in_store(&store, tx, key, &ctx.clock)?
                .ok_or_else(|| not_set("the store's convo.toml"))?;
            ctx.ui.committed(None, &fixed);
        }
        Target::Conversation => {
            return Err(CommandError::input(format!(
                "`{key}`: a conversation's config events are its history and stay"
            ))
            .hint(format!("set another value from here on: `convo config set --conversation {key} VALUE`")));
        }
    }
    Ok(())
}
