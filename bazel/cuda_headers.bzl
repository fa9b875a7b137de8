"""A repository of the CUDA toolkit's host headers (/usr/local/cuda/include,
without CCCL), so host-compiled sources can include cuda_runtime.h,
cublas_v2.h and nccl.h. Where the toolkit is absent the library is empty
(the CUDA targets are skipped there anyway, see cuda.bzl)."""

CUDA_INCLUDE = "/usr/local/cuda/include"

def _cuda_headers_impl(ctx):
    include = ctx.path(CUDA_INCLUDE)
    if include.exists:
        ctx.symlink(include, "include")
        hdrs = 'glob(["include/**"], exclude = ["include/cccl/**"])'
    else:
        hdrs = "[]"
    ctx.file("BUILD.bazel", """cc_library(
    name = "headers",
    hdrs = {hdrs},
    includes = ["include"],
    visibility = ["//visibility:public"],
)
""".format(hdrs = hdrs))

cuda_headers = repository_rule(
    implementation = _cuda_headers_impl,
    local = True,
)
