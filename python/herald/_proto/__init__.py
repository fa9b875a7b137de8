"""Protobuf and gRPC modules generated from proto/ at build time."""
