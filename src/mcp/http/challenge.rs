//! What a team's server (`mcp --listen --oauth-issuer`) tells a client it turns away, as the MCP
//! specification's authorization and RFC 6750 word it: where to get a token (the RFC 9728
//! metadata's URL), what is wrong with the one it sent, the scope it lacks — and which scope a
//! call needs, read from its body.

use hyper::StatusCode;

use crate::mcp::oauth::{self, Rejected, Verifier};

/// A refusal's status, `WWW-Authenticate` and body.
pub(super) struct Challenge {
    pub status: StatusCode,
    pub header: String,
    pub body: String,
}

/// The metadata's URL, as `WWW-Authenticate` points at it (RFC 9728 §3.1: the well-known path
/// before the resource's path).
pub(super) fn metadata_url(verifier: &Verifier) -> String {
    let audience = &verifier.settings().audience;
    match audience.parse::<hyper::Uri>() {
        Ok(uri) => {
            let origin = format!(
                "{}://{}",
                uri.scheme_str().unwrap_or("https"),
                uri.authority().map(|a| a.as_str()).unwrap_or_default()
            );
            let path = uri.path().trim_end_matches('/');
            format!("{origin}{}{path}", oauth::METADATA_PATH)
        }
        Err(_) => oauth::METADATA_PATH.to_string(),
    }
}

/// 401 or 403 for `rejected`: with OAuth (`verifier`), where to get a token and the least scope
/// it needs; with one token, only that one is needed.
pub(super) fn of(verifier: Option<&Verifier>, rejected: &Rejected) -> Challenge {
    let mut status = StatusCode::UNAUTHORIZED;
    let mut params = Vec::new();
    match verifier {
        Some(verifier) => {
            params.push(format!("resource_metadata=\"{}\"", metadata_url(verifier)));
        }
        None => params.push("realm=\"fluxfleet\"".to_string()),
    }
    if let Some(code) = rejected.code() {
        params.push(format!("error=\"{code}\""));
        // Our own words, never the token's: no quote or control character to escape.
        params.push(format!("error_description=\"{rejected}\""));
    }
    match rejected {
        Rejected::Scope(scope) => {
            status = StatusCode::FORBIDDEN;
            params.push(format!("scope=\"{scope}\""));
        }
        // The least a token needs here, so that a client asks for no more (the MCP
        // specification's scope selection).
        _ if verifier.is_some() => params.push(format!("scope=\"{}\"", oauth::READ)),
        _ => {}
    }
    let body = match rejected {
        Rejected::Missing => "a bearer token is needed (Authorization: Bearer …)\n".to_string(),
        other => format!("{other}\n"),
    };
    Challenge {
        status,
        header: format!("Bearer {}", params.join(", ")),
        body,
    }
}

/// The scope a JSON-RPC request needs beyond read: calling a tool that proposes needs
/// `fluxfleet:propose` (where the server proposes), one that changes clusters `fluxfleet:write`
/// (where it writes). A body that is not one request is the SDK's to refuse.
pub(super) fn scope_needed(body: &[u8], (proposes, writes): (bool, bool)) -> Option<&'static str> {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<&'a str>,
    }
    let call: Call<'_> = serde_json::from_slice(body).ok()?;
    let tool = call.params.and_then(|p| p.name);
    match (call.method, tool) {
        (Some("tools/call"), Some(name))
            if proposes && crate::mcp::proposing::TOOLS.contains(&name) =>
        {
            Some(oauth::PROPOSE)
        }
        (Some("tools/call"), Some(name)) if writes && crate::mcp::writes::TOOLS.contains(&name) => {
            Some(oauth::WRITE)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_needs_the_scope_of_the_tool_it_calls_where_the_server_serves_it() {
        let call = |name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#
            )
        };
        let suspend = call("suspend");
        assert_eq!(
            scope_needed(suspend.as_bytes(), (true, false)),
            Some(oauth::PROPOSE)
        );
        assert_eq!(
            scope_needed(suspend.as_bytes(), (false, true)),
            Some(oauth::WRITE)
        );
        assert_eq!(scope_needed(suspend.as_bytes(), (false, false)), None);
        let halt = call("halt_rollout");
        assert_eq!(
            scope_needed(halt.as_bytes(), (true, false)),
            Some(oauth::PROPOSE)
        );
        assert_eq!(scope_needed(halt.as_bytes(), (false, true)), None);
        assert_eq!(
            scope_needed(call("root_causes").as_bytes(), (true, true)),
            None
        );
        assert_eq!(scope_needed(b"not json", (true, true)), None);
    }

    #[test]
    fn with_one_token_the_challenge_names_no_metadata_and_no_scope() {
        let said = of(None, &Rejected::Missing);
        assert_eq!(said.status, StatusCode::UNAUTHORIZED);
        assert_eq!(said.header, "Bearer realm=\"fluxfleet\"");
    }
}
