//! The boundary's configuration, shared by the layer and the handler wrapper.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use mrtr_state::{StateSealer, Target};
use rmcp::ServerHandler;

use crate::handler::StateHandler;
use crate::layer::StateLayer;

/// The `_meta` key of a refused tool call that holds the profile's reason code (as in every language).
pub const REASON_META_KEY: &str = "io.github.mrtr-state/reason";

/// The request body limit of [`StateLayer`] by default: 4 MiB, rmcp's own default.
pub(crate) const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The authenticated user of an HTTP request, as the server's authentication middleware found it.
///
/// Put it in the request's extensions (`request.extensions_mut().insert(AuthenticatedUser::new(user))`)
/// before [`StateLayer`] sees the request; with [`Principal::Authenticated`] every state is bound to it.
/// It is the subject of the bearer token (the person), never an OAuth client id that several people
/// may share.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthenticatedUser(String);

impl AuthenticatedUser {
    /// The user `subject` (an empty name binds nobody and is treated as no user).
    pub fn new(subject: impl Into<String>) -> Self {
        Self(subject.into())
    }

    /// The user's name, as states are bound to it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AuthenticatedUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A user name is not a secret, but it is personal data: logs show that there is one, not whose.
        f.write_str("AuthenticatedUser(..)")
    }
}

/// Who a state belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Principal {
    /// The [`AuthenticatedUser`] in the HTTP request's extensions (the default). A request without one
    /// is neither sealed for nor opened: the client gets `-32603` and the server logs how to fix it.
    #[default]
    Authenticated,
    /// Every request is bound to this one user: a deliberate choice for a server with one user and no
    /// authentication (a local server), where "another user's state" (`wrong_user`) means nothing.
    Fixed(String),
}

/// How a refused state on `tools/call` is answered. `prompts/get` and `resources/read` always get the
/// JSON-RPC error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolRefusal {
    /// A tool error: `isError: true`, the reason's sentence as the text, the code in
    /// `_meta["io.github.mrtr-state/reason"]` (the default).
    #[default]
    ToolError,
    /// A JSON-RPC error `-32602` with the reason's sentence and `data: {"reason": <code>}`.
    JsonRpc,
}

#[derive(Clone, Debug)]
pub(crate) enum SingleUse {
    None,
    All,
    Targets(HashSet<String>),
}

pub(crate) struct Config {
    pub(crate) sealer: Arc<StateSealer>,
    pub(crate) principal: Principal,
    pub(crate) tool_refusal: ToolRefusal,
    pub(crate) single_use: SingleUse,
    pub(crate) max_body_bytes: usize,
    pub(crate) require_arguments: bool,
}

impl Config {
    /// Whether a state presented on `target` is redeemed once.
    pub(crate) fn is_single_use(&self, target: &Target) -> bool {
        match &self.single_use {
            SingleUse::None => false,
            SingleUse::All => true,
            SingleUse::Targets(targets) => targets.contains(&target.audience()),
        }
    }
}

/// The boundary: one sealer, one principal rule, one refusal form, one single-use set, for one server.
///
/// Make the two pieces from it: [`StateBoundary::layer`] in front of the Streamable HTTP service and
/// [`StateBoundary::handler`] around the server's handler. Cloning it is cheap and shares everything.
#[derive(Clone)]
pub struct StateBoundary {
    pub(crate) config: Arc<Config>,
}

impl fmt::Debug for StateBoundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateBoundary")
            .field("principal", &self.config.principal)
            .field("tool_refusal", &self.config.tool_refusal)
            .field("single_use", &self.config.single_use)
            .field("max_body_bytes", &self.config.max_body_bytes)
            .field("require_arguments", &self.config.require_arguments)
            .finish_non_exhaustive()
    }
}

impl StateBoundary {
    /// A boundary that seals and opens with `sealer` (its issuer, keys, lifetime and replay store),
    /// binding states to the [`AuthenticatedUser`], refusing on `tools/call` with a tool error, and
    /// with no single-use target, requiring the argument binding whatever the sealer's own setting:
    /// a `tools/call` or `prompts/get` state without `args_sha256` is refused `wrong_request`
    /// (profile 5, step 19), as the other languages' boundaries do by default. Every state this
    /// boundary seals carries the binding.
    pub fn new(sealer: Arc<StateSealer>) -> Self {
        Self {
            config: Arc::new(Config {
                sealer,
                principal: Principal::Authenticated,
                tool_refusal: ToolRefusal::ToolError,
                single_use: SingleUse::None,
                max_body_bytes: DEFAULT_MAX_BODY_BYTES,
                require_arguments: true,
            }),
        }
    }

    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let old = &self.config;
        let mut config = Config {
            sealer: Arc::clone(&old.sealer),
            principal: old.principal.clone(),
            tool_refusal: old.tool_refusal,
            single_use: old.single_use.clone(),
            max_body_bytes: old.max_body_bytes,
            require_arguments: old.require_arguments,
        };
        change(&mut config);
        Self {
            config: Arc::new(config),
        }
    }

    /// Who states belong to (default: [`Principal::Authenticated`]).
    pub fn principal(self, principal: Principal) -> Self {
        self.with(|config| config.principal = principal)
    }

    /// How a refusal on `tools/call` is answered (default: [`ToolRefusal::ToolError`]).
    pub fn tool_refusal(self, tool_refusal: ToolRefusal) -> Self {
        self.with(|config| config.tool_refusal = tool_refusal)
    }

    /// The targets whose states are redeemed once, when they are opened, before the handler runs.
    ///
    /// Give the target whose last round acts (a confirmed delete, a booking): its asking rounds are
    /// redeemed too. The sealer needs a replay store (`StateSealerBuilder::replay_store`), or every
    /// such state is refused `store_unavailable` (fail closed).
    pub fn single_use(self, targets: impl IntoIterator<Item = Target>) -> Self {
        let targets: HashSet<String> = targets
            .into_iter()
            .map(|target| target.audience())
            .collect();
        self.with(|config| config.single_use = SingleUse::Targets(targets))
    }

    /// Redeem every state once.
    pub fn single_use_all(self) -> Self {
        self.with(|config| config.single_use = SingleUse::All)
    }

    /// The largest request body [`StateLayer`] reads (default 4 MiB); a larger one is answered `413`.
    pub fn max_body_bytes(self, bytes: usize) -> Self {
        self.with(|config| config.max_body_bytes = bytes)
    }

    /// Whether a `tools/call` or `prompts/get` state must carry the argument binding (default
    /// `true`). Turn it off only to accept states minted by a server that does not bind arguments.
    pub fn require_arguments(self, require: bool) -> Self {
        self.with(|config| config.require_arguments = require)
    }

    /// The tower layer to put in front of rmcp's `StreamableHttpService`.
    pub fn layer(&self) -> StateLayer {
        StateLayer {
            config: Arc::clone(&self.config),
        }
    }

    /// The server's handler, wrapped: refusals answered, `InputRequiredResult` states sealed.
    pub fn handler<H: ServerHandler>(&self, inner: H) -> StateHandler<H> {
        StateHandler {
            inner,
            config: Arc::clone(&self.config),
        }
    }
}
