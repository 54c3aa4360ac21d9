//! Layered configuration: built-in defaults (embedded TOML), the user file, the store's
//! `convo.toml`, the conversation's `config` events, then `--config KEY=VALUE`, later layers
//! winning key by key. Every layer is checked on its own, so an unknown key or a wrong type
//! is reported with the file (or event) it came from, and the line and column in a file,
//! never silently ignored.
//!
//! The caller (the CLI) finds the files and reads the environment; this module parses,
//! merges and validates what it is handed.

mod edit;

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::{Table, Value};

use crate::compaction::{ReasoningPolicy, ToolCallPolicy, ToolHint};

pub use edit::{EditError, remove_in_document, set_in_document};

/// Where a layer comes from, lowest precedence first: the order *is* the precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Default,
    User,
    Store,
    Conversation,
    CommandLine,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::User => "user",
            Source::Store => "store",
            Source::Conversation => "conversation",
            Source::CommandLine => "command line",
        }
    }
}

pub const DEFAULTS: &str = include_str!("defaults.toml");

/// One layer: its source, where exactly it came from (a path, an event), and its table.
#[derive(Debug, Clone)]
pub struct Layer {
    pub source: Source,
    pub origin: String,
    pub table: Table,
}

/// A layer that does not parse or does not fit the schema: `origin:line:column: message`,
/// the position (1-based, the column in characters) where the parser put it, when the layer
/// came from text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin}{}: {message}", position(*line, *column))]
pub struct ConfigError {
    pub origin: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

fn position(line: Option<usize>, column: Option<usize>) -> String {
    [line, column].into_iter().flatten().map(|n| format!(":{n}")).collect()
}

impl ConfigError {
    /// An error with no position: the layer did not come from text.
    fn new(origin: &str, message: impl Into<String>) -> Self {
        ConfigError { origin: origin.into(), line: None, column: None, message: message.into() }
    }

    /// An error at byte `offset` of `text`.
    fn at(origin: &str, text: &str, offset: usize, message: impl Into<String>) -> Self {
        let (line, column) = line_column(text, offset);
        ConfigError { origin: origin.into(), line: Some(line), column: Some(column), message: message.into() }
    }
}

/// A key or a value that cannot be set, before any schema check: from `--config`, a
/// conversation's `config` event, or `config set`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingError {
    #[error("`{text}`: expected KEY=VALUE")]
    NoAssignment { text: String },
    #[error("`{text}`: the key must be dotted names, like compaction.keep_last")]
    BadKey { text: String },
    #[error("`{key}` is not a key")]
    NotAKey { key: String },
    /// A dotted key goes through a value that is not a table.
    #[error("`{key}`: `{part}` is not a table")]
    NotATable { key: String, part: String },
    #[error("null is not a config value")]
    Null,
    /// A JSON number neither an `i64` nor an `f64` holds.
    #[error("{number} is out of range")]
    OutOfRange { number: serde_json::Number },
}

/// The resolved configuration.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub compaction: CompactionConfig,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
    #[serde(default)]
    pub llm: LlmConfig,
    /// `[providers.NAME]`: where models named `NAME/...` are served.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// `[models."provider/model"]`.
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    /// `[trust]`: read only from the user's own layers.
    #[serde(default)]
    pub trust: TrustConfig,
    /// `[hooks]`: commands run around a compaction; read only from the user's own layers.
    #[serde(default)]
    pub hooks: HooksConfig,
    /// `[store]`: how the store writes; read only from the user's own layers.
    #[serde(default)]
    pub store: StoreConfig,
    /// `[prices."model"]`: what `usage` estimates cost with, over the table convo ships.
    #[serde(default)]
    pub prices: BTreeMap<String, PriceConfig>,
    /// `[user]`: who records; read only from the user's own layers.
    #[serde(default)]
    pub user: UserConfig,
    /// `[share]`: which conversations a push publishes; read only from the user's own layers.
    #[serde(default)]
    pub share: ShareConfig,
}

/// `[share]`: what a push publishes of the conversations no one chose for (`convo private`
/// and `convo share` decide one by one). A [`USER_ONLY_KEYS`] key: a pulled `convo.toml`
/// must not publish what the user keeps to themselves.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareConfig {
    #[serde(default = "default_of::share_default")]
    pub default: ShareDefault,
}

impl Default for ShareConfig {
    fn default() -> Self {
        ShareConfig { default: default_of::share_default() }
    }
}

/// `share.default`: whether a conversation the hub does not have yet, and no one chose for,
/// is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShareDefault {
    /// Every conversation (what every push did before private conversations).
    All,
    /// Only those whose recorded project is a git repository with a remote.
    ProjectWithRemote,
    /// None: each is shared with `convo share ID`.
    None,
}

/// `[user]`: the person commits and recorded events name, over git's `user.name` and
/// `user.email`. A [`USER_ONLY_KEYS`] key: a store's config naming everyone who pulls it
/// would let it speak for them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
    /// Record the machine's name with each event recorded.
    #[serde(default)]
    pub record_machine: bool,
}

/// `[prices."model"]`: US dollars per million tokens; a field left out keeps the shipped
/// table's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

