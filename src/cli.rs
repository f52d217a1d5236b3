//! The offline `robotsd eval` tool.
