#pragma once
// Shared declarations of Herald's fuzz targets. Each target defines
// LLVMFuzzerTestOneInput and FuzzSeeds. Built normally, fuzz_driver.cc supplies
// main(): it runs the seeds and bounded random mutations of them (the smoke
// test in CI). Built with --config=fuzz (clang), libFuzzer supplies main().

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// Valid inputs the mutations start from.
std::vector<std::string> FuzzSeeds();

// Aborts with `what` when a fuzz invariant is violated (also in -c opt builds).
[[noreturn]] void FuzzFail(const std::string& what);
