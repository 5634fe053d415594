//! What a token is bound to: the target (`aud`, profile 3.5), the argument digest (RFC 8785,
//! profile 3.4) and the request binding that joins them.

mod canonical;
mod request;
mod target;

pub use canonical::{Unbindable, arguments_digest, canonical_arguments, canonicalize};
pub use request::Binding;
pub use target::Target;
