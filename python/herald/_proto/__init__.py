"""Protobuf and gRPC modules generated from proto/ at build time."""

# From a build tree they are in bazel-bin/python/herald/_proto.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