/// `[store]`: how commits reach the disk. [`USER_ONLY_KEYS`]: a store's `convo.toml` is
/// content anyone who can push wrote, and durability is the user's to give up, not a
/// remote's to turn off for them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// `committed`: a commit is on disk before it is acknowledged; `none`: nothing is synced.
    #[serde(default = "default_of::store_fsync")]
    pub fsync: Fsync,
}

/// `store.fsync`, as git's `core.fsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fsync {
    /// Every acknowledged commit survives a power cut.
    Committed,
    /// Nothing is synced (throwaway stores, benchmarks).
    None,
}

/// `[hooks]`: shell commands (run with `sh -c` by the CLI) around a compaction. They run
/// code, so they are [`USER_ONLY_KEYS`]: a store or a conversation never sets them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// Before a compaction is summarized or written; a non-zero exit vetoes it.
    #[serde(default)]
    pub pre_compact: Option<String>,
    /// After a compaction's commit.
    #[serde(default)]
    pub post_compact: Option<String>,
    /// Seconds a hook may run before it is killed.
    #[serde(default = "default_of::hooks_timeout_secs")]
    pub timeout_secs: u64,
}

/// `[trust]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustConfig {
    /// Stores (absolute paths) whose own config may set [`AUTHORITY_KEYS`], like git's
    /// `safe.directory`.
    #[serde(default)]
    pub stores: Vec<String>,
}

/// Keys that can send data away or run code: a provider's `base_url`, `kind` and
/// `api_key_env` decide where a conversation and a key go. They are honoured from the
/// user's own layers (defaults, the user file, `--config`) and from content (a store's
/// `convo.toml`, a conversation's `config` events) only when the user trusts that store.
/// Dotted prefixes, `*` matching any one name: any future key that names a URL belongs
/// here (one that names a command, like `hooks`, belongs in [`USER_ONLY_KEYS`]).
pub const AUTHORITY_KEYS: &[&str] = &["providers"];

/// Keys read only from the user's own layers, trusted store or not: a store cannot trust
/// itself, and a command to run (`hooks`) would run whatever whoever can push wrote.
/// `store.fsync` too: a pulled `convo.toml` must not turn the user's durability off (and
/// one that asks for more than the user chose has no say over the user's disk either).
/// `share`: a pulled `convo.toml` must not publish what the user keeps to themselves.
pub const USER_ONLY_KEYS: &[&str] = &["trust", "hooks", "store.fsync", "user", "share"];

/// Why a key from content was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoredWhy {
    /// An [`AUTHORITY_KEYS`] key from a store the user does not trust.
    Untrusted,
    /// A [`USER_ONLY_KEYS`] key, which content may never set.
    UserOnly,
}

/// A key a layer set that the resolved configuration leaves out.
#[derive(Debug, Clone, PartialEq)]
pub struct Ignored {
    pub key: String,
    pub value: Value,
    pub source: Source,
    pub origin: String,
    pub why: IgnoredWhy,
}

impl Ignored {
    /// Why, in a few words: `the store is not trusted`.
    pub fn reason(&self) -> &'static str {
        match self.why {
            IgnoredWhy::Untrusted => "the store is not trusted",
            IgnoredWhy::UserOnly => "only your own config may set it",
        }
    }

    /// One line: `ignored providers.x.base_url from convo.toml (the store is not trusted)`.
    pub fn message(&self) -> String {
        format!("ignored {} from {} ({})", self.key, self.origin, self.reason())
    }

    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self.why {
            IgnoredWhy::Untrusted => {
                "a store's convo.toml and config events may name providers only once you trust it: `convo config trust`"
            }
            IgnoredWhy::UserOnly => user_only_hint(&self.key),
        }
    }
}

/// How to set [`USER_ONLY_KEYS`] key `key` where it counts: in the user's own config.
pub fn user_only_hint(key: &str) -> &'static str {
    let under = |prefix: &str| key == prefix || key.starts_with(&format!("{prefix}."));
    if under("trust") {
        "trust a store from your own config: `convo config trust [PATH]`"
    } else if under("store") {
        "how your stores reach the disk is yours to set: `convo config set --user store.fsync VALUE`"
    } else if under("hooks") {
        "hooks run commands: only your own config sets them (`convo config set --user KEY VALUE`)"
    } else {
        "set it in your own config: `convo config set --user KEY VALUE`"
    }
}

/// Whether layers from `source` are content: written by whoever can write to the store.
fn is_content(source: Source) -> bool {
    matches!(source, Source::Store | Source::Conversation)
}

/// Take the keys content may not set out of `layer`, and say which. A layer from the
/// user's own sources is left as it is.
pub fn filter_content(layer: &mut Layer, store_trusted: bool) -> Vec<Ignored> {
    if !is_content(layer.source) {
        return Vec::new();
    }
    let mut rules: Vec<(&str, IgnoredWhy)> = USER_ONLY_KEYS.iter().map(|k| (*k, IgnoredWhy::UserOnly)).collect();
    if !store_trusted {
        rules.extend(AUTHORITY_KEYS.iter().map(|k| (*k, IgnoredWhy::Untrusted)));
    }
    let mut ignored = Vec::new();
    for (pattern, why) in rules {
        let mut removed = Vec::new();
        take_matching("", &mut layer.table, &split_key(pattern), &mut removed);
        for (key, value) in removed {
            ignored.push(Ignored { key, value, source: layer.source, origin: layer.origin.clone(), why });
        }
    }
    ignored.sort_by(|a, b| a.key.cmp(&b.key));
    ignored
}

