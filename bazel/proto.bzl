"""Compiles .proto files with the system protoc and grpc_cpp_plugin (offline)."""

def herald_proto_library(name, srcs, deps = [], grpc = False, visibility = None):
    """C++ library generated from `srcs` (files in this package).

    Args:
      name: the cc_library name.
      srcs: .proto files of this package.
      deps: other herald_proto_library targets whose .proto files are imported.
      grpc: also generate gRPC service stubs (*.grpc.pb.{h,cc}).
      visibility: visibility of the cc_library.
    """
    outs = []
    for src in srcs:
        base = src[:-len(".proto")]
        outs += [base + ".pb.h", base + ".pb.cc"]
        if grpc:
            outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]

    dep_protos = [d + "_protos" for d in deps]
    native.filegroup(
        name = name + "_protos",
        srcs = srcs + dep_protos,
        visibility = visibility,
    )

    grpc_flags = ""
    if grpc:
        grpc_flags = "--grpc_out=$(GENDIR) --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin "
    native.genrule(
        name = name + "_gen",
        srcs = srcs + dep_protos,
        outs = outs,
        cmd = "/usr/bin/protoc -I. --cpp_out=$(GENDIR) " + grpc_flags +
              " ".join(["$(location %s)" % s for s in srcs]),
    )

    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["//third_party:protobuf"] + (["//third_party:grpc"] if grpc else []),
        visibility = visibility,
    )
