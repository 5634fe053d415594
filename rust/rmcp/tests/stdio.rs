//! The boundary over stdio: rmcp serving a tool through `StateBoundary::stdio` on an in-memory pipe,
//! driven by raw JSON-RPC lines as a stdio client writes them.

use std::sync::Arc;

use mrtr_state::Target;
use mrtr_state_rmcp::{REASON_META_KEY, StateBoundary, verified_state};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequiredResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

mod support;

#[derive(Clone)]
struct Deployer;

impl ServerHandler for Deployer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match verified_state(&context) {
            Some(state) => Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                "Deployed to {}.",
                state["env"].as_str().unwrap_or("?")
            ))])
            .into()),
            None => Ok(InputRequiredResult::from_request_state(
                json!({"env": "staging"}).to_string(),
            )
            .into()),
        }
    }
}

fn call(id: u64, state: Option<Value>) -> String {
    let mut params = json!({
        "name": "deploy",
        "arguments": {"env": "staging"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    if let Some(state) = state {
        params["requestState"] = state;
    }
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    format!("{request}\n")
}

#[tokio::test]
async fn a_state_is_sealed_opened_and_refused_over_stdio() {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let boundary =
        StateBoundary::new(Arc::new(support::sealer())).single_use([Target::Tool("deploy".into())]);
    let transport = boundary.stdio("alice", server_read, server_write);
    let handler = boundary.handler(Deployer);
    let serving =
        tokio::spawn(async move { handler.serve(transport).await.unwrap().waiting().await });
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut ask = async |line: String| -> Value {
        client_write.write_all(line.as_bytes()).await.unwrap();
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap()
    };

    let first = ask(call(1, None)).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let token = first["result"]["requestState"].as_str().unwrap().to_owned();
    assert_eq!(
        token.split('.').count(),
        3,
        "a compact JWS, not the handler's JSON"
    );

    let not_a_string = ask(call(2, Some(json!(5)))).await;
    assert_eq!(
        not_a_string["result"]["_meta"][REASON_META_KEY], "malformed",
        "{not_a_string}"
    );
    let done = ask(call(3, Some(json!(token)))).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Deployed to staging.",
        "{done}"
    );
    let again = ask(call(4, Some(json!(token)))).await;
    assert_eq!(
        again["result"]["_meta"][REASON_META_KEY], "replayed",
        "{again}"
    );

    serving.abort();
}