/// Remove what `pattern` names from `table` (under `prefix`), as flattened leaves.
fn take_matching(prefix: &str, table: &mut Table, pattern: &[String], out: &mut Vec<(String, Value)>) {
    let Some((first, rest)) = pattern.split_first() else { return };
    let names: Vec<String> = if first == "*" { table.keys().cloned().collect() } else { vec![first.clone()] };
    for name in names {
        let path = join_key(prefix, &name);
        if rest.is_empty() {
            match table.remove(&name) {
                Some(Value::Table(t)) => flatten(&path, &t, out),
                Some(v) => out.push((path, v)),
                None => {}
            }
        } else if let Some(Value::Table(sub)) = table.get_mut(&name) {
            take_matching(&path, sub, rest, out);
        }
    }
}

/// The stores the user trusts: `trust.stores` from every layer that is not content, together.
pub fn trusted_stores(layers: &[Layer]) -> Vec<String> {
    let mut out = Vec::new();
    for layer in layers.iter().filter(|l| !is_content(l.source)) {
        if let Some(Value::Array(items)) = lookup(&layer.table, "trust.stores") {
            for item in items.iter().filter_map(Value::as_str) {
                if !out.iter().any(|s| s == item) {
                    out.push(item.to_owned());
                }
            }
        }
    }
    out
}

/// `[llm]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    /// The model `query` and summaries use without --model, as `provider/model`.
    #[serde(default)]
    pub model: Option<String>,
    /// Seconds to wait for an answer.
    #[serde(default = "default_of::timeout_secs")]
    pub timeout_secs: u64,
}

/// Which wire protocol a provider speaks (`providers.NAME.kind`). Here, not in `llm`, so
/// that config depends on nothing above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Openai,
    Anthropic,
}

/// `[providers.NAME]`. Every field is optional in a layer; a provider in use must end up
/// with `kind` and `base_url`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    #[serde(default)]
    pub kind: Option<ProviderKind>,
    #[serde(default)]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (the key itself never goes in config).
    #[serde(default)]
    pub api_key_env: Option<String>,
}

/// `[models."provider/model"]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    #[serde(default)]
    pub context_window: Option<u64>,
    /// The cap sent as `max_tokens` on every request to it; unset:
    /// `llm::DEFAULT_MAX_OUTPUT_TOKENS` (4096).
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
}

/// `[compaction]`. Keys with a default have no `Option`: the default comes from
/// `defaults.toml` (see [`default_of`]), the one place defaults live.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionConfig {
    #[serde(default = "default_of::default_profile")]
    pub default_profile: String,
    #[serde(default = "default_of::keep_last")]
    pub keep_last: u64,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// Ask before a summary call that would send more tokens than this (on a terminal).
    #[serde(default = "default_of::confirm_above_tokens")]
    pub confirm_above_tokens: u64,
    /// The most tokens a digest may take (`compact --digest`).
    #[serde(default = "default_of::max_summary_tokens")]
    pub max_summary_tokens: u64,
    /// The arguments a stripped tool call keeps (`tools.NAME.compaction.keep_args` for one
    /// tool).
    #[serde(default = "default_of::keep_args")]
    pub keep_args: Vec<String>,
    #[serde(default)]
    pub auto: AutoConfig,
}

/// `[compaction.auto]`: compact when the projected view nears the model's window.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoConfig {
    #[serde(default = "default_of::auto_enabled")]
    pub enabled: bool,
    #[serde(default = "default_of::auto_trigger_ratio")]
    pub trigger_ratio: f64,
    #[serde(default = "default_of::auto_profile")]
    pub profile: String,
    #[serde(default = "default_of::auto_min_turns")]
    pub min_turns: u64,
}

/// A table with none of its keys set takes every default.
macro_rules! defaults_from_toml {
    ($($ty:ty),*) => {$(
        impl Default for $ty {
            fn default() -> Self {
                <$ty>::deserialize(Value::Table(Table::new()))
                    .unwrap_or_else(|e| panic!("defaults.toml: {e}"))
            }
        }
    )*};
}
defaults_from_toml!(CompactionConfig, AutoConfig, LlmConfig, HooksConfig, StoreConfig);

/// The values `defaults.toml` gives the keys that have a default, for serde: a key missing
/// from a layer means the default, and no number is written twice in code.
mod default_of {
    use std::sync::OnceLock;

    fn value<T: serde::de::DeserializeOwned>(key: &str) -> T {
        static TABLE: OnceLock<toml::Table> = OnceLock::new();
        let table = TABLE.get_or_init(|| super::DEFAULTS.parse().unwrap_or_else(|e| panic!("defaults.toml: {e}")));
        let found = super::lookup(table, key).unwrap_or_else(|| panic!("defaults.toml has no {key}"));
        found.clone().try_into().unwrap_or_else(|e| panic!("defaults.toml: {key}: {e}"))
    }

