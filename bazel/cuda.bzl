"""nvcc-based CUDA rules. CUDA code builds only under --config=cuda.

Without --config=cuda the targets are marked incompatible, so `bazel build //...`
skips them on machines that have no CUDA toolkit.
"""

load("//bazel:herald.bzl", "HERALD_COPTS")

NVCC = "/usr/local/cuda/bin/nvcc"

# Hopper (H100/H200) plus PTX for newer devices.
NVCC_FLAGS = "-std=c++17 -O3 -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"

def cuda_compatible():
    return select({
        "//bazel:cuda_enabled": [],
        "//conditions:default": ["//bazel:incompatible"],
    })

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], host_copts = [], nvcc_hdrs = [], visibility = None, **kwargs):
    """A cc_library whose .cu sources are compiled by nvcc.

    Args:
      name: library name.
      srcs: .cu files (and .cc/.h compiled by the host compiler).
      hdrs: public headers (.h/.cuh).
      deps: cc deps (headers of these are visible to nvcc via -I.).
      copts: extra nvcc flags.
      host_copts: extra flags of the host compiler for the .cc sources (after
        HERALD_COPTS: warnings are errors there too)
        (they see the toolkit's headers through @cuda_headers).
      nvcc_hdrs: headers of other packages the .cu sources include (nvcc
        sees only the files its rule lists; export them there).
      visibility: visibility.
    """
    cu_srcs = [s for s in srcs if s.endswith(".cu")]
    cc_srcs = [s for s in srcs if not s.endswith(".cu")]
    objs = []
    for src in cu_srcs:
        obj = name + "_" + src[:-len(".cu")].replace("/", "_") + ".o"
        native.genrule(
            name = obj + "_nvcc",
            srcs = [src] + hdrs + nvcc_hdrs + [s for s in srcs if s.endswith(".cuh")],
            outs = [obj],
            cmd = "%s %s %s -I. -I$(GENDIR) -c $(location %s) -o $@" % (NVCC, NVCC_FLAGS, " ".join(copts), src),
            target_compatible_with = cuda_compatible(),
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = cc_srcs + objs,
        hdrs = hdrs,
        copts = HERALD_COPTS + host_copts,
        deps = deps + ["//third_party:cuda", "@cuda_headers//:headers"],
        target_compatible_with = cuda_compatible(),
        visibility = visibility,
        **kwargs
    )
