mod get;
mod list;
mod set;
mod trust;
mod unset;

use convo::config;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Read and set configuration
///
/// Layers, lowest first: built-in defaults, the user file ($XDG_CONFIG_HOME/convo/config.toml),
/// the store's committed convo.toml, the conversation's `config` events, --config KEY=VALUE.
/// `set` and `unset` write the user file unless told otherwise (`--shared`: the store's).
///
/// convo.toml and config events are content, written by whoever can write to the store:
/// keys that decide where a conversation or a key is sent (`providers.*`) count from them
/// only in a store you trust (`convo config trust`), and `trust` itself never does.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    Get(get::Args),
    Set(set::Args),
    Unset(unset::Args),
    List(list::Args),
    Trust(trust::Args),
}

/// Which layer `config set` and `config unset` write.
#[derive(clap::Args)]
struct Layer {
    /// The layer to write
    #[arg(long, value_enum, default_value_t = Target::User)]
    layer: Target,
    /// Same as --layer user (the default)
    #[arg(long, conflicts_with_all = ["layer", "conversation", "shared"])]
    user: bool,
    /// Same as --layer store: commit it to the store's convo.toml, shared through remotes
    #[arg(long, conflicts_with_all = ["layer", "conversation"])]
    shared: bool,
    /// Same as --layer conversation
    #[arg(long, conflicts_with = "layer")]
    conversation: bool,
}

impl Layer {
    fn target(&self) -> Target {
        match (self.user, self.shared, self.conversation) {
            (true, ..) => Target::User,
            (_, true, _) => Target::Store,
            (.., true) => Target::Conversation,
            _ => self.layer,
        }
    }
}

/// Which layer `config set` writes. (`--store` itself names the store's path, hence
/// `--shared` for the store's layer.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Target {
    /// $XDG_CONFIG_HOME/convo/config.toml, yours alone
    User,
    /// The store's convo.toml, committed and shared through remotes
    Store,
    /// A `config` event in the conversation, from here on
    Conversation,
}

#[derive(clap::Args)]
struct Conversation {
    /// Conversation whose config events count (default: the active one, if any)
    #[arg(long = "id", value_name = "ID")]
    id: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    match args.action {
        Action::Get(args) => get::run(ctx, args),
        Action::Set(args) => set::run(ctx, args),
        Action::Unset(args) => unset::run(ctx, args),
        Action::List(args) => list::run(ctx, args),
        Action::Trust(args) => trust::run(ctx, args),
    }
}

/// A value as TOML, on one line and without control characters (the store's convo.toml
/// comes from remotes).
fn render_value(value: &toml::Value) -> String {
    convo::render::escape_line(&value.to_string()).into_owned()
}

/// The configuration for a conversation, or without one when the store has none active;
/// warns about keys its content may not set.
fn resolve(ctx: &Ctx, id: Option<&str>) -> Result<config::Resolved, CommandError> {
    let resolved = resolve_quietly(ctx, id)?;
    ctx.warn_ignored(&resolved.ignored);
    Ok(resolved)
}

fn resolve_quietly(ctx: &Ctx, id: Option<&str>) -> Result<config::Resolved, CommandError> {
    let store = match ctx.open_store() {
        Ok(store) => store,
        // No store yet: defaults, the user file and --config still apply.
        Err(_) if id.is_none() => return Ok(config::Resolved::new(ctx.base_layers()?)?),
        Err(e) => return Err(e),
    };
    let events = match (id, store.resolve_or_active(id)) {
        (_, Ok(id)) => store.events(&id)?,
        (None, Err(_)) => Vec::new(),
        (Some(_), Err(e)) => return Err(e.into()),
    };
    ctx.config_quietly(&store, &events)
}

fn user_path(ctx: &Ctx) -> Result<std::path::PathBuf, CommandError> {
    ctx.user_config.clone().ok_or_else(|| CommandError::input("cannot find the user config: HOME is not set"))
}
