//! `grep --type`: the event types a search can be limited to.

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum TypeArg {
    System,
    User,
    Assistant,
    Reasoning,
    #[value(name = "tool_call")]
    ToolCall,
    #[value(name = "tool_result")]
    ToolResult,
}

impl TypeArg {
    pub(super) fn name(self) -> &'static str {
        match self {
            TypeArg::System => "system",
            TypeArg::User => "user",
            TypeArg::Assistant => "assistant",
            TypeArg::Reasoning => "reasoning",
            TypeArg::ToolCall => "tool_call",
            TypeArg::ToolResult => "tool_result",
        }
    }
}
