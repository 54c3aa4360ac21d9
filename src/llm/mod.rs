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

/// Resolve `name` (or `llm.model`) against `[providers]` and `[models]`.
pub fn resolve_model(config: &Config, name: Option<&str>) -> Result<Model, String> {
    let name = name
        .map(str::to_owned)
        .or_else(|| config.llm.model.clone())
        .ok_or("no model: pass --model provider/model or set llm.model")?;
    let (provider, model) = name
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .ok_or_else(|| format!("model `{name}`: expected provider/model, e.g. ollama/llama3.2"))?;
    let p = config.providers.get(provider).ok_or_else(|| {
        let known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
        format!("model `{name}`: unknown provider `{provider}` (providers: {})", known.join(", "))
    })?;
    let missing = |field: &str| format!("provider `{provider}` has no {field} (set providers.{provider}.{field})");
    let m = config.models.get(&name).cloned().unwrap_or_default();
    Ok(Model {
        name: name.clone(),
        provider: provider.to_owned(),
        model: model.to_owned(),
        kind: p.kind.ok_or_else(|| missing("kind"))?,
        base_url: p.base_url.clone().ok_or_else(|| missing("base_url"))?,
        api_key_env: p.api_key_env.clone(),
        context_window: m.context_window,
        max_output_tokens: m.max_output_tokens.unwrap_or(4096),
        timeout_secs: config.llm.timeout_secs.unwrap_or(300),
    })
}

/// The request body `model` is sent for `view`.
pub fn request_body(model: &Model, view: &[crate::event::Event], stream: bool) -> serde_json::Value {
    let options = wire::BodyOptions { model: Some(model.model.clone()), stream, max_tokens: model.max_output_tokens };
    match model.kind {
        ProviderKind::Openai => wire::openai(view, &options),
        ProviderKind::Anthropic => wire::anthropic(view, &options),
    }
}
