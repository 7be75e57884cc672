//! wavejit IR
