//! mrtr-state for the official Rust MCP SDK ([`rmcp`]): every `requestState` a server sends is a token of
//! the mrtr-state profile, bound to the user, the target and the arguments of the request, and every
//! `requestState` a client sends back is verified before any handler runs.
//!
//! Two pieces, made from one [`StateBoundary`], work together:
//!
//! - [`StateLayer`], a tower layer in front of rmcp's `StreamableHttpService`. It reads each
//!   `tools/call`, `prompts/get` and `resources/read` request as it came off the wire (the raw
//!   `requestState`, `name`/`uri` and `arguments`), opens the state with the request's user, target and
//!   arguments, and hands rmcp the verified state in place of the token. It sees what rmcp's typed
//!   params cannot hold (a `requestState` that is not a string, `arguments` that are not an object), so
//!   those get the profile's answers (section 8.2), the same as the Python, TypeScript and Go adapters.
//! - [`StateHandler`], a [`rmcp::ServerHandler`] wrapper around the server's own handler. It answers a
//!   refusal the layer recorded (the handler does not run), and seals the `request_state` of every
//!   `InputRequiredResult` the handler returns. It refuses any `requestState` the layer did not verify,
//!   so a server that forgot the layer fails closed instead of trusting the client.
//!
//! ```no_run
//! # async fn example(ring: mrtr_state::Keyring, handler: impl rmcp::ServerHandler + Clone) {
//! use std::sync::Arc;
//! use mrtr_state::{StateSealer, Target};
//! use mrtr_state_rmcp::{Principal, StateBoundary};
//! use rmcp::transport::streamable_http_server::{
//!     StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
//! };
//! use tower_layer::Layer;
//!
//! let sealer = StateSealer::builder(ring)
//!     .issuer("https://tools.example.com")
//!     .require_arguments(true) // a state without the argument binding is refused, as in every language
//!     .replay_store(Arc::new(mrtr_state::MemoryReplayStore::new()))
//!     .build()
//!     .unwrap();
//! let sealer = Arc::new(sealer);
//! let boundary = StateBoundary::new(sealer)
//!     .principal(Principal::Fixed("local-user".into()))
//!     .single_use([Target::Tool("delete_branch".into())]);
//! let wrapped = boundary.handler(handler);
//! let config = StreamableHttpServerConfig::default()
//!     .with_legacy_session_mode(false)
//!     .with_json_response(true);
//! let service = StreamableHttpService::new(
//!     move || Ok(wrapped.clone()),
//!     Arc::new(NeverSessionManager::default()),
//!     config,
//! );
//! let endpoint = boundary.layer().layer(service); // a tower Service for /mcp
//! # }
//! ```
//!
//! The user comes from [`Principal`]: by default the [`AuthenticatedUser`] that the server's
//! authentication middleware put in the HTTP request's extensions. Without one, nothing is sealed or
//! opened (`-32603`, "no authenticated principal"), never bound to nobody.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod boundary;
mod handler;
mod layer;
mod request;
mod stdio;

pub use boundary::{AuthenticatedUser, Principal, REASON_META_KEY, StateBoundary, ToolRefusal};
pub use handler::{StateHandler, input_required, verified_state};
pub use layer::{StateLayer, StateService};
pub use stdio::StdioTransport;