    pub fn default_profile() -> String {
        value("compaction.default_profile")
    }
    pub fn keep_last() -> u64 {
        value("compaction.keep_last")
    }
    pub fn confirm_above_tokens() -> u64 {
        value("compaction.confirm_above_tokens")
    }
    pub fn max_summary_tokens() -> u64 {
        value("compaction.max_summary_tokens")
    }
    pub fn keep_args() -> Vec<String> {
        value("compaction.keep_args")
    }
    pub fn auto_enabled() -> bool {
        value("compaction.auto.enabled")
    }
    pub fn auto_trigger_ratio() -> f64 {
        value("compaction.auto.trigger_ratio")
    }
    pub fn auto_profile() -> String {
        value("compaction.auto.profile")
    }
    pub fn auto_min_turns() -> u64 {
        value("compaction.auto.min_turns")
    }
    pub fn timeout_secs() -> u64 {
        value("llm.timeout_secs")
    }
    pub fn hooks_timeout_secs() -> u64 {
        value("hooks.timeout_secs")
    }
    pub fn store_fsync() -> super::Fsync {
        value("store.fsync")
    }
    pub fn share_default() -> super::ShareDefault {
        value("share.default")
    }
}

/// `[compaction.profiles.NAME]`: which policies a compaction applies. Ranges are not part of
/// a profile: they are chosen per invocation.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[serde(default)]
    pub reasoning: Option<ReasoningPolicy>,
    #[serde(default)]
    pub tool_calls: Option<ToolCallsSetting>,
    #[serde(default)]
    pub summary: Option<SummarySetting>,
    /// Only tool requests and results over this many bytes are stripped or truncated.
    #[serde(default)]
    pub min_bytes: Option<u64>,
    /// Tool results left in place are cut to this many lines.
    #[serde(default)]
    pub max_lines: Option<u64>,
    /// The first N turns (the task statement) are never in range.
    #[serde(default)]
    pub keep_first: Option<u64>,
    /// Without --to or --keep-last, the last N tool calls with their results stay whole too.
    #[serde(default)]
    pub keep_recent_tools: Option<u64>,
}

/// `tool_calls = "strip" | "strip-responses" | "strip-requests" | "omit"`, or a table
/// `{ policy = "strip", request = true, response = false }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCallsSetting(pub ToolCallPolicy);

impl<'de> Deserialize<'de> for ToolCallsSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            Table {
                policy: String,
                #[serde(default = "yes")]
                request: bool,
                #[serde(default = "yes")]
                response: bool,
            },
        }
        fn yes() -> bool {
            true
        }
        let bad = |w: &str| {
            serde::de::Error::custom(format!(
                "invalid tool_calls `{w}`: expected \"strip\", \"strip-responses\", \"strip-requests\", \"omit\" or a table"
            ))
        };
        Ok(ToolCallsSetting(match Raw::deserialize(d)? {
            Raw::Word(w) => match w.as_str() {
                "strip" => ToolCallPolicy::Strip { request: true, response: true },
                "strip-responses" => ToolCallPolicy::Strip { request: false, response: true },
                "strip-requests" => ToolCallPolicy::Strip { request: true, response: false },
                "omit" => ToolCallPolicy::Omit,
                other => return Err(bad(other)),
            },
            Raw::Table { policy, request, response } => match policy.as_str() {
                "strip" => ToolCallPolicy::Strip { request, response },
                "omit" => ToolCallPolicy::Omit,
                other => return Err(bad(other)),
            },
        }))
    }
}

/// `summary = { policy = "summarize", model = "...", instructions = "..." }`, or
/// `summary = { policy = "digest" }` (convo writes it; `model` and `instructions` do not apply).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummarySetting {
    pub policy: SummaryPolicyName,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub instructions: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryPolicyName {
    /// A model writes it (`compact --summarize`).
    Summarize,
    /// convo writes it, one line per turn (`compact --digest`).
    Digest,
}

/// `[tools.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    #[serde(default)]
    pub compaction: Option<ToolHint>,
}

impl Config {
    /// Per-tool compaction hints, as a compaction records them.
    pub fn tool_hints(&self) -> BTreeMap<String, ToolHint> {
        self.tools.iter().filter_map(|(name, t)| Some((name.clone(), t.compaction.clone()?))).collect()
    }
}

/// A layer from TOML text (a file's contents).
pub fn parse_layer(source: Source, origin: &str, text: &str) -> Result<Layer, ConfigError> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| match e.span() {
        Some(span) => ConfigError::at(origin, text, span.start, e.message().trim_end()),
        None => ConfigError::new(origin, e.message().trim_end()),
    })?;
    let layer = Layer { source, origin: origin.to_owned(), table };
    validate(&layer, Some(text))?;
    Ok(layer)
}

/// A layer from dotted keys and values: a conversation's `config` event, or `--config`.
pub fn layer_from_pairs(source: Source, origin: &str, pairs: &[(String, Value)]) -> Result<Layer, ConfigError> {
    let mut table = Table::new();
    for (key, value) in pairs {
        insert_dotted(&mut table, key, value.clone()).map_err(|m| ConfigError::new(origin, m.to_string()))?;
    }
    let layer = Layer { source, origin: origin.to_owned(), table };
    validate(&layer, None)?;
    Ok(layer)
}

