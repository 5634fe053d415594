//! The target of a request, written into `aud` as `<method>:<name>` (profile 3.5).

use std::fmt;

/// What the original request addressed. The name is written as the request carries it, without
/// any normalisation, and compared exactly.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A `tools/call` of the named tool.
    Tool(String),
    /// A `prompts/get` of the named prompt.
    Prompt(String),
    /// A `resources/read` of the resource URI.
    Resource(String),
}

impl Target {
    /// The MCP method of the target (`tools/call`, `prompts/get`, `resources/read`).
    pub fn method(&self) -> &'static str {
        match self {
            Target::Tool(_) => "tools/call",
            Target::Prompt(_) => "prompts/get",
            Target::Resource(_) => "resources/read",
        }
    }

    /// The tool or prompt name, or the resource URI.
    pub fn name(&self) -> &str {
        match self {
            Target::Tool(name) | Target::Prompt(name) | Target::Resource(name) => name,
        }
    }

    /// The `aud` claim for this target: `tools/call:deploy`.
    pub fn audience(&self) -> String {
        format!("{}:{}", self.method(), self.name())
    }

    /// Whether the target takes arguments (a tool or a prompt; a resource read has none).
    pub fn takes_arguments(&self) -> bool {
        !matches!(self, Target::Resource(_))
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({})", self.audience())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audience_is_method_colon_name() {
        assert_eq!(
            Target::Tool("deploy".into()).audience(),
            "tools/call:deploy"
        );
        assert_eq!(Target::Prompt("p".into()).audience(), "prompts/get:p");
        assert_eq!(
            Target::Resource("file:///a".into()).audience(),
            "resources/read:file:///a"
        );
        assert!(!Target::Resource("x".into()).takes_arguments());
    }
}
