use std::io::Write;

use convo::config;
use convo::ops::config_edit::{self, key_under};

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui::CommitReport;

/// Read and set configuration
///
/// Layers, lowest first: built-in defaults, the user file ($XDG_CONFIG_HOME/convo/config.toml),
/// the store's committed convo.toml, the conversation's `config` events, --config KEY=VALUE.
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
    /// Print every key in force, with the layer it comes from, and the keys ignored
    List {
        #[command(flatten)]
        at: Conversation,
    },
    /// Trust a store's own config (convo.toml, config events) to name providers
    ///
    /// Recorded in your user config as trust.stores, never in the store, like git's
    /// safe.directory. Trust only stores whose writers you trust with your API keys: a
    /// provider's base_url decides where conversations and keys are sent.
    Trust {
        /// The store [default: the current one: --store, $CONVO_DIR, then the default]
        path: Option<std::path::PathBuf>,
        /// Stop trusting the store
        #[arg(long)]
        remove: bool,
        /// Print the stores you trust, one a line
        #[arg(long, conflicts_with_all = ["remove", "path"])]
        list: bool,
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
                CommandError::new(crate::cli::command_error::Kind::NotFound, format!("`{key}` is not set"))
            })?;
            writeln!(ctx.ui.stdout(), "{}", render_value(&value))?;
        }
        Action::List { at } => {
            let resolved = resolve_quietly(ctx, at.id.as_deref())?;
            let mut rows: Vec<(String, String, String)> = resolved
                .list()
                .into_iter()
                .map(|(key, value, layer)| (key, render_value(&value), layer.origin.clone()))
                .collect();
            for item in &resolved.ignored {
                let note = format!("ignored: {}, {}", item.origin, item.reason());
                rows.push((item.key.clone(), render_value(&item.value), note));
            }
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = ctx.ui.stdout();
            for (key, value, note) in rows {
                writeln!(out, "{key} = {value}  {}", ctx.ui.theme.dim(&format!("# {note}")))?;
            }
        }
        Action::Trust { path, remove, list } => trust(ctx, path, remove, list)?,
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
            if target != Target::User
                && let Some(prefix) = config::USER_ONLY_KEYS.iter().find(|p| key_under(&key, p))
            {
                return Err(CommandError::input(format!(
                    "`{key}`: {prefix} is read only from your own config, never from a store or conversation"
                ))
                .hint("trust a store with `convo config trust [PATH]`"));
            }
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

fn set_user(ctx: &Ctx, key: &str, value: &toml::Value) -> Result<(), CommandError> {
    let path = user_path(ctx)?;
    config_edit::set_in_user_file(&path, key, value)?;
    ctx.note(&format!("{key} = {value} in {}", path.display()));
    Ok(())
}

/// `config trust`: add the store to (or with `remove` take it from) `trust.stores` in the
/// user file; `list` prints the stores trusted, the user file's and --config's.
fn trust(ctx: &Ctx, path: Option<std::path::PathBuf>, remove: bool, list: bool) -> Result<(), CommandError> {
    if list {
        let mut out = ctx.ui.stdout();
        for store in config::trusted_stores(&ctx.base_layers()?) {
            writeln!(out, "{store}")?;
        }
        return Ok(());
    }
    let user = user_path(ctx)?;
    let target = match path {
        Some(path) => path,
        None => ctx.location.as_ref().map(|l| l.path.clone()).ok_or_else(|| {
            CommandError::input("cannot find the store: HOME is not set").hint("name it: `convo config trust PATH`")
        })?,
    };
    let target = crate::cli::canonical(&target);
    let shown = target.display().to_string();
    let same = |s: &str| crate::cli::store_trusted(&target, &[s.to_owned()]);
    if remove {
        if !config_edit::set_trust(&user, &shown, &same, true)? {
            return Err(CommandError::new(
                crate::cli::command_error::Kind::NotFound,
                format!("{shown} is not among the stores you trust"),
            )
            .hint("`convo config trust --list` prints them"));
        }
        ctx.note(&format!("No longer trusting {shown}: its convo.toml and config events cannot name providers"));
        return Ok(());
    }
    // Only a store can be trusted: a typo should not sit in the list waiting for one.
    convo::store::Store::open(&target)?;
    if !config_edit::set_trust(&user, &shown, &same, false)? {
        ctx.note(&format!("{shown} is already trusted"));
        return Ok(());
    }
    ctx.note(&format!("Trusting {shown}: its convo.toml and config events may name providers (in {})", user.display()));
    Ok(())
}

fn set_store(ctx: &Ctx, key: &str, value: &toml::Value) -> Result<(), CommandError> {
    let store = ctx.open_store_for_write()?;
    let lock = store.lock()?;
    let commit = config_edit::set_in_store(&store, &lock, key, value, &ctx.clock)?;
    let subject = format!("config: set {key} = {value} in convo.toml");
    ctx.ui.commit(&CommitReport {
        conversation: None,
        commit: &commit,
        subject: &subject,
        landed: &Default::default(),
    });
    warn_if_untrusted(ctx, &store, key);
    Ok(())
}

fn set_conversation(ctx: &Ctx, id: Option<&str>, key: &str, value: &toml::Value) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let lock = store.lock()?;
    let id = store.resolve_or_active(id)?;
    let appended = config_edit::set_in_conversation(&store, &lock, &id, key, value, &ctx.clock)?;
    ctx.ui.commit(&CommitReport {
        conversation: Some(&id),
        commit: &appended.commit,
        subject: &appended.subject,
        landed: &appended.landed,
    });
    warn_if_untrusted(ctx, &store, key);
    Ok(())
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