/// `KEY=VALUE` from the command line. VALUE is TOML (`5`, `true`, `"strip"`); anything that
/// does not parse as TOML is taken as a string.
pub fn parse_assignment(text: &str) -> Result<(String, Value), SettingError> {
    let (key, value) = text.split_once('=').ok_or_else(|| SettingError::NoAssignment { text: text.into() })?;
    let key = key.trim();
    if key.is_empty() || split_key(key).iter().any(String::is_empty) {
        return Err(SettingError::BadKey { text: text.into() });
    }
    Ok((key.to_owned(), parse_value(value.trim())))
}

/// A value given on the command line: TOML when it parses, else a plain string.
pub fn parse_value(text: &str) -> Value {
    format!("v = {text}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_owned()))
}

/// JSON (a `config` event's `set`) to TOML; `null` has no TOML form.
pub fn json_to_toml(value: &serde_json::Value) -> Result<Value, SettingError> {
    Ok(match value {
        serde_json::Value::Null => return Err(SettingError::Null),
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Integer(i),
            (None, Some(f)) => Value::Float(f),
            _ => return Err(SettingError::OutOfRange { number: n.clone() }),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(json_to_toml).collect::<Result<_, _>>()?),
        serde_json::Value::Object(map) => {
            let mut table = Table::new();
            for (k, v) in map {
                insert_dotted(&mut table, k, json_to_toml(v)?)?;
            }
            Value::Table(table)
        }
    })
}

/// `a."b.c".d` → `["a", "b.c", "d"]`: model names such as `ollama/llama3.2` hold dots.
pub fn split_key(key: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    for c in key.chars() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(String::new()),
            c => parts.last_mut().map_or((), |p| p.push(c)),
        }
    }
    parts
}

fn insert_dotted(table: &mut Table, key: &str, value: Value) -> Result<(), SettingError> {
    let mut parts = split_key(key);
    let last = parts.pop().filter(|l| !l.is_empty()).ok_or_else(|| SettingError::NotAKey { key: key.into() })?;
    let mut here = table;
    for part in parts {
        let entry = here.entry(part.clone()).or_insert_with(|| Value::Table(Table::new()));
        here = entry.as_table_mut().ok_or_else(|| SettingError::NotATable { key: key.into(), part: part.clone() })?;
    }
    match (here.get_mut(&last), value) {
        (Some(Value::Table(existing)), Value::Table(new)) => {
            merge(existing, new);
        }
        (_, value) => {
            here.insert(last.to_owned(), value);
        }
    }
    Ok(())
}

