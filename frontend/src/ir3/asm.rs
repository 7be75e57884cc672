//! placeholder
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("{line}:{col}: {msg}")]
    Syntax {
        line: usize,
        col: usize,
        msg: String,
    },
}
pub fn assemble_line(_text: &str) -> Result<u64, AsmError> {
    Err(AsmError::Syntax {
        line: 1,
        col: 1,
        msg: "todo".into(),
    })
}
pub fn assemble(_source: &str) -> Result<Vec<u64>, AsmError> {
    Err(AsmError::Syntax {
        line: 1,
        col: 1,
        msg: "todo".into(),
    })
}
