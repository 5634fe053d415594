//! `--stdio`: the same tools over standard input and output, for one user (`--stdio-user`), through the
//! boundary's stdio transport (`StateBoundary::stdio`), which reads each line as sent, opens its state
//! with that user before rmcp decodes it, and answers refusals in the `--tool-refusal` form. There is no
//! bearer token on stdio: the one user of a local server is chosen on its command line, deliberately.

use std::process::ExitCode;

use mrtr_state_rmcp::StateBoundary;
use rmcp::{ServerHandler, ServiceExt};

/// The user of `--stdio`: `--stdio-user`, else the login name (`$USER`), as the Go example has it.
pub(crate) fn user(given: Option<String>) -> Option<String> {
    given
        .or_else(|| std::env::var("USER").ok())
        .filter(|user| !user.is_empty())
}

/// Serve `handler` (already wrapped by `boundary`) over stdio for `user` until standard input closes.
pub(crate) async fn serve<H: ServerHandler>(
    boundary: &StateBoundary,
    handler: H,
    user: &str,
    ttl: u64,
) -> ExitCode {
    eprintln!("example server: serving stdio (delete_branch, book_trip, ttl {ttl} s) for {user}");
    let transport = boundary.stdio(user, tokio::io::stdin(), tokio::io::stdout());
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        // The input closed before a first request: nothing was served, nothing went wrong.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("example server: {error}");
            return ExitCode::from(1);
        }
    };
    match running.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("example server: {error}");
            ExitCode::from(1)
        }
    }
}
