//! Talking to LLMs: request bodies (`wire`), HTTP clients with streaming (`client`), and
//! the summarizer. This module never touches the store: callers pass events in and get
//! events (and usage) back.

mod answer;
pub mod client;
pub mod wire;

use crate::config::Config;
use client::ProviderKind;

/// A model as configured: `provider/model` and everything needed to call it, but the key.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// `provider/model`.
    pub name: String,
    pub provider: String,
    /// The name the provider knows it by.
    pub model: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// The environment variable holding the key, if the provider needs one.
    pub api_key_env: Option<String>,
    pub context_window: Option<u64>,
    pub max_output_tokens: u64,
    pub timeout_secs: u64,
}

/// Why a model name does not resolve to something that can be called.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("no model: pass --model provider/model or set llm.model")]
    NoModel,
    #[error("model `{name}`: expected provider/model, e.g. ollama/llama3.2")]
    NotProviderSlashModel { name: String },
    #[error("model `{name}`: unknown provider `{provider}` (providers: {})", known.join(", "))]
    UnknownProvider { name: String, provider: String, known: Vec<String> },
    /// The provider is configured without a field every call needs.
    #[error("provider `{provider}` has no {field} (set providers.{provider}.{field})")]
    Incomplete { provider: String, field: &'static str },
}

/// Resolve `name` (or `llm.model`) against `[providers]` and `[models]`.
pub fn resolve_model(config: &Config, name: Option<&str>) -> Result<Model, ModelError> {
    let name = name.map(str::to_owned).or_else(|| config.llm.model.clone()).ok_or(ModelError::NoModel)?;
    let (provider, model) = name
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .ok_or_else(|| ModelError::NotProviderSlashModel { name: name.clone() })?;
    let p = config.providers.get(provider).ok_or_else(|| ModelError::UnknownProvider {
        name: name.clone(),
        provider: provider.to_owned(),
        known: config.providers.keys().cloned().collect(),
    })?;
    let missing = |field| ModelError::Incomplete { provider: provider.to_owned(), field };
    let m = config.models.get(&name).cloned().unwrap_or_default();
    Ok(Model {
        name: name.clone(),
        provider: provider.to_owned(),
        model: model.to_owned(),
        kind: p.kind.ok_or_else(|| missing("kind"))?,
        base_url: p.base_url.clone().ok_or_else(|| missing("base_url"))?,
        api_key_env: p.api_key_env.clone(),
        context_window: m.context_window,
        max_output_tokens: m.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
        timeout_secs: config.llm.timeout_secs,
    })
}

/// The output limit sent (`max_tokens`, both kinds) for a model whose
/// `models.<m>.max_output_tokens` is not set.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 4096;

/// The request body `model` is sent for `view`, its answer capped at `max_tokens`
/// (`model.max_output_tokens` for a turn; a summary's own cap for a summary).
pub fn request_body(model: &Model, view: &[crate::event::Event], stream: bool, max_tokens: u64) -> serde_json::Value {
    let options = wire::BodyOptions { model: Some(model.model.clone()), stream, max_tokens };
    match model.kind {
        ProviderKind::Openai => wire::openai(view, &options),
        ProviderKind::Anthropic => wire::anthropic(view, &options),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderConfig;

    #[test]
    fn model_names_that_do_not_resolve_say_why() {
        let mut config = Config::default();
        config
            .providers
            .insert("half".into(), ProviderConfig { kind: Some(ProviderKind::Openai), ..Default::default() });
        config.providers.insert("ok".into(), ProviderConfig::default());
        let err = |name: Option<&str>| resolve_model(&config, name).unwrap_err().to_string();
        assert_eq!(err(None), "no model: pass --model provider/model or set llm.model");
        assert_eq!(err(Some("llama")), "model `llama`: expected provider/model, e.g. ollama/llama3.2");
        assert_eq!(err(Some("x/m")), "model `x/m`: unknown provider `x` (providers: half, ok)");
        assert_eq!(err(Some("half/m")), "provider `half` has no base_url (set providers.half.base_url)");
        assert_eq!(
            resolve_model(&config, Some("ok/m")),
            Err(ModelError::Incomplete { provider: "ok".into(), field: "kind" })
        );
    }
}