fn merge(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// `message` on one line: serde's value errors end in `\nin `key.path`\n`.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Check a layer against the schema on its own, so errors name where they came from.
fn validate(layer: &Layer, text: Option<&str>) -> Result<(), ConfigError> {
    let Err(e) = Config::deserialize(Value::Table(layer.table.clone())) else { return Ok(()) };
    // The value-level message names the key path (`... in `compaction.keep_last``) but has
    // no position: deserialising the text itself gives the span of the offending key or value.
    let message = one_line(&e.to_string());
    let spanned = text.and_then(|t| Some((t, toml::from_str::<Config>(t).err()?)));
    Err(match spanned {
        Some((text, spanned)) => {
            let plain = one_line(spanned.message());
            // Should the two passes ever meet different errors first, the positioned one is
            // reported.
            let message = if message.starts_with(&plain) { message } else { plain };
            match spanned.span() {
                Some(span) => ConfigError::at(&layer.origin, text, span.start, message),
                None => ConfigError::new(&layer.origin, message),
            }
        }
        None => ConfigError::new(&layer.origin, message),
    })
}

/// One layer per `config` event of a conversation, in order (later events win).
pub fn conversation_layers(events: &[crate::event::Event]) -> Result<Vec<Layer>, ConfigError> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            crate::event::Kind::Config { set } => Some((e, set)),
            _ => None,
        })
        .map(|(e, set)| {
            let origin = format!("config event {}", e.id);
            let pairs = set
                .iter()
                .map(|(k, v)| {
                    json_to_toml(v)
                        .map(|v| (k.clone(), v))
                        .map_err(|m| ConfigError::new(&origin, format!("`{k}`: {m}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            layer_from_pairs(Source::Conversation, &origin, &pairs)
        })
        .collect()
}

/// The built-in layer.
pub fn defaults() -> Layer {
    // The embedded file is part of the binary and covered by tests: it always parses.
    parse_layer(Source::Default, "built-in defaults", DEFAULTS).unwrap_or_else(|e| panic!("{e}"))
}

/// Layers merged, lowest precedence first.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: Config,
    /// The layers as merged: without what content may not set.
    pub layers: Vec<Layer>,
    /// What content set and the configuration leaves out, in layer order.
    pub ignored: Vec<Ignored>,
}

impl Resolved {
    /// Merge `layers` (any order: they are sorted by source, stable within one source), as
    /// for a store the user does not trust.
    pub fn new(layers: Vec<Layer>) -> Result<Resolved, ConfigError> {
        Resolved::with_trust(layers, false)
    }

    /// Merge `layers`; content layers set [`AUTHORITY_KEYS`] only when `store_trusted`, and
    /// [`USER_ONLY_KEYS`] never.
    pub fn with_trust(mut layers: Vec<Layer>, store_trusted: bool) -> Result<Resolved, ConfigError> {
        layers.sort_by_key(|l| l.source);
        let ignored = layers.iter_mut().flat_map(|l| filter_content(l, store_trusted)).collect();
        let mut merged = Table::new();
        for layer in &layers {
            merge(&mut merged, layer.table.clone());
        }
        let config = Config::deserialize(Value::Table(merged))
            .map_err(|e| ConfigError::new("merged configuration", e.to_string()))?;
        Ok(Resolved { config, layers, ignored })
    }

    /// The value of dotted `key` and the layer it came from.
    pub fn get(&self, key: &str) -> Option<(Value, &Layer)> {
        let mut found = None;
        for layer in &self.layers {
            if let Some(value) = lookup(&layer.table, key) {
                found = Some(match (found, value) {
                    (Some((Value::Table(mut base), _)), Value::Table(over)) => {
                        merge(&mut base, over.clone());
                        (Value::Table(base), layer)
                    }
                    (_, value) => (value.clone(), layer),
                });
            }
        }
        found
    }

    /// Every leaf key with its value and the layer that set it, sorted by key.
    pub fn list(&self) -> Vec<(String, Value, &Layer)> {
        let mut out: BTreeMap<String, (Value, &Layer)> = BTreeMap::new();
        for layer in &self.layers {
            let mut leaves = Vec::new();
            flatten("", &layer.table, &mut leaves);
            for (key, value) in leaves {
                out.insert(key, (value, layer));
            }
        }
        out.into_iter().map(|(k, (v, l))| (k, v, l)).collect()
    }
}

fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let parts = split_key(key);
    let mut value = table.get(parts.first()?)?;
    for part in &parts[1..] {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// `prefix.name`, the name quoted when it holds a dot or a slash.
fn join_key(prefix: &str, name: &str) -> String {
    let name = if name.contains('.') || name.contains('/') { format!("\"{name}\"") } else { name.to_owned() };
    if prefix.is_empty() { name } else { format!("{prefix}.{name}") }
}

fn flatten(prefix: &str, table: &Table, out: &mut Vec<(String, Value)>) {
    for (key, value) in table {
        let path = join_key(prefix, key);
        match value {
            Value::Table(t) => flatten(&path, t, out),
            v => out.push((path, v.clone())),
        }
    }
}

/// What the merged configuration names that it does not hold (a profile nobody defined):
/// each layer can be valid on its own and the whole still unusable, so `config set` checks
/// this after the edit, before writing. Each problem is `(key, message)`.
pub fn problems(config: &Config) -> Vec<(String, String)> {
    let profiles = &config.compaction.profiles;
    let known = || profiles.keys().cloned().collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    for (key, name) in [
        ("compaction.default_profile", &config.compaction.default_profile),
        ("compaction.auto.profile", &config.compaction.auto.profile),
    ] {
        if !profiles.contains_key(name) {
            out.push((key.to_owned(), format!("unknown profile `{name}` (profiles: {})", known())));
        }
    }
    out
}

/// `key = value` over `resolved`, at the highest precedence: the problems (see
/// [`problems`]) the value brings that the configuration did not have already.
pub fn problems_with(resolved: &Resolved, key: &str, value: &Value) -> Result<Vec<(String, String)>, ConfigError> {
    let before = problems(&resolved.config);
    let mut layers = resolved.layers.clone();
    layers.push(layer_from_pairs(Source::CommandLine, key, &[(key.to_owned(), value.clone())])?);
    let after = Resolved::new(layers)?;
    Ok(problems(&after.config).into_iter().filter(|p| !before.contains(p)).collect())
}

/// Check that setting `key` to `value` gives a valid configuration, before anything is written.
pub fn check_assignment(key: &str, value: &Value) -> Result<(), ConfigError> {
    layer_from_pairs(Source::CommandLine, key, &[(key.to_owned(), value.clone())]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_defaults_take_them_from_defaults_toml_alone() {
        let resolved = Resolved::new(vec![defaults()]).unwrap();
        // A layer that sets nothing and the built-in file agree: no default is written in code.
        assert_eq!(
            CompactionConfig { profiles: resolved.config.compaction.profiles.clone(), ..Default::default() },
            resolved.config.compaction
        );
        assert_eq!(LlmConfig::default(), resolved.config.llm);
        let user = parse_layer(Source::User, "user.toml", "[compaction.auto]\nenabled = true\n").unwrap();
        let r = Resolved::new(vec![user]).unwrap();
        assert!(r.config.compaction.auto.enabled);
        assert_eq!(r.config.compaction.auto.min_turns, resolved.config.compaction.auto.min_turns);
    }

    fn resolve(layers: Vec<Layer>) -> Resolved {
        let mut all = vec![defaults()];
        all.extend(layers);
        Resolved::new(all).unwrap()
    }

    #[test]
    fn defaults_parse_and_hold_the_builtin_profiles() {
        let r = resolve(vec![]);
        assert_eq!(r.config.compaction.default_profile, "default");
        assert_eq!(r.config.compaction.keep_last, 3);
        let default = &r.config.compaction.profiles["default"];
        assert_eq!(default.reasoning, Some(ReasoningPolicy::Strip));
        assert_eq!(default.tool_calls, Some(ToolCallsSetting(ToolCallPolicy::Strip { request: true, response: true })));
        assert_eq!(r.config.compaction.profiles["light"].tool_calls, None);
    }

    #[test]
    fn later_sources_win_key_by_key() {
        let user = parse_layer(Source::User, "user.toml", "[compaction]\nkeep_last = 5\n").unwrap();
        let store = parse_layer(
            Source::Store,
            "convo.toml",
            "[compaction.profiles.default]\ntool_calls = \"strip-responses\"\n",
        )
        .unwrap();
        let cli =
            layer_from_pairs(Source::CommandLine, "--config", &[parse_assignment("compaction.keep_last=1").unwrap()])
                .unwrap();
        // Given out of order on purpose: precedence comes from the source, not the position.
        let r = resolve(vec![cli, store, user]);
        assert_eq!(r.config.compaction.keep_last, 1);
        let default = &r.config.compaction.profiles["default"];
        assert_eq!(default.reasoning, Some(ReasoningPolicy::Strip), "merged, not replaced");
        assert_eq!(
            default.tool_calls,
            Some(ToolCallsSetting(ToolCallPolicy::Strip { request: false, response: true }))
        );
        let (value, layer) = r.get("compaction.keep_last").unwrap();
        assert_eq!((value, layer.source), (Value::Integer(1), Source::CommandLine));
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_file_key_line_and_column() {
        let err = |text: &str| parse_layer(Source::User, "config.toml", text).unwrap_err().to_string();
        assert_eq!(
            err("[compaction]\n\nprofles = 1\n"),
            "config.toml:3:1: unknown field `profles`, expected one of `default_profile`, `keep_last`, `profiles`, \
             `confirm_above_tokens`, `max_summary_tokens`, `keep_args`, `auto` in `compaction`"
        );
        // The value's position, indented or not; a key named in a comment above is no decoy.
        assert_eq!(
            err("[compaction]\n# keep_last = 1\n  keep_last = \"three\"\n"),
            "config.toml:3:15: invalid type: string \"three\", expected u64 in `compaction.keep_last`"
        );
        assert_eq!(
            err("[compaction.profiles.x]\ntool_calls = \"shred\"\n"),
            "config.toml:2:14: invalid tool_calls `shred`: expected \"strip\", \"strip-responses\", \
             \"strip-requests\", \"omit\" or a table in `compaction.profiles.x.tool_calls`"
        );
        // A key inside an inline table, after a multi-byte character: columns count characters.
        assert_eq!(
            err("[compaction.profiles.x]\nsummary = { instructions = \"é…\", policy = \"summarize\", mdl = 1 }\n"),
            "config.toml:2:56: unknown field `mdl`, expected one of `policy`, `model`, `instructions` \
             in `compaction.profiles.x.summary`"
        );
        // Two errors: the first by key order is reported, at its own position.
        assert_eq!(
            err("[compaction]\nzzz = 1\naaa = 2\n"),
            "config.toml:3:1: unknown field `aaa`, expected one of `default_profile`, `keep_last`, `profiles`, \
             `confirm_above_tokens`, `max_summary_tokens`, `keep_args`, `auto` in `compaction`"
        );
        // Syntax errors, at the parser's position.
        assert_eq!(err("[compaction\n"), "config.toml:1:12: unclosed table, expected `]`");
        assert_eq!(err("a = 1\nb = \n"), "config.toml:2:5: string values must be quoted, expected literal string");
        // Layers not read from text have no position.
        let err = layer_from_pairs(Source::CommandLine, "--config", &[parse_assignment("x=1").unwrap()]).unwrap_err();
        assert_eq!((err.line, err.column), (None, None));
        assert!(err.to_string().starts_with("--config: unknown field `x`"), "{err}");
    }

    #[test]
    fn line_column_counts_characters_from_one() {
        let text = "ab\né€x\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, "ab\né€".len()), (2, 3));
        assert_eq!(line_column(text, 4), (2, 1), "inside a character: that character");
        assert_eq!(line_column(text, 99), (3, 1));
    }

    #[test]
    fn tool_calls_accepts_words_and_tables() {
        for (text, policy) in [
            ("\"omit\"", ToolCallPolicy::Omit),
            ("\"strip-requests\"", ToolCallPolicy::Strip { request: true, response: false }),
            ("{ policy = \"strip\", response = false }", ToolCallPolicy::Strip { request: true, response: false }),
        ] {
            let layer =
                parse_layer(Source::User, "t", &format!("[compaction.profiles.p]\ntool_calls = {text}\n")).unwrap();
            let r = Resolved::new(vec![layer]).unwrap();
            assert_eq!(r.config.compaction.profiles["p"].tool_calls, Some(ToolCallsSetting(policy)));
        }
    }

    #[test]
    fn content_may_not_name_providers_unless_the_store_is_trusted() {
        let store = parse_layer(
            Source::Store,
            "convo.toml",
            "[compaction]\nkeep_last = 7\n[providers.openai]\nbase_url = \"http://evil\"\n[trust]\nstores = [\"/s\"]\n",
        )
        .unwrap();
        let event = layer_from_pairs(
            Source::Conversation,
            "config event e1",
            &[("providers.\"x.y\".api_key_env".into(), Value::String("HOME".into()))],
        )
        .unwrap();
        let user = parse_layer(Source::User, "config.toml", "[trust]\nstores = [\"/s\", \"/t\"]\n").unwrap();
        let cli = layer_from_pairs(
            Source::CommandLine,
            "--config",
            &[parse_assignment("providers.mine.kind=openai").unwrap()],
        )
        .unwrap();

        let r = Resolved::new(vec![defaults(), store.clone(), event.clone(), user.clone(), cli.clone()]).unwrap();
        assert_eq!(r.config.providers["openai"].base_url.as_deref(), Some("https://api.openai.com/v1"));
        assert!(!r.config.providers.contains_key("x.y"));
        assert_eq!(r.config.providers["mine"].kind, Some(ProviderKind::Openai), "--config counts");
        assert_eq!(r.config.compaction.keep_last, 7, "other store keys still apply");
        assert_eq!(r.config.trust.stores, ["/s", "/t"]);
        let ignored: Vec<_> = r.ignored.iter().map(|i| (i.key.as_str(), i.origin.as_str(), i.why)).collect();
        assert_eq!(
            ignored,
            [
                ("providers.openai.base_url", "convo.toml", IgnoredWhy::Untrusted),
                ("trust.stores", "convo.toml", IgnoredWhy::UserOnly),
                ("providers.\"x.y\".api_key_env", "config event e1", IgnoredWhy::Untrusted),
            ]
        );
        assert_eq!(
            r.ignored[0].message(),
            "ignored providers.openai.base_url from convo.toml (the store is not trusted)"
        );
        assert!(r.ignored[0].hint().contains("convo config trust"));

        // Trusted: the providers apply; the store still cannot trust itself.
        let r = Resolved::with_trust(vec![defaults(), store, event, user.clone(), cli.clone()], true).unwrap();
        assert_eq!(r.config.providers["openai"].base_url.as_deref(), Some("http://evil"));
        assert_eq!(r.config.providers["x.y"].api_key_env.as_deref(), Some("HOME"));
        assert_eq!(r.ignored.iter().map(|i| i.key.as_str()).collect::<Vec<_>>(), ["trust.stores"]);
        assert_eq!(r.config.trust.stores, ["/s", "/t"]);
        assert_eq!(trusted_stores(&r.layers), ["/s", "/t"]);
    }

    #[test]
    fn authority_patterns_match_whole_tables_and_wildcards() {
        let mut table: Table =
            "[a.one]\ncommand = \"x\"\nkeep = 1\n[a.two]\ncommand = \"y\"\n[b]\nc = 2\n".parse().unwrap();
        let mut out = Vec::new();
        take_matching("", &mut table, &split_key("a.*.command"), &mut out);
        assert_eq!(out.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["a.one.command", "a.two.command"]);
        assert_eq!(lookup(&table, "a.one.keep"), Some(&Value::Integer(1)));
        take_matching("", &mut table, &split_key("b"), &mut out);
        assert_eq!(out.last().map(|(k, _)| k.as_str()), Some("b.c"));
        assert!(!table.contains_key("b"));
    }

    #[test]
    fn command_line_values_are_toml_or_strings() {
        assert_eq!(parse_assignment("a.b=5").unwrap(), ("a.b".into(), Value::Integer(5)));
        assert_eq!(parse_assignment("a.b=strip").unwrap(), ("a.b".into(), Value::String("strip".into())));
        let err = parse_assignment("nokey").unwrap_err();
        assert_eq!(err, SettingError::NoAssignment { text: "nokey".into() });
        assert_eq!(err.to_string(), "`nokey`: expected KEY=VALUE");
        assert_eq!(
            parse_assignment(".x=1").unwrap_err().to_string(),
            "`.x=1`: the key must be dotted names, like compaction.keep_last"
        );
    }

    #[test]
    fn settings_that_cannot_be_made_say_why() {
        assert_eq!(json_to_toml(&serde_json::Value::Null).unwrap_err().to_string(), "null is not a config value");
        let err = layer_from_pairs(
            Source::Conversation,
            "config event e1",
            &[("llm.model".into(), Value::Integer(1)), ("llm.model.x".into(), Value::Integer(2))],
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "config event e1: `llm.model.x`: `model` is not a table");
        let err = conversation_layers(&[crate::event::Event {
            id: "e1".into(),
            ts: "2026-01-01T00:00:00.000Z".into(),
            kind: crate::event::Kind::Config {
                set: [("llm.model".to_owned(), serde_json::Value::Null)].into_iter().collect(),
            },
            extra: Default::default(),
        }])
        .unwrap_err();
        assert_eq!(err.to_string(), "config event e1: `llm.model`: null is not a config value");
    }
}
