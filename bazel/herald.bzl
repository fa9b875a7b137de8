"""Thin wrappers over the native cc rules with Herald's defaults."""

# -Werror: a warning in the project's own files fails the build (GCC here,
# clang in --config=tsa); system headers, included as system headers, are
# outside its reach.
HERALD_COPTS = ["-Werror", "-Wno-unused-parameter"]

def herald_cc_library(name, copts = [], **kwargs):
    native.cc_library(name = name, copts = HERALD_COPTS + copts, **kwargs)

def herald_cc_binary(name, copts = [], **kwargs):
    native.cc_binary(name = name, copts = HERALD_COPTS + copts, **kwargs)

def herald_cc_test(name, copts = [], deps = [], **kwargs):
    """A gtest test beside the code; links gtest_main unless main is given."""
    native.cc_test(
        name = name,
        copts = HERALD_COPTS + copts,
        deps = deps + ["//third_party:gtest_main"],
        **kwargs
    )
