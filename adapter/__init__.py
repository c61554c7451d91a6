"""adapter: normalized event stream, sessions, tracing and front ends."""
