use std::io::Write;

use convo::config::{self, Source};
use convo::event::{Draft, Kind};
use convo::ops;
use convo::store::Subject;

use crate::Ctx;
use crate::command_error::CommandError;

/// Read and set configuration
///
/// Layers, lowest first: built-in defaults, the user file ($XDG_CONFIG_HOME/convo/config.toml),
/// the store's committed convo.toml, the conversation's `config` events, --config KEY=VALUE.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Print the value of KEY in force
    Get {
        key: String,
        #[command(flatten)]
        at: Conversation,
    },
    /// Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store's]
    Set {
        key: String,
        value: String,
        /// The layer to write
        #[arg(long, value_enum, default_value_t = Target::Store)]
        layer: Target,
        /// Same as --layer user
        #[arg(long, conflicts_with_all = ["layer", "conversation"])]
        user: bool,
        /// Same as --layer conversation
        #[arg(long, conflicts_with = "layer")]
        conversation: bool,
        #[command(flatten)]
        at: Conversation,
    },
    /// Print every key in force, with the layer it comes from
    List {
        #[command(flatten)]
        at: Conversation,
    },
}

/// Which layer `config set` writes. (`--store` itself names the store's path.)
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
        Action::Get { key, at } => {
            let resolved = resolve(ctx, at.id.as_deref())?;
            let (value, _) = resolved.get(&key).ok_or_else(|| {
                CommandError::new(crate::command_error::Kind::NotFound, format!("`{key}` is not set"))
            })?;
            writeln!(std::io::stdout(), "{}", render_value(&value))?;
        }
        Action::List { at } => {
            let resolved = resolve(ctx, at.id.as_deref())?;
            let mut out = std::io::stdout().lock();
            for (key, value, layer) in resolved.list() {
                writeln!(
                    out,
                    "{key} = {}  {}",
                    render_value(&value),
                    ctx.ui.theme.dim(&format!("# {}", layer.origin))
                )?;
            }
        }
        Action::Set { key, value, layer, user, conversation, at } => {
            let value = config::parse_value(&value);
            config::check_assignment(&key, &value)?;
            let target = if user {
                Target::User
            } else if conversation {
                Target::Conversation
            } else {
                layer
            };
            match target {
                Target::User => set_user(ctx, &key, &value)?,
                Target::Store => set_store(ctx, &key, &value)?,
                Target::Conversation => set_conversation(ctx, at.id.as_deref(), &key, &value)?,
            }
        }
    }
    Ok(())
}

/// A value as TOML, on one line and without control characters (the store's convo.toml
/// comes from remotes).
fn render_value(value: &toml::Value) -> String {
    convo::render::escape_line(&value.to_string()).into_owned()
}

/// The configuration for a conversation, or without one when the store has none active.
fn resolve(ctx: &Ctx, id: Option<&str>) -> Result<config::Resolved, CommandError> {
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
    ctx.config(&store, &events)
}

fn set_user(ctx: &Ctx, key: &str, value: &toml::Value) -> Result<(), CommandError> {
    let path =
        ctx.user_config.clone().ok_or_else(|| CommandError::input("cannot find the user config: HOME is not set"))?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(CommandError::input(format!("{}: {e}", path.display()))),
    };
    let updated = config::set_in_document(&text, key, value)
        .map_err(|m| CommandError::input(format!("{}: {m}", path.display())))?;
    config::parse_layer(Source::User, &path.display().to_string(), &updated)?;
    if let Some(dir) = path.parent() {
        super::create_private_dir(dir).map_err(|e| CommandError::input(format!("{}: {e}", dir.display())))?;
    }
    // Yours alone: it names endpoints and the variables holding your keys.
    super::write_private(&path, updated.as_bytes())
        .map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
    ctx.note(&format!("{key} = {value} in {}", path.display()));
    Ok(())
}

fn set_store(ctx: &Ctx, key: &str, value: &toml::Value) -> Result<(), CommandError> {
    let store = ctx.open_store_for_write()?;
    let lock = store.lock()?;
    let text =
        store.head_file(ops::STORE_CONFIG)?.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let updated =
        config::set_in_document(&text, key, value).map_err(|m| CommandError::input(format!("convo.toml: {m}")))?;
    config::parse_layer(Source::Store, ops::STORE_CONFIG, &updated)?;
    let commit = store.commit_file(
        &lock,
        ops::STORE_CONFIG,
        updated.into_bytes(),
        &format!("config: set {key} = {value}"),
        &ctx.clock,
    )?;
    ctx.note(&format!("[{}] config: set {key} = {value} in convo.toml", super::short_hash(&commit)));
    Ok(())
}

fn set_conversation(ctx: &Ctx, id: Option<&str>, key: &str, value: &toml::Value) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let lock = store.lock()?;
    let id = store.resolve_or_active(id)?;
    let json = serde_json::to_value(value).map_err(|e| CommandError::input(e.to_string()))?;
    let mut set = serde_json::Map::new();
    set.insert(key.to_owned(), json);
    let title = store.meta(&id)?.title;
    let subject = Subject {
        text: format!("config: {} set {key} = {value}", convo::store::subject_name(&id, title.as_deref())),
        compaction: None,
    };
    let appended = store.append_as(&lock, &id, vec![Draft::new(Kind::Config { set })], &ctx.clock, Some(subject))?;
    if !ctx.ui.quiet {
        writeln!(
            std::io::stdout(),
            "[{id} {}] {}",
            super::short_hash(&appended.commit),
            convo::render::escape_line(&appended.subject)
        )?;
    }
    Ok(())
}
