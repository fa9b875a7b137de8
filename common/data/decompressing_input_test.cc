#include "common/data/decompressing_input.h"

#include <zlib.h>
#include <zstd.h>

#include <string>

#include "absl/strings/match.h"
#include "common/data/criteo_tsv.h"
#include "common/data/generator.h"
#include "common/data/test_util.h"
#include "common/data/writer.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

using testing::DiffBlocks;
using testing::ReadFileOrDie;
using testing::TempDir;
using testing::WriteFile;

// One gzip member of `text`, as gzip(1) writes it.
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = text.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// One zstd frame of `text`, with its content checksum (as zstd(1) writes it).
std::string Zstd(const std::string& text) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress2(c, out.data(), out.size(), text.data(), text.size());
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  ZSTD_freeCCtx(c);
  return out;
}

// Lines long enough that the compressed data spans many read chunks.
std::string Text(int lines, int seed) {
  std::string s;
  for (int i = 0; i < lines; ++i) {
    s += std::to_string(i * 7919 + seed) + "\tvalue " + std::to_string(i % 97) + "\n";
  }
  return s;
}

// Everything `path` reads as, in reads of awkward sizes.
absl::StatusOr<std::string> ReadThrough(const std::string& path) {
  absl::StatusOr<std::unique_ptr<InputStream>> in = OpenFileInput(path);
  if (!in.ok()) return in.status();
  std::string out;
  char buf[3000];
  for (size_t round = 0;; ++round) {
    absl::StatusOr<size_t> got = (*in)->Read(buf, 1 + round * 37 % sizeof(buf));
    if (!got.ok()) return got.status();
    if (*got == 0 && round % 37 != 0) break;
    out.append(buf, *got);
  }
  return out;
}

TEST(Decompressing, GzipAndZstdFilesReadAsTheirTextWholeMembersAndFramesInTurn) {
  TempDir dir;
  const std::string a = Text(40000, 1), b = Text(3000, 2);
  WriteFile(dir.File("plain"), a + b);
  WriteFile(dir.File("two.gz"), Gzip(a) + Gzip(b));
  WriteFile(dir.File("two.zst"), Zstd(a) + Zstd(b));
  WriteFile(dir.File("tiny"), "x");
  for (const char* name : {"plain", "two.gz", "two.zst"}) {
    absl::StatusOr<std::string> got = ReadThrough(dir.File(name));
    ASSERT_TRUE(got.ok()) << name << ": " << got.status();
    EXPECT_TRUE(*got == a + b) << name << ": " << got->size() << " bytes";
  }
  EXPECT_EQ(*ReadThrough(dir.File("tiny")), "x");
}

TEST(Decompressing, TruncatedOrCorruptDataIsDataLossNamingTheFile) {
  TempDir dir;
  const std::string text = Text(20000, 3);
  const std::string gz = Gzip(text), zst = Zstd(text);
  struct Case {
    std::string name, bytes, error;
  };
  std::string flipped_gz = gz, flipped_zst = zst;
  flipped_gz[gz.size() / 2] ^= 0x55;
  flipped_zst[zst.size() / 2] ^= 0x55;
  const Case cases[] = {
      {"cut.gz", gz.substr(0, gz.size() - 9), "gzip data ends early"},
      {"cut.zst", zst.substr(0, zst.size() - 9), "zstd data ends early"},
      {"bad.gz", flipped_gz, "corrupt gzip data"},
      {"bad.zst", flipped_zst, "corrupt zstd data"},
  };
  for (const Case& c : cases) {
    WriteFile(dir.File(c.name), c.bytes);
    absl::StatusOr<std::string> got = ReadThrough(dir.File(c.name));
    ASSERT_FALSE(got.ok()) << c.name;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
    EXPECT_TRUE(absl::StrContains(got.status().message(), dir.File(c.name) + ": " + c.error))
        << got.status();
  }
}

TEST(Decompressing, ACompressedTsvReadsAndResumesAsThePlainFile) {
  TempDir dir;
  GeneratorOptions options;
  options.seed = 5;
  options.cardinality_scale = 0.001;
  SyntheticGenerator generator(options);
  SampleBlock samples(generator.schema());
  generator.Generate(0, 3000, &samples);
  auto writer = CriteoTsvWriter::Create(dir.File("plain.tsv"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write(samples).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  const std::string plain = ReadFileOrDie(dir.File("plain.tsv"));
  WriteFile(dir.File("data.tsv.gz"), Gzip(plain));
  WriteFile(dir.File("data.tsv.zst"), Zstd(plain));
  for (const char* name : {"data.tsv.gz", "data.tsv.zst"}) {
    auto open = [&] {
      absl::StatusOr<std::unique_ptr<CriteoTsvReader>> r =
          CriteoTsvReader::Open({dir.File("plain.tsv"), dir.File(name)}, ReaderOptions());
      EXPECT_TRUE(r.ok()) << r.status();
      return std::move(*r);
    };
    auto whole = open();
    SampleBlock all(whole->schema());
    while (*whole->Read(1000, &all) > 0) {
    }
    ASSERT_EQ(all.size(), 6000u) << name;
    // Resumed inside the compressed file: a fresh reader seeks there.
    auto first = open();
    SampleBlock head(first->schema());
    ASSERT_EQ(*first->Read(4321, &head), 4321u);
    absl::StatusOr<std::vector<uint64_t>> position = first->Position();
    ASSERT_TRUE(position.ok());
    auto second = open();
    ASSERT_TRUE(second->Seek(*position).ok());
    while (*second->Read(1000, &head) > 0) {
    }
    EXPECT_EQ(DiffBlocks(head, all), "") << name;
  }
}

}  // namespace
}  // namespace herald::data
