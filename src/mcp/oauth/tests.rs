use super::issuer::algorithm_of;
use super::*;
use jsonwebtoken::jwk::Jwk;

fn jwk(text: &str) -> Jwk {
    serde_json::from_str(text).unwrap()
}

#[test]
fn only_asymmetric_keys_of_a_fitting_algorithm_sign_tokens() {
    let rsa = r#"{"kty":"RSA","n":"sXch","e":"AQAB"}"#;
    assert_eq!(algorithm_of(&jwk(rsa)), Some(Algorithm::RS256));
    let rsa_ps = r#"{"kty":"RSA","n":"sXch","e":"AQAB","alg":"PS384"}"#;
    assert_eq!(algorithm_of(&jwk(rsa_ps)), Some(Algorithm::PS384));
    // An RSA key that says it is for ES256, or for HMAC: not one to trust.
    let lying = r#"{"kty":"RSA","n":"sXch","e":"AQAB","alg":"ES256"}"#;
    assert_eq!(algorithm_of(&jwk(lying)), None);
    let hmac_rsa = r#"{"kty":"RSA","n":"sXch","e":"AQAB","alg":"HS256"}"#;
    assert_eq!(algorithm_of(&jwk(hmac_rsa)), None);
    // A symmetric key in a published set would let anyone who reads it sign.
    let oct = r#"{"kty":"oct","k":"c2VjcmV0","alg":"HS256"}"#;
    assert_eq!(algorithm_of(&jwk(oct)), None);
    let ec = r#"{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}"#;
    assert_eq!(algorithm_of(&jwk(ec)), Some(Algorithm::ES256));
    for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
        assert!(!asymmetric(alg), "{alg:?}");
    }
    assert!(asymmetric(Algorithm::RS256) && asymmetric(Algorithm::EdDSA));
}

#[test]
fn an_issuer_is_https_or_a_loopback_address() {
    let ok = |u: &str| secure_or_loopback(&u.parse().unwrap());
    assert!(ok("https://login.example.com/realms/team"));
    assert!(ok("http://127.0.0.1:8080"));
    assert!(ok("http://[::1]:8080"));
    assert!(ok("http://localhost:5556/dex"));
    assert!(!ok("http://login.example.com"));
    assert!(!ok("http://10.0.0.1"));
    assert!(!ok("ftp://127.0.0.1"));
}

#[test]
fn scopes_grant_each_door_and_a_refusal_says_its_code() {
    let grants = Grants::of(&[READ, PROPOSE]);
    assert!(grants.has(READ) && grants.has(PROPOSE) && !grants.has(WRITE));
    assert!(!grants.has("fluxfleet:admin"));
    assert_eq!(Rejected::Missing.code(), None);
    assert_eq!(Rejected::Expired.code(), Some("invalid_token"));
    assert_eq!(Rejected::Scope(WRITE).code(), Some("insufficient_scope"));
    assert_eq!(
        Rejected::Scope(WRITE).to_string(),
        "the token lacks fluxfleet:write"
    );
}
