//! The reason codes and sentences against spec/reasons.json, the table every language's tests read: the
//! same codes in the same order (`Reason::ALL`), each sentence word for word, and a refusal displays it
//! after its code.

use mrtr_state::{InvalidRequestState, Reason, Value};

fn contract() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/reasons.json");
    let file: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    file["reasons"].as_array().unwrap().clone()
}

#[test]
fn the_codes_are_the_contracts_in_its_order_with_its_sentences() {
    let reasons = contract();
    assert_eq!(reasons.len(), Reason::ALL.len());
    for (entry, reason) in reasons.iter().zip(Reason::ALL) {
        assert_eq!(entry["code"], reason.as_str());
        assert_eq!(entry["sentence"], reason.message(), "{}", reason.as_str());
        assert_eq!(Reason::from_code(reason.as_str()), Some(reason));
    }
}

#[test]
fn a_refusal_displays_its_code_and_sentence() {
    for entry in contract() {
        let code = entry["code"].as_str().unwrap();
        let reason = Reason::from_code(code).unwrap();
        let sentence = entry["sentence"].as_str().unwrap();
        assert_eq!(
            InvalidRequestState::new(reason).to_string(),
            format!("invalid request state ({code}): {sentence}")
        );
    }
}
