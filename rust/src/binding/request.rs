//! The request binding: the user, the target and the arguments a token is checked against
//! (profile 5, steps 17 to 19).

use serde_json::Value;

use super::canonical::{Unbindable, arguments_digest};
use super::target::Target;

/// The request a token is minted for or presented with. The digest is computed only when needed.
#[derive(Clone, Copy)]
pub struct Binding<'a> {
    /// The authenticated principal (`sub`).
    pub user: &'a str,
    /// The target (`aud`).
    pub target: &'a Target,
    /// The request's arguments: `None` is absent (read as `{}`); a present value that is not an
    /// object (`null` included) is unbindable.
    pub arguments: Option<&'a Value>,
}

impl Binding<'_> {
    /// The argument digest, or `Unbindable` (profile 3.4).
    pub fn digest(&self) -> Result<String, Unbindable> {
        arguments_digest(self.arguments)
    }
}

impl std::fmt::Debug for Binding<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No user and no arguments in debug output: they may be personal data.
        f.debug_struct("Binding")
            .field("target", self.target)
            .finish_non_exhaustive()
    }
}
