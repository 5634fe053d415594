//! [`StdioTransport`]: the boundary over stdio. It reads each line as it came off the pipe, does with it
//! what [`crate::StateLayer`] does with a Streamable HTTP body (the same code: the state is opened with
//! the request's raw target and arguments before rmcp decodes anything), and hands rmcp the message with
//! the record [`crate::StateHandler`] reads.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, GetExtensions, ServerJsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

use crate::boundary::{AuthenticatedUser, Config, StateBoundary};
use crate::layer::{Prepared, prepare};

/// The writing half, shared by rmcp's answers and the boundary's own.
type Writer<W> = Arc<Mutex<Option<W>>>;

/// An rmcp server transport over a pair of byte streams (stdin and stdout), one JSON-RPC message per
/// line as rmcp's own stdio transport frames them, with the boundary in front of the server.
///
/// Made by [`StateBoundary::stdio`]. Each line is read whole (up to the boundary's
/// [`StateBoundary::max_body_bytes`]; a longer line is dropped and logged, as rmcp drops one past its
/// limit), and a `tools/call`, `prompts/get` or `resources/read` request is read as
/// [`crate::StateLayer`] reads an HTTP body: a presented state is opened with the transport's user, the
/// request's target and its arguments as sent, before rmcp decodes it; a refusal in the JSON-RPC form,
/// and each `-32602`/`-32603` the layer answers itself, is written back here without reaching rmcp;
/// otherwise the message goes to rmcp with the record that [`crate::StateHandler`] checks and seals
/// with (in the handler's `RequestContext.extensions`, as an `http::request::Parts` made for the line,
/// which is where rmcp's Streamable HTTP server puts the HTTP request's). Lines are read in order by one
/// task, so a state is opened (and redeemed) once, whatever rmcp's loop does with the `receive` future.
///
/// A line that is not JSON is dropped unanswered (rmcp's stdio transport does the same, and the Python
/// SDK's): among them a request nested deeper than `serde_json`'s 128 levels. JSON that is no JSON-RPC
/// message is answered "Invalid request" with a null id, as rmcp answers it.
pub struct StdioTransport<W> {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    writer: Writer<W>,
}

impl<W> std::fmt::Debug for StdioTransport<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StdioTransport")
    }
}

impl StateBoundary {
    /// The transport for serving rmcp over `read` and `write` (`tokio::io::stdin()` and
    /// `tokio::io::stdout()`, or rmcp's `transport::stdio()`) with this boundary: every state opened
    /// and sealed for `user`, the one user of a stdio server (the person who started it; there is no
    /// request to authenticate). An empty `user` binds nobody: every presented state, and every state to
    /// seal, is then answered `-32603` ("no authenticated principal"). With [`crate::Principal::Fixed`]
    /// the fixed user wins, as over HTTP.
    ///
    /// Serve it as any transport: `boundary.handler(server).serve(boundary.stdio(user, stdin, stdout))`.
    /// It starts a task on the current Tokio runtime that reads `read` until its end.
    pub fn stdio<R, W>(&self, user: impl Into<String>, read: R, write: W) -> StdioTransport<W>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (sender, incoming) = mpsc::channel(16);
        let writer: Writer<W> = Arc::new(Mutex::new(Some(write)));
        tokio::spawn(read_lines(
            Arc::clone(&self.config),
            user.into(),
            BufReader::new(read),
            sender,
            Arc::clone(&writer),
        ));
        StdioTransport { incoming, writer }
    }
}

impl<W> Transport<RoleServer> for StdioTransport<W>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&writer, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Cancel-safe: a message is either still in the channel or returned.
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        let mut writer = self.writer.lock().await;
        match writer.take() {
            Some(mut write) => write.shutdown().await,
            None => Ok(()),
        }
    }
}

/// Write `line` and a newline, then flush; an error once the transport is closed.
async fn write_line<W: AsyncWrite + Unpin>(writer: &Writer<W>, line: &[u8]) -> std::io::Result<()> {
    let mut guard = writer.lock().await;
    let Some(write) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the stdio transport is closed",
        ));
    };
    let mut framed = Vec::with_capacity(line.len() + 1);
    framed.extend_from_slice(line);
    framed.push(b'\n');
    write.write_all(&framed).await?;
    write.flush().await
}

/// One line of input, read whole; `None` at the end of the input or on a read error.
enum Line {
    Message(Vec<u8>),
    TooLong,
}

async fn next_line<R: AsyncRead + Unpin>(read: &mut BufReader<R>, limit: usize) -> Option<Line> {
    let mut line = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    match (&mut *read).take(cap).read_until(b'\n', &mut line).await {
        Ok(0) => return None,
        Ok(_) => {}
        Err(error) => {
            tracing::error!("cannot read the stdio input: {error}");
            return None;
        }
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Some(Line::Message(line));
    }
    if line.len() as u64 <= limit as u64 {
        return Some(Line::Message(line)); // the last line, without a newline
    }
    // Past the limit: skip the rest of the line without keeping it.
    loop {
        let mut rest = Vec::new();
        match (&mut *read)
            .take(64 * 1024)
            .read_until(b'\n', &mut rest)
            .await
        {
            Ok(0) => return Some(Line::TooLong),
            Ok(_) if rest.last() == Some(&b'\n') => return Some(Line::TooLong),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// The task that reads the input line by line, in order: the boundary's work on each, then the message
/// to rmcp, or the boundary's own answer to the output.
async fn read_lines<R, W>(
    config: Arc<Config>,
    user: String,
    mut read: BufReader<R>,
    sender: mpsc::Sender<ClientJsonRpcMessage>,
    writer: Writer<W>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    while let Some(line) = next_line(&mut read, config.max_body_bytes).await {
        let Line::Message(line) = line else {
            tracing::error!(
                limit = config.max_body_bytes,
                "a stdio message longer than the boundary's limit was dropped"
            );
            continue;
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // The record of the line, as the HTTP request's parts carry it over Streamable HTTP.
        let (mut parts, ()) = http::Request::new(()).into_parts();
        parts
            .extensions
            .insert(AuthenticatedUser::new(user.clone()));
        let body = match prepare(&config, &mut parts, Bytes::from(line)).await {
            Prepared::Forward(body) => body,
            Prepared::Answer(answer) => {
                let json = answer
                    .headers()
                    .get(http::header::CONTENT_TYPE)
                    .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
                let Ok(collected) = answer.into_body().collect().await;
                let answer = if json {
                    collected.to_bytes().to_vec()
                } else {
                    internal_error()
                };
                if write_line(&writer, &answer).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let message = match serde_json::from_slice::<ClientJsonRpcMessage>(&body) {
            Ok(message) => message,
            Err(error) => {
                if matches!(
                    error.classify(),
                    serde_json::error::Category::Data | serde_json::error::Category::Io
                ) {
                    // JSON, but no message: rmcp's stdio transport answers it so.
                    let invalid = ServerJsonRpcMessage::error(
                        ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    let Ok(invalid) = serde_json::to_vec(&invalid) else {
                        continue;
                    };
                    if write_line(&writer, &invalid).await.is_err() {
                        return;
                    }
                } else {
                    tracing::debug!("an unparsable stdio line was dropped");
                }
                continue;
            }
        };
        let message = match message {
            ClientJsonRpcMessage::Request(mut request) => {
                request.request.extensions_mut().insert(parts);
                ClientJsonRpcMessage::Request(request)
            }
            other => other,
        };
        if sender.send(message).await.is_err() {
            return; // the transport is closed
        }
    }
}

/// A JSON-RPC internal error with a null id: the boundary could not build its answer.
fn internal_error() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#.to_vec()
}
