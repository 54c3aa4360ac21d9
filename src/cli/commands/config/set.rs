use convo::config;
use convo::ops::config_edit::{self, key_under};

use super::{Conversation, Layer, Target, user_path};
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: your own file]
///
/// Your own file is yours alone; `--shared` commits the setting to the store's convo.toml,
/// which `push` sends to everyone who pulls the store.
#[derive(clap::Args)]
pub struct Args {
    /// The key, e.g. compaction.keep_last
    key: String,
    /// The value, as TOML (a bare word is taken as a string)
    value: String,
    #[command(flatten)]
    layer: Layer,
    #[command(flatten)]
    at: Conversation,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let (key, value) = (args.key.as_str(), config::parse_value(&args.value));
    config::check_assignment(key, &value)?;
    let target = args.layer.target();
    if target != Target::User
        && let Some(prefix) = config::USER_ONLY_KEYS.iter().find(|p| key_under(key, p))
    {
        return Err(CommandError::input(format!(
            "`{key}`: {prefix} is read only from your own config, never from a store or conversation"
        ))
        .hint(config::user_only_hint(key)));
    }
    check_resolved(ctx, target, args.at.id.as_deref(), key, &value)?;
    match target {
        Target::User => {
            let path = user_path(ctx)?;
            config_edit::set_in_user_file(&path, key, &value)?;
            ctx.note(&format!("{key} = {value} in {}", path.display()));
            return Ok(());
        }
        Target::Store => {
            let store = ctx.open_store_for_write()?;
            let tx = store.transaction()?;
            let fixed = config_edit::set_in_store(&store, tx, key, &value, &ctx.clock)?;
            ctx.ui.committed(None, &fixed);
            ctx.note(&format!("{key} = {value} in the store's convo.toml: `convo push` shares it"));
            warn_if_untrusted(ctx, &store, key);
        }
        Target::Conversation => {
            let store = ctx.open_store()?;
            let tx = store.transaction()?;
            let id = store.resolve_or_active(args.at.id.as_deref())?;
            let a = config_edit::set_in_conversation(&store, tx, &id, key, &value, &ctx.clock)?;
            ctx.ui.committed(Some(&id), &a);
            warn_if_untrusted(ctx, &store, key);
        }
    }
    Ok(())
}

/// Refuse a value that leaves the configuration in force naming what does not exist (a
/// profile), seen from the store (and the conversation, for that layer) with every layer
/// and the new value over them all: a store's setting must hold for anyone who pulls it.
fn check_resolved(
    ctx: &Ctx,
    target: Target,
    conversation: Option<&str>,
    key: &str,
    value: &toml::Value,
) -> Result<(), CommandError> {
    let resolved = match ctx.open_store() {
        Ok(store) => {
            let events = match target {
                Target::Conversation => store.events(&store.resolve_or_active(conversation)?)?,
                _ => Vec::new(),
            };
            ctx.config_quietly(&store, &events)?
        }
        // No store yet (a user setting before the first write): the layers there are.
        Err(_) if target != Target::Conversation => config::Resolved::new(ctx.base_layers()?)?,
        Err(e) => return Err(e),
    };
    match config::problems_with(&resolved, key, value)?.into_iter().next() {
        None => Ok(()),
        Some((at, problem)) if at == key => Err(CommandError::input(format!("{key} = {value}: {problem}"))
            .hint("nothing was written; profiles live in config under [compaction.profiles.NAME]")),
        Some((at, problem)) => Err(CommandError::input(format!("{key} = {value}: then {at}: {problem}"))
            .hint("nothing was written; profiles live in config under [compaction.profiles.NAME]")),
    }
}

/// After `key` was written to the store or a conversation: say so when it will not count.
fn warn_if_untrusted(ctx: &Ctx, store: &convo::store::Store, key: &str) {
    if config::AUTHORITY_KEYS.iter().any(|p| key_under(key, p))
        && let Ok(base) = ctx.base_layers()
        && !crate::cli::store_trusted(store.root(), &config::trusted_stores(&base))
    {
        ctx.ui.warning(&format!(
            "{key} is ignored until you trust this store (it decides where conversations and keys are sent)"
        ));
        ctx.ui.hint("`convo config trust` trusts it");
    }
}
